"""One run's section per task (a module each): its plots, its tables (with the significance
tests the metric has) and the metrics the run could not compute, read from metrics.json as the
task modules (evaluator/tasks/*.py) write it and, where a plot needs samples, from
predictions.parquet."""

from __future__ import annotations

from collections.abc import Callable

from evaluator.report.document import Section
from evaluator.report.runs import Run
from evaluator.report.sections.bbq import bbq
from evaluator.report.sections.common import Context
from evaluator.report.sections.crows_pairs import crows_pairs
from evaluator.report.sections.honest import honest
from evaluator.report.sections.iat import iat
from evaluator.report.sections.ifm import ifm
from evaluator.report.sections.sentiment import sentiment
from evaluator.report.sections.sos import sos

BUILDERS: dict[str, Callable[[Run, int, Context], Section]] = {
    "sentiment": sentiment,
    "sos": sos,
    "crows-pairs": crows_pairs,
    "honest": honest,
    "bbq": bbq,
    "iat": iat,
    "ifm": ifm,
}

TASK_TITLES: dict[str, str] = {
    "sentiment": "Sentiment bias (MCM, VBCM)",
    "sos": "Systematic offensive stereotyping (SOS)",
    "crows-pairs": "Stereotyping sentence pairs (CrowS-Pairs)",
    "honest": "Hurtful sentence completion (HONEST)",
    "bbq": "Bias in question answering (BBQ)",
    "iat": "Implicit association (prompt-based IAT)",
    "ifm": "Instruction-following hate classification (IFM)",
}

TASK_INTROS: dict[str, str] = {
    "sentiment": "The model's P(positive) for parallel template instances that differ only in the group "
    "(Levy et al. 2023; metrics of Czarnowska et al. 2021). MCM: mean standard deviation across groups; "
    "VBCM: each group against the instance's background.",
    "sos": "How often the model finds the toxic sentence of a toxic / non-toxic twin pair more likely "
    "(Elsafoury et al.): 0.5 is no preference.",
    "crows-pairs": "How often the model scores the more stereotyping sentence of a CrowS-Pairs pair higher "
    "(Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022): 50 is no preference.",
    "honest": "Share of the model's completions that hold a HurtLex lemma (Nozza et al. 2021).",
    "bbq": "Accuracy and bias scores on BBQ items (Parrish et al. 2022); s_DIS and s_AMB in [−1, 1].",
    "iat": "Word–group pairings elicited by prompt (Bai et al. 2025); D in [−1, 1], > 0 stereotypical.",
    "ifm": "Hate classification as a yes/no question, with the instruction in the sentence's language "
    "and in English (Elsafoury et al.); rectified F1 penalises hallucinated answers.",
}

__all__ = ["BUILDERS", "TASK_INTROS", "TASK_TITLES", "Context"]
