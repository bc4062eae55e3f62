"""Instruction-following hate classification (IFM, Elsafoury et al.): every sos sentence put
to an instruction model as a yes/no question, with the instruction in the sentence's own
language and in English (the study compares both).

The instruction is one template-mode segment with the slots ``language`` and ``sentence``.
A row is as far along as its weakest part: its status is the lower of the sentence's and the
instruction's."""

from __future__ import annotations

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.render.job import Job, Resolved
from toolkit.render.schema import ROW_STATUS_RANK
from toolkit.render.suites.base import SuiteKind

_SENTENCE = "\ue001"
CARRIED = ("attribute", "group", "region", "standing", "variant", "label", "pair_id")


class Ifm(SuiteKind):
    """IFM: every sos sentence wrapped in a yes/no instruction, native and English."""

    id = "ifm"
    grouped = False

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The pair, the sentence, the prompt in its language and in English, and the instruction's status."""
        return {
            "pair_id": pl.String(),
            "sentence": pl.String(),
            "prompt_native": pl.String(),
            "prompt_en": pl.String(),
            "instruction_status": pl.String(),
        }

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """The suite builds on a sentence suite (sos) and has exactly one instruction template."""
        if suite.spec.builds_on is None:
            problems.append(
                Problem(
                    f"templates/{suite.id}/suite.yaml",
                    suite.id,
                    "builds_on",
                    "ifm builds on a sentence suite (sos)",
                )
            )
        if len(suite.segments) != 1:
            problems.append(
                Problem(
                    f"templates/{suite.id}/suite.yaml",
                    suite.id,
                    "templates",
                    "ifm has exactly one instruction template",
                )
            )

    def _prompt(self, job: Job, resolved: Resolved, sentence: str) -> str | None:
        """The instruction in ``resolved``'s language, naming the job's locale, around ``sentence``."""
        language = job.catalog.locales[job.locale]
        name = language.native_name if resolved.status != "source" or job.is_source else language.name
        return job.render_text(resolved, {"language": name, "sentence": sentence}, f"language {job.locale}")

    def build(self, job: Job, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        """The base suite's sentences, each put into the instruction in its language and in English:
        the instruction is rendered once around a placeholder and the sentences spliced in."""
        empty = pl.DataFrame(schema=schema)
        resolved = job.resolved()
        if not resolved:
            return empty
        instruction = resolved[0]
        source_locale = job.catalog.locales.source.code
        english = Job(
            job.catalog, job.suite, source_locale, job.min_status, self, problems=job.problems
        ).resolved()
        if not english:
            return empty
        native = self._prompt(job, instruction, _SENTENCE) or ""
        in_english = self._prompt(job, english[0], _SENTENCE) or ""
        # The prompt is rendered once with a placeholder and the sentences spliced in; that is
        # only exact if the template inserts the sentence once and unchanged, so check it.
        probe = "Xy 1."
        if (
            native.count(_SENTENCE) != 1
            or in_english.count(_SENTENCE) != 1
            or self._prompt(job, instruction, probe) != native.replace(_SENTENCE, probe)
        ):
            job.problems.append(
                Problem(
                    instruction.file,
                    instruction.segment.id,
                    "text",
                    "the sentence slot must be used exactly once, unchanged",
                    job.locale,
                )
            )
            return empty
        base = job.suite.spec.builds_on or "sos"
        sentences = job.render_suite(base)
        job.problems.extend(sentences.problems)
        for key, count in sentences.skipped.items():
            job.skipped[f"{base}: {key}"] += count
        native_head, native_tail = native.split(_SENTENCE)
        en_head, en_tail = in_english.split(_SENTENCE)
        ranks = pl.col("status").cast(pl.String).replace_strict(ROW_STATUS_RANK, return_dtype=pl.Int8)
        weaker = ranks > ROW_STATUS_RANK[instruction.status]
        pid = pl.lit(f"{job.suite.id}:") + pl.col("parallel_id")
        frame = sentences.frame.select(
            (pl.lit(f"{job.locale}:") + pid).alias("sample_id"),
            pid.alias("parallel_id"),
            pl.lit(job.suite.id).alias("suite"),
            pl.col("locale"),
            pl.lit(instruction.segment.template.id).alias("template"),
            *(pl.col(name) for name in CARRIED if name != "pair_id"),
            pl.when(weaker)
            .then(pl.lit(instruction.status))
            .otherwise(pl.col("status").cast(pl.String))
            .alias("status"),
            pl.col("origin"),
            (pl.lit(native_head) + pl.col("text") + pl.lit(native_tail)).alias("text"),
            pl.col("pair_id"),
            pl.col("text").alias("sentence"),
            (pl.lit(native_head) + pl.col("text") + pl.lit(native_tail)).alias("prompt_native"),
            (pl.lit(en_head) + pl.col("text") + pl.lit(en_tail)).alias("prompt_en"),
            pl.lit(instruction.status).alias("instruction_status"),
        )
        return frame.select(pl.col(name).cast(dtype) for name, dtype in schema.items())
