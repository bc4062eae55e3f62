"""What of polyprobe's tasks lm-evaluation-harness can compute: the exported tasks' requests,
figures and --limit units (evaluator.export.harness has their code), and what is not exported,
with the reason. The folder's README and `export lm-eval`'s refusals say it from here."""

from __future__ import annotations

REQUESTS: dict[str, str] = {
    "sos": "multiple_choice over the pair's two sentences with an empty context: each sentence's "
    "log-likelihood after the BOS token (polyprobe's `--score ll`, causal LMs)",
    "crows-pairs": "multiple_choice over the pair's two sentences with an empty context: each "
    "sentence's log-likelihood after the BOS token (polyprobe's `--score ll`, causal LMs)",
    "bbq": 'multiple_choice: log P(" " + option | prompt) for exactly the item\'s three options, the '
    "answer the likeliest (polyprobe's `--bbq-mode loglikelihood`)",
    "ifm": "generate_until, greedy: each sentence asked with the instruction in its own language "
    "(native) and in English (en), the answer read as yes / no / neither by polyprobe's parser",
    "honest": "generate_until: K completions of the text before the slot (`repeats: K`), cut at "
    "the first line break (polyprobe's sentence completions)",
}

FIGURES: dict[str, str] = {
    "sos": "sos: toxic preferred / untied pairs (paper rule) or / pairs (--original-script); ties, "
    "pairs: counts; sos_<standing>: per standing",
    "crows-pairs": "score: 100 · more-stereotyping sentence preferred / pairs; ties, pairs: counts; "
    "score_<direction>: per direction",
    "bbq": "accuracy, accuracy_ambig, accuracy_disambig, s_dis, s_amb (BBQ's bias scores, in "
    "[−1, 1]); accuracy_<category>, s_dis_<category>, s_amb_<category>",
    "ifm": "rectified_f1_<instruction>, f1_<instruction>, hallucination_rate_<instruction>, "
    "instruction native or en (never pooled)",
    "honest": "honest: hurtful completions / completions (HurtLex, sentence completions); honest_<standing>",
}

LIMIT_UNITS: dict[str, str] = {
    "sos": "1 document per pair: `--limit N` = `eval run --limit N`",
    "crows-pairs": "1 document per pair: `--limit N` = `eval run --limit N`",
    "bbq": "1 document per item, 4 per family, families balanced in the locale first: "
    "`--limit 4N` = `eval run --limit N`",
    "ifm": "1 document per sentence and instruction: 2 per pair in en, 4 elsewhere "
    "(`--limit 2N` in en, `4N` elsewhere = `eval run --limit N`)",
    "honest": "1 document per prompt: `--limit N` = `eval run --limit N`",
}

NOT_EXPORTED: dict[str, str] = {
    "sentiment": "its main mode, a sequence classifier's P(positive), is no request "
    "lm-evaluation-harness makes of a model (its hf model is a causal or seq2seq LM). The prompted "
    "mode (label-word log-likelihoods) could be a multiple-choice task whose aggregations give MCM, "
    "VBCM and the Friedman and Wilcoxon tests per locale; McNemar between locales compares two tasks "
    "and could not. Not exported",
    "sentiment-control": "like sentiment's main mode, it reads a sequence classifier's P(positive) "
    "(accuracy and F1 per locale, McNemar between locales): no request lm-evaluation-harness makes of "
    "a model. Not exported",
    "iat": "each stimulus category is asked in P seeded permutations (word order, group order and "
    "tokens, rendered in polyprobe's Jinja sandbox) and D is tested over them. As documents, a "
    "category's permutations would be cut apart by lm_eval's --limit, which counts documents, and "
    "lm-evaluation-harness has no request that keeps them together. Not exported",
}
"""polyprobe tasks with no lm-evaluation-harness export, and why."""

NOT_EXPORTED_MODES: tuple[tuple[str, str], ...] = (
    (
        "sos and crows-pairs with masked LMs",
        "pseudo-log-likelihood (one masked copy per token) and CrowS-Pairs' shared-token PLL need a "
        "masked LM's predictions at masked positions; lm-evaluation-harness's requests are causal "
        "log-likelihoods and generations",
    ),
    (
        "honest with masked LMs",
        "word completions at the mask (fill-mask) are no lm-evaluation-harness request; sentence "
        "completions (generate_until) are exported",
    ),
    (
        "sos --suite sos-study, sos --score shared",
        "the study's own sets and its shared-token score are polyprobe's (the score needs a masked LM)",
    ),
    (
        "bbq --bbq-mode generate",
        "not exported: the exported task scores each item by its three options' log-likelihoods, "
        "polyprobe's default for local models",
    ),
    (
        "uncertainty and tables",
        "bootstrap intervals, binomial tests and Holm adjustments are not computed (lm_eval's stderr "
        "column stays N/A), and per-group tables beyond the slices listed are polyprobe's report's",
    ),
)
"""Modes of exported tasks that are not exported, and why."""
