"""The transformers backend on tiny models built in the test: values against independent
computations (a naive per-token PLL, a manual causal log-likelihood), PLL read at the masked
position (the study's own script read position 1), seeded sampling, the response cache's
isolation between models and seeds, and resuming."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluator.backends.base import GenerationSettings
from evaluator.backends.hf import TransformersBackend
from evaluator.cache import CachedBackend, ResponseCache
from evaluator.errors import UnsupportedRequest
from tests import tiny_models as tm

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
        "bert2": tm.bert_mlm(base / "bert2", seed=1),
        "cls": tm.bert_classifier(base / "cls"),
        "gpt2": tm.gpt2(base / "gpt2"),
        "llama": tm.llama(base / "llama"),
        "t5": tm.t5(base / "t5"),
    }


def naive_pll(backend: TransformersBackend, text: str, read_at: str = "masked") -> float:
    tok, model = backend.tokenizer, backend.model
    ids = tok(text)["input_ids"]
    special = tok.get_special_tokens_mask(ids, already_has_special_tokens=True)
    total = 0.0
    for pos, token in enumerate(ids):
        if special[pos]:
            continue
        masked = torch.tensor([ids])
        masked[0, pos] = tok.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked).logits[0]
        where = pos if read_at == "masked" else 1
        total += float(torch.log_softmax(logits[where], -1)[token])
    return total


@pytest.mark.parametrize("name", ["bert", "xlmr"])
def test_pll_matches_the_one_token_at_a_time_definition(models: dict[str, Path], name: str) -> None:
    backend = TransformersBackend.load(str(models[name]), device="cpu")
    assert backend.identity.kind == "masked"
    ours = backend.pseudo_loglikelihood(SENTENCES)
    expected = [naive_pll(backend, s) for s in SENTENCES]
    assert ours == pytest.approx(expected, abs=1e-4)
    # reading the log-probability at position 1 (the study's script) gives other numbers
    wrong = [naive_pll(backend, s, read_at="first") for s in SENTENCES]
    assert any(abs(a - b) > 1e-3 for a, b in zip(ours, wrong, strict=True))


def test_pll_never_masks_special_tokens_and_is_batch_independent(models: dict[str, Path]) -> None:
    backend = TransformersBackend.load(str(models["bert"]), device="cpu", batch_size=1)
    one_by_one = backend.pseudo_loglikelihood(SENTENCES)
    backend.batcher.max_batch = None
    assert backend.pseudo_loglikelihood(SENTENCES) == pytest.approx(one_by_one, abs=1e-5)
    ids = backend.tokenizer("I hate")["input_ids"]
    assert len(ids) == 4  # [CLS] I hate [SEP]: two scored tokens only
    single = backend.pseudo_loglikelihood(["I hate"])[0]
    assert single == pytest.approx(naive_pll(backend, "I hate"), abs=1e-5)


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
