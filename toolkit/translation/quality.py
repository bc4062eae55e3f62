"""Post-editing effort: how far reviewers moved machine drafts, per locale and suite.

For every translation that DeepL drafted and a reviewer has since passed (reviewed or
approved), the machine draft (the last `machine` event for the current source) is the
hypothesis and the reviewed text the reference. sacrebleu's chrF, BLEU and TER are computed
over those pairs, BLEU with the locale's tokenizer (zh for Chinese, intl for Arabic and
Hebrew, 13a otherwise) and TER with Asian-script support for Chinese; each score carries its
sacrebleu signature. Texts are scored as stored, template code included: a reviewer who
rewrites a slot's grammar macro did post-edit it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sacrebleu.metrics import BLEU, CHRF, TER

from toolkit.catalog.loader import Catalog
from toolkit.store.model import Event
from toolkit.store.rules import state


@dataclass(frozen=True)
class Effort:
    """How much reviewers changed DeepL's drafts of one suite in one locale: segments compared, how
    many were edited, and chrF, BLEU and TER."""

    locale: str
    suite: str
    segments: int
    edited: int
    chrf: float | None
    bleu: float | None
    ter: float | None
    signatures: dict[str, str]

    def as_dict(self) -> dict[str, object]:
        """The effort as plain data, for --json."""
        return asdict(self)


def machine_draft(record_history: tuple[Event, ...], source_sha: str) -> str | None:
    """The latest machine draft made for the current source, or None when there is none."""
    drafts = [
        e.text for e in record_history if e.event == "machine" and e.source_sha == source_sha and e.text
    ]
    return drafts[-1] if drafts else None


def post_editing(catalog: Catalog, locale: str, suite_id: str) -> Effort:
    """Score the machine drafts of one suite and locale against their reviewed or approved texts
    (the tokenizer chosen for the locale)."""
    suite = catalog.suite(suite_id)
    loc = catalog.locales[locale]
    hyps: list[str] = []
    refs: list[str] = []
    for segment in suite.segments.values():
        record = catalog.store(suite_id, locale).records.get(segment.id)
        if record is None or state(record, segment.source_sha) not in ("reviewed", "approved"):
            continue
        draft = machine_draft(record.history, segment.source_sha)
        if draft is None:
            continue
        hyps.append(draft)
        refs.append(record.text)
    if not hyps:
        return Effort(locale, suite_id, 0, 0, None, None, None, {})
    bleu = BLEU(tokenize=loc.sacrebleu_tokenizer)
    chrf = CHRF()
    ter = TER(asian_support=loc.sacrebleu_tokenizer == "zh")
    scores = {
        "chrf": chrf.corpus_score(hyps, [refs]).score,
        "bleu": bleu.corpus_score(hyps, [refs]).score,
        "ter": ter.corpus_score(hyps, [refs]).score,
    }
    return Effort(
        locale=locale,
        suite=suite_id,
        segments=len(hyps),
        edited=sum(h != r for h, r in zip(hyps, refs, strict=True)),
        chrf=round(scores["chrf"], 2),
        bleu=round(scores["bleu"], 2),
        ter=round(scores["ter"], 2),
        signatures={
            "chrf": str(chrf.get_signature()),
            "bleu": str(bleu.get_signature()),
            "ter": str(ter.get_signature()),
        },
    )
