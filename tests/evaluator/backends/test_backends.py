"""The transformers backend on tiny models built in the test: values against independent
computations (a one-pass-per-token PLL written with transformers alone, on WordPiece and
SentencePiece tokenizers and sentences with unknown tokens; a manual causal log-likelihood),
seeded sampling, the response cache's isolation between models and seeds, and resuming."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from evaluator.backends.base import GenerationSettings, PllInput
from evaluator.backends.hf import TransformersBackend
from evaluator.cache import CachedBackend, ResponseCache
from evaluator.errors import UnsupportedRequest
from tests.support import tiny_models as tm

SENTENCES = [
    "I hate Muslim women.",
    "Being a deaf person is wonderful.",
    "Die muslimische Frau ist heute glücklich.",
    "المرأة المسلمة سعيدة اليوم.",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("models")
    return {
        "bert": tm.bert_mlm(base / "bert"),
        "xlmr": tm.xlmr_mlm(base / "xlmr"),
        "xlmr_sp": tm.xlmr_sentencepiece_mlm(base / "xlmr_sp"),
        "bert2": tm.bert_mlm(base / "bert2", seed=1),
        "cls": tm.bert_classifier(base / "cls"),
        "gpt2": tm.gpt2(base / "gpt2"),
        "llama": tm.llama(base / "llama"),
        "t5": tm.t5(base / "t5"),
    }


# Sentences with words the tiny tokenizers never saw: WordPiece gives [UNK], the SentencePiece
# (Unigram) model <unk>. The old scorer skipped those tokens (it took every id of the tokenizer's
# special-id list as special, [UNK] included), so sentences with more unknown words looked likelier.
OOV_SENTENCES = [
    "I hate Ærgernis women ☃.",
    "Die Flüchtlinge sind qxzv Schmarotzer ☃ ☃.",
    "Being a ♞ person is wonderful.",
    "The Muslim woman feels happy today.",
]


def reference_pll(folder: Path, text: str) -> tuple[float, int]:
    """Salazar et al. (2020), one masked token per forward pass, written only with transformers:
    the model and tokenizer loaded from the folder, the scored positions being every token the
    tokenizer's own encoding does not mark as special. Returns (PLL, number of scored tokens)."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    encoding = tokenizer(text, return_special_tokens_mask=True)
    ids, special = encoding["input_ids"], encoding["special_tokens_mask"]
    total, scored = 0.0, 0
    for pos, token in enumerate(ids):
        if special[pos]:
            continue
        masked = torch.tensor([ids])
        masked[0, pos] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked).logits[0, pos]
        total += float(torch.log_softmax(logits, -1)[token])
        scored += 1
    return total, scored


@pytest.mark.parametrize("name", ["bert", "xlmr", "xlmr_sp"])
def test_pll_matches_one_pass_per_token_reference_with_unknown_tokens(
    models: dict[str, Path], name: str
) -> None:
    backend = TransformersBackend.load(str(models[name]), device="cpu")
    assert backend.identity.kind == "masked"
    tokenizer = backend.tokenizer
    unknown = [s for s in OOV_SENTENCES if tokenizer.unk_token_id in tokenizer(s)["input_ids"]]
    assert len(unknown) >= 3  # the case this test is about: unknown tokens in the sentence
    ours = backend.pseudo_loglikelihood(OOV_SENTENCES + SENTENCES)
    for text, value in zip(OOV_SENTENCES + SENTENCES, ours, strict=True):
        expected, scored = reference_pll(models[name], text)
        assert value == pytest.approx(expected, abs=1e-4), text
        ids = tokenizer(text)["input_ids"]
        assert scored == len(ids) - 2  # every token but the two added special tokens, [UNK] included


def test_pll_inputs_score_unknown_tokens_and_positions_can_be_chosen(models: dict[str, Path]) -> None:
    """The interface a pair-based scorer (CrowS-Pairs) builds on: the scored positions per sentence,
    and log-probabilities at any chosen positions, one mask at a time."""
    backend = TransformersBackend.load(str(models["bert"]), device="cpu")
    text = OOV_SENTENCES[1]
    (inputs,) = backend.pll_inputs([text])
    unk = backend.tokenizer.unk_token_id
    assert [inputs.ids[p] for p in inputs.positions].count(unk) == list(inputs.ids).count(unk) >= 2
    assert inputs.positions == tuple(range(1, len(inputs.ids) - 1))
    per_token = backend.masked_logprobs([inputs])[0]
    assert sum(per_token) == pytest.approx(backend.pseudo_loglikelihood([text])[0], abs=1e-5)
    chosen = PllInput(inputs.ids, inputs.positions[::2])
    assert backend.masked_logprobs([chosen])[0] == pytest.approx(per_token[::2], abs=1e-5)
    # the bug this replaced: the tokenizer's special-id list marks [UNK] as special
    old = backend.tokenizer.get_special_tokens_mask(list(inputs.ids), already_has_special_tokens=True)
    assert sum(old) > 2


def test_pll_is_batch_independent(models: dict[str, Path]) -> None:
    backend = TransformersBackend.load(str(models["bert"]), device="cpu", batch_size=1)
    one_by_one = backend.pseudo_loglikelihood(OOV_SENTENCES + SENTENCES)
    backend.batcher.max_batch = None
    assert backend.pseudo_loglikelihood(OOV_SENTENCES + SENTENCES) == pytest.approx(one_by_one, abs=1e-5)
    assert backend.pll_inputs(["I hate"])[0].positions == (1, 2)  # [CLS] I hate [SEP]


def manual_causal_ll(backend: TransformersBackend, text: str) -> float:
    ids = [backend.tokenizer.bos_token_id, *backend.tokenizer(text, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0]
    logp = torch.log_softmax(logits, -1)
    return float(sum(logp[i - 1, ids[i]] for i in range(1, len(ids))))


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_causal_sentence_loglikelihood_and_continuations(models: dict[str, Path], name: str) -> None:
    backend = TransformersBackend.load(str(models[name]), device="cpu")
    assert backend.identity.kind == "causal"
    assert backend.sentence_logprob(SENTENCES) == pytest.approx(
        [manual_causal_ll(backend, s) for s in SENTENCES], abs=1e-4
    )
    context, continuation = "The Muslim woman", " feels happy today."
    whole = manual_causal_ll(backend, context + continuation)
    ctx_ids = backend.tokenizer(context, add_special_tokens=False)["input_ids"]
    cont_ids = backend.tokenizer(continuation, add_special_tokens=False)["input_ids"]
    ids = [backend.tokenizer.bos_token_id, *ctx_ids, *cont_ids]
    with torch.no_grad():
        logp = torch.log_softmax(backend.model(input_ids=torch.tensor([ids])).logits[0], -1)
    expected = float(sum(logp[i - 1, ids[i]] for i in range(1 + len(ctx_ids), len(ids))))
    assert backend.loglikelihood([(context, continuation)])[0] == pytest.approx(expected, abs=1e-4)
    assert whole < 0


def test_classifier_probabilities_and_labels(models: dict[str, Path]) -> None:
    backend = TransformersBackend.load(str(models["cls"]), device="cpu")
    assert backend.identity.kind == "classifier" and backend.identity.labels == (
        "negative",
        "neutral",
        "positive",
    )
    probs = backend.classify(SENTENCES)
    with torch.no_grad():
        enc = backend.tokenizer(SENTENCES[0], return_tensors="pt")
        expected = torch.softmax(backend.model(**enc).logits[0], -1).tolist()
    assert probs[0] == pytest.approx(expected, abs=1e-5)
    assert all(sum(p) == pytest.approx(1.0) for p in probs)
    with pytest.raises(UnsupportedRequest, match="pseudo-log-likelihood needs a masked LM"):
        backend.pseudo_loglikelihood(SENTENCES)


def test_generation_greedy_sampled_seeded_and_seq2seq(models: dict[str, Path]) -> None:
    backend = TransformersBackend.load(str(models["llama"]), device="cpu")
    greedy = backend.generate(["The Muslim woman", "I hate"], GenerationSettings(max_new_tokens=4))
    assert [len(g) for g in greedy] == [1, 1]
    assert greedy == backend.generate(["The Muslim woman", "I hate"], GenerationSettings(max_new_tokens=4))
    sample = GenerationSettings(max_new_tokens=4, strategy="sample", num_return_sequences=3, seed=7)
    first = backend.generate(["The Muslim woman", "I hate"], sample)
    # the same seed gives the same completions, whatever the batch around the prompt
    alone = backend.generate(["I hate"], sample)
    assert first[1] == alone[0] and len(first[0]) == 3
    other_seed = backend.generate(
        ["The Muslim woman", "I hate"],
        GenerationSettings(max_new_tokens=4, strategy="sample", num_return_sequences=3, seed=8),
    )
    assert other_seed != first
    with pytest.raises(UnsupportedRequest, match="greedy decoding gives one completion"):
        backend.generate(["x"], GenerationSettings(num_return_sequences=2))
    t5 = TransformersBackend.load(str(models["t5"]), device="cpu")
    assert (
        t5.identity.kind == "seq2seq"
        and len(t5.generate(["Is it?"], GenerationSettings(max_new_tokens=3))[0]) == 1
    )
    assert t5.loglikelihood([("Is it?", "Yes")])[0] < 0


def test_fill_mask_returns_k_words(models: dict[str, Path]) -> None:
    backend = TransformersBackend.load(str(models["bert"]), device="cpu")
    words = backend.fill_mask(["The Muslim woman should work as a [M]"], 5)
    assert len(words[0]) == 5
    with pytest.raises(UnsupportedRequest, match="exactly one"):
        backend.fill_mask(["no marker"], 2)


def test_cache_isolates_models_and_seeds_and_resumes(models: dict[str, Path], tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    a = CachedBackend(TransformersBackend.load(str(models["bert"]), device="cpu"), cache)
    b = CachedBackend(TransformersBackend.load(str(models["bert2"]), device="cpu"), cache)
    first = a.pseudo_loglikelihood(SENTENCES)
    assert cache.misses == 4 and cache.hits == 0
    assert a.pseudo_loglikelihood(SENTENCES) == first and cache.hits == 4
    other = b.pseudo_loglikelihood(SENTENCES)
    assert cache.misses == 8  # another model never reads the first one's answers
    assert other != first
    llama = CachedBackend(TransformersBackend.load(str(models["llama"]), device="cpu"), cache)
    s1 = llama.generate(
        ["I hate"], GenerationSettings(max_new_tokens=3, strategy="sample", num_return_sequences=2, seed=1)
    )
    s2 = llama.generate(
        ["I hate"], GenerationSettings(max_new_tokens=3, strategy="sample", num_return_sequences=2, seed=2)
    )
    assert cache.misses == 10 and s1 != s2  # sampled outputs are cached per seed
    cache.close()
    # a new process (a resumed run) finds everything already computed
    again = ResponseCache(tmp_path / "cache.sqlite")
    resumed = CachedBackend(TransformersBackend.load(str(models["bert"]), device="cpu"), again)
    resumed.backend.pseudo_loglikelihood = None  # type: ignore[assignment,method-assign]  # would fail if called
    assert resumed.pseudo_loglikelihood(SENTENCES) == first and again.misses == 0


def test_inputs_longer_than_the_model_are_refused_before_running_or_cut_and_counted(tmp_path: Path) -> None:
    from evaluator.errors import InputTooLong

    folder = tm.bert_mlm(tmp_path / "bert8", max_positions=8)
    text = "Being a deaf person is wonderful today."
    strict = TransformersBackend.load(str(folder), device="cpu")
    assert strict.limit == 8
    with pytest.raises(InputTooLong, match=r"limit of 8 tokens; the longest is \d+ tokens"):
        strict.preflight("pseudo_loglikelihood", ["I hate", text])
    for side, kept in (("right", slice(0, 6)), ("left", slice(-6, None))):
        cut = TransformersBackend.load(str(folder), device="cpu", truncation=side)  # type: ignore[arg-type]
        assert cut.settings["truncation"] == side
        (inputs,) = cut.pll_inputs([text])
        whole = cut.tokenizer(text)["input_ids"]
        assert len(inputs.ids) == 8 and inputs.ids[0] == whole[0] and inputs.ids[-1] == whole[-1]
        assert list(inputs.ids[1:-1]) == whole[1:-1][kept] and cut.truncated == 1
    llama = TransformersBackend.load(str(tm.llama(tmp_path / "llama16", max_positions=16)), device="cpu")
    settings = GenerationSettings(max_new_tokens=10)
    with pytest.raises(InputTooLong, match=r"\+ 10 tokens to generate"):
        llama.preflight("generate", ["The Muslim woman feels happy today."], settings)
