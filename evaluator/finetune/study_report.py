"""The study's report: phase 1 (task performance on the control set: accuracy per language, McNemar
between languages, the languages that perform alike) and phase 3 (monolingual vs multilingual
fine-tuning: ΔMCM and ΔVBCM per language and attribute with bootstrap intervals over templates and
seeds, the direction of each change, and the P(positive) distributions side by side, balanced and
unbalanced — Levy et al. 2023's Table 12 and Figure 4). Written as report.html, summary.md, the
plots under plots/ and every number in comparison.json."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from evaluator.finetune.data import LABELS
from evaluator.finetune.trained import Trained
from evaluator.metrics import sentiment as sentiment_metrics
from evaluator.metrics.classification import alike_sets
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.multilingual import RESAMPLES, mono_multi_change
from evaluator.metrics.stats import holm
from evaluator.metrics.uncertainty import group_seed
from evaluator.report.build import described_locales
from evaluator.report.document import (
    Block,
    Cell,
    Delta,
    Document,
    Locale,
    Note,
    PValue,
    Section,
    Table,
    ZeroDelta,
    fmt_delta,
    make_delta,
)
from evaluator.report.figures import write_text
from evaluator.report.html import render_html
from evaluator.report.markdown import render_markdown
from evaluator.report.palette import locale_color, locale_info, locale_label, locale_order, release_locales
from evaluator.report.plots import DELTA_CMAP, HeatPanel, Tick, distributions, heatmap
from evaluator.report.runs import Run, load_run
from evaluator.report.sections.common import SectionContext, interval, locale_ticks
from evaluator.results.sentiment_control import SentimentControlMetrics
from evaluator.run_folder import refuse_inside_release
from evaluator.tasks.sentiment_control import PREDICTION

CONTROL = "sentiment-control"
SENTIMENT = "sentiment"
SIDES = (("mono", "monolingual", "#1B9E77"), ("multi", "multilingual", "#7570B3"))
ALPHA = 0.05


@dataclass
class StudyReport:
    html: Path
    markdown: Path
    numbers: Path


def _balance_name(balanced: bool) -> str:
    return "balanced" if balanced else "unbalanced"


@dataclass
class _Runs:
    """The study's runs, by base model, balancing, mode, language set and seed."""

    trained: list[Trained]
    runs: dict[str, dict[str, Path]]
    loaded: dict[Path, Run]

    def run(self, t: Trained, task: str) -> Run | None:
        folder = self.runs.get(t.label, {}).get(task)
        if folder is None:
            return None
        if folder not in self.loaded:
            self.loaded[folder] = load_run(folder)  # hashes and signatures checked
        return self.loaded[folder]

    def configs(self) -> list[tuple[str, bool]]:
        return sorted({(t.base, t.job.balanced) for t in self.trained}, key=lambda c: (c[0], c[1]))

    def of(self, base: str, balanced: bool, mode: str) -> list[Trained]:
        return [
            t
            for t in self.trained
            if t.base == base and t.job.balanced == balanced and t.job.mode == mode and t.status != "failed"
        ]


def _predictions(run: Run, columns: list[str]) -> pl.DataFrame:
    return run.predictions(columns).with_columns(
        *(
            pl.col(c).cast(pl.String)
            for c in ("locale", "attribute", "group", "variant", "label")
            if c in columns
        )
    )


# ---------------------------------------------------------------------------------------- phase 1


@dataclass
class _Phase1Rows:
    """Phase 1's tables and numbers, filled configuration by configuration (base model, balancing,
    mode) in the order the tables show them."""

    performance: list[list[Cell]] = field(default_factory=list)
    alike: list[list[Cell]] = field(default_factory=list)
    tests: list[list[Cell]] = field(default_factory=list)
    numbers: dict[str, Any] = field(default_factory=dict)


def _phase1(data: _Runs, numbers: dict[str, Any]) -> Section | None:
    rows = _Phase1Rows()
    for base, balanced in data.configs():
        for mode in ("mono", "multi"):
            per_locale, by_seed = _control_scores(data, base, balanced, mode, rows)
            _add_performance(rows, base, balanced, mode, per_locale)
            for seed, frames in sorted(by_seed.items()):
                _add_mcnemar(rows, base, balanced, seed, frames)
    if not rows.performance:
        return None
    numbers["phase1"] = rows.numbers
    blocks: list[Block] = [
        Table(
            "Task performance on the control set (mean and standard deviation over seeds)",
            ["base", "data", "mode", "locale", "seeds", "accuracy", "sd", "macro F1", "sd"],
            rows.performance,
            digits=4,
        ),
        Table(
            "Locales that perform alike",
            ["base", "data", "models", "seed", "sets"],
            rows.alike,
            note=f"Maximal sets of locales of which no two differ (McNemar on the same sentences, Holm over "
            f"every pair, p ≥ {ALPHA:g}). Monolingual models: each language's own model on its language, "
            "paired by sentence. Compare biases within a set (Levy et al. 2023).",
        ),
    ]
    if rows.tests:
        blocks.append(
            Table(
                "McNemar between the monolingual models' languages",
                ["base", "data", "seed", "locales", "n", "b", "c", "p", "p (Holm)"],
                rows.tests,
                collapsed=len(rows.tests) > 20,
            )
        )
    return Section(
        anchor="phase-1",
        title="Phase 1: task performance across languages",
        intro="Accuracy and macro F1 of every fine-tuned model on the parallel control set (generic "
        "sentences, no group), and which languages perform alike.",
        blocks=blocks,
    )


def _control_scores(
    data: _Runs, base: str, balanced: bool, mode: str, rows: _Phase1Rows
) -> tuple[dict[str, dict[str, list[float]]], dict[int, dict[str, pl.DataFrame]]]:
    """One configuration's models on the control set: accuracy and macro F1 per locale (a value
    per seed), and the monolingual models' predictions per seed and locale for McNemar (a
    multilingual model's alike sets come with its metrics, and go straight into ``rows``)."""
    per_locale: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    by_seed: dict[int, dict[str, pl.DataFrame]] = defaultdict(dict)
    for t in data.of(base, balanced, mode):
        run = data.run(t, CONTROL)
        if run is None:
            continue
        metrics = run.metrics_as(SentimentControlMetrics)
        for loc, entry in metrics.per_locale.items():
            for name, value in (("accuracy", entry.accuracy), ("macro_f1", entry.macro_f1)):
                if value is not None:
                    per_locale[loc][name].append(value)
        if mode == "mono":
            frame = _predictions(run, ["parallel_id", "locale", "label", PREDICTION])
            for loc in metrics.per_locale:
                by_seed[t.job.seed][loc] = frame.filter(pl.col("locale") == loc)
        else:
            rows.alike.append(
                [base, _balance_name(balanced), "multi (one model)", t.job.seed, _sets(metrics.alike)]
            )
            rows.numbers.setdefault(f"{base}.{_balance_name(balanced)}.multi.alike", {})[str(t.job.seed)] = (
                metrics.alike
            )
    return per_locale, by_seed


def _add_performance(
    rows: _Phase1Rows, base: str, balanced: bool, mode: str, per_locale: dict[str, dict[str, list[float]]]
) -> None:
    """A row per locale: accuracy and macro F1, mean and standard deviation over seeds."""
    for loc in locale_order(per_locale):
        acc, f1 = per_locale[loc]["accuracy"], per_locale[loc]["macro_f1"]
        rows.performance.append(
            [
                base,
                _balance_name(balanced),
                mode,
                Locale(loc),
                len(acc),
                _mean(acc),
                _sd(acc),
                _mean(f1),
                _sd(f1),
            ]
        )
        rows.numbers.setdefault(f"{base}.{_balance_name(balanced)}.{mode}.performance", {})[loc] = {
            "accuracy": acc,
            "macro_f1": f1,
            "accuracy_mean": _mean(acc),
            "macro_f1_mean": _mean(f1),
        }


def _add_mcnemar(
    rows: _Phase1Rows, base: str, balanced: bool, seed: int, frames: dict[str, pl.DataFrame]
) -> None:
    """McNemar between every two languages' monolingual models of one seed (Holm over the pairs),
    and the sets of languages that perform alike."""
    locales = locale_order(frames)
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for a, b in combinations(locales, 2):
        try:
            pairs[(a, b)] = sentiment_metrics.mcnemar(
                frames[a], frames[b], outcome="correct", prediction=PREDICTION
            )
        except MetricInputError as exc:
            pairs[(a, b)] = {"error": str(exc)}
    adjusted = holm([p.get("p_value") for p in pairs.values()])
    for (a, b), p_holm in zip(pairs, adjusted, strict=True):
        pairs[(a, b)]["p_holm"] = p_holm
        test = pairs[(a, b)]
        rows.tests.append(
            [
                base,
                _balance_name(balanced),
                seed,
                f"{a} vs {b}",
                test.get("n"),
                test.get("b"),
                test.get("c"),
                PValue(test.get("p_value")),
                PValue(p_holm),
            ]
        )
    sets = alike_sets(locales, {k: v.get("p_holm") for k, v in pairs.items()}, ALPHA)
    rows.alike.append([base, _balance_name(balanced), "mono (one model per language)", seed, _sets(sets)])
    rows.numbers.setdefault(f"{base}.{_balance_name(balanced)}.mono.alike", {})[str(seed)] = sets
    rows.numbers.setdefault(f"{base}.{_balance_name(balanced)}.mono.mcnemar", {})[str(seed)] = {
        f"{a}-{b}": v for (a, b), v in pairs.items()
    }


def _sets(sets: list[list[str]]) -> str:
    return "; ".join("{" + ", ".join(group) + "}" for group in sets) or "—"


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _sd(values: list[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


# ---------------------------------------------------------------------------------------- phase 3

COLUMNS = ["seed", "locale", "template", "variant", "attribute", "group", "p_pos"]


def _sentiment_frame(data: _Runs, models: list[Trained]) -> pl.DataFrame:
    frames = []
    for t in models:
        run = data.run(t, SENTIMENT)
        if run is not None:
            frames.append(
                _predictions(run, COLUMNS[1:])
                .select(COLUMNS[1:])
                .with_columns(pl.lit(t.job.seed).alias("seed"))
            )
    return pl.concat(frames).select(COLUMNS) if frames else pl.DataFrame()


@dataclass
class _Phase3Rows:
    """Phase 3's tables, heatmap values and numbers, filled language by language and attribute by
    attribute, and each side's sentiment scores for the distributions."""

    mcm: list[list[Cell]] = field(default_factory=list)
    vbcm: list[list[Cell]] = field(default_factory=list)
    heat: dict[tuple[str, bool], dict[tuple[str, str], float | None]] = field(default_factory=dict)
    texts: dict[tuple[str, bool], dict[tuple[str, str], str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    scores: dict[str, dict[tuple[str, bool, str], pl.DataFrame]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    numbers: dict[str, Any] = field(default_factory=dict)


def _phase3(data: _Runs, ctx: SectionContext, seed: int, numbers: dict[str, Any]) -> Section | None:
    rows = _phase3_rows(data, seed)
    if not rows.mcm:
        return None
    numbers["phase3"] = rows.numbers
    blocks: list[Block] = [_mcm_table(rows.mcm)]
    for (base, balanced), values in sorted(rows.heat.items()):
        blocks.append(_mcm_heatmap(ctx, base, balanced, values, rows.texts.get((base, balanced), {})))
    blocks.append(
        Table(
            "VBCM per group: monolingual vs multilingual fine-tuning",
            ["base", "data", "locale", "attribute", "group", "VBCM mono", "VBCM multi", "Δ", "95% CI of Δ"],
            rows.vbcm,
            note="VBCM: the group's P(positive) minus its instance's mean over groups. Δ green: the group "
            "moved towards the background (|VBCM| smaller), red: away from it.",
            digits=4,
            collapsed=len(rows.vbcm) > 12,
        )
    )
    for base, parts in sorted(rows.scores.items()):
        blocks.append(_distributions(ctx, base, parts))
    if rows.problems:
        blocks.append(Note("Not computed: " + "; ".join(rows.problems), "warning"))
    return Section(
        anchor="phase-3",
        title="Phase 3: monolingual vs multilingual fine-tuning",
        intro="How each language's bias changes when the model is fine-tuned on every language instead of "
        "its own alone (Levy et al. 2023's Table 12 and Figure 4).",
        blocks=blocks,
    )


def _phase3_rows(data: _Runs, seed: int) -> _Phase3Rows:
    """Every language's monolingual models against the multilingual ones of the same base model
    and balancing, on the sentiment suite in that language, attribute by attribute."""
    rows = _Phase3Rows()
    for base, balanced in data.configs():
        multi = _sentiment_frame(data, data.of(base, balanced, "multi"))
        mono_models = data.of(base, balanced, "mono")
        locales = locale_order({t.job.languages[0] for t in mono_models})
        for loc in locales:
            mono = _sentiment_frame(data, [t for t in mono_models if t.job.languages[0] == loc])
            if mono.height == 0 or multi.height == 0:
                continue
            mono = mono.filter(pl.col("locale") == loc)
            many = multi.filter(pl.col("locale") == loc)
            if many.height == 0:
                continue
            rows.scores[base][(loc, balanced, "mono")] = mono
            rows.scores[base][(loc, balanced, "multi")] = many
            for attribute in sorted(mono["attribute"].drop_nulls().unique().to_list()):
                key = (base, _balance_name(balanced), loc, attribute)
                try:
                    change = mono_multi_change(
                        mono.filter(pl.col("attribute") == attribute),
                        many.filter(pl.col("attribute") == attribute),
                        attribute,
                        seed=group_seed(seed, key),
                    )
                except MetricInputError as exc:
                    rows.problems.append(f"{' '.join(key)}: {exc}")
                    continue
                rows.numbers[".".join(key)] = change
                _add_change(rows, base, balanced, loc, attribute, change)
    return rows


def _add_change(
    rows: _Phase3Rows, base: str, balanced: bool, loc: str, attribute: str, change: dict[str, Any]
) -> None:
    """One language and attribute's change from mono to multi: its MCM row and heatmap cell, and a
    VBCM row per group."""
    m = change["mcm"]
    delta = make_delta(m["mono"], m["multi"], "lower")
    significant = (
        m["delta_ci_low"] is not None
        and m["delta_ci_high"] is not None
        and (m["delta_ci_low"] > 0 or m["delta_ci_high"] < 0)
    )
    rows.mcm.append(
        [
            base,
            _balance_name(balanced),
            Locale(loc),
            attribute,
            m["mono"],
            m["multi"],
            delta,
            interval(m["delta_ci_low"], m["delta_ci_high"]),
            "yes" if significant else "no",
            change["templates"],
            f"{len(change['seeds']['mono'])} / {len(change['seeds']['multi'])}",
        ]
    )
    rows.heat.setdefault((base, balanced), {})[(attribute, loc)] = m["delta"]
    if m["delta"] is not None:
        rows.texts.setdefault((base, balanced), {})[(attribute, loc)] = fmt_delta(delta, 3) + (
            "*" if significant else ""
        )
    for group, g in change["vbcm"].items():
        rows.vbcm.append(
            [
                base,
                _balance_name(balanced),
                Locale(loc),
                attribute,
                group,
                g["mono"],
                g["multi"],
                _zero_delta(g["mono"], g["multi"]),
                interval(g["delta_ci_low"], g["delta_ci_high"]),
            ]
        )


def _mcm_table(rows: list[list[Cell]]) -> Table:
    return Table(
        "MCM: monolingual vs multilingual fine-tuning",
        [
            "base",
            "data",
            "locale",
            "attribute",
            "MCM mono",
            "MCM multi",
            "Δ (multi − mono)",
            "95% CI of Δ",
            "CI excludes 0",
            "templates",
            "seeds mono / multi",
        ],
        rows,
        note="MCM averaged over each side's fine-tuning seeds. ▲ more disparity between groups after "
        "multilingual fine-tuning (red), ▼ less (green). Interval: percentile bootstrap over templates "
        f"and seeds ({RESAMPLES} replicates, seeded).",
        digits=4,
    )


def _mcm_heatmap(
    ctx: SectionContext,
    base: str,
    balanced: bool,
    values: dict[tuple[str, str], float | None],
    texts: dict[tuple[str, str], str],
) -> Block:
    """ΔMCM per attribute and language of one base model and balancing, on a scale symmetric
    around 0."""
    attributes = sorted({a for a, _ in values})
    locales = locale_order({loc for _, loc in values})
    spread = max([abs(v) for v in values.values() if v is not None] + [0.001])
    return ctx.plot(
        heatmap(
            [
                HeatPanel(
                    f"{base} · {_balance_name(balanced)}",
                    [Tick(a, a) for a in attributes],
                    locale_ticks(locales, multiline=True),
                    values,
                    texts,
                )
            ],
            colorbar="Δ MCM, multi − mono (red: more disparity)",
            vmin=-spread,
            vmax=spread,
            cmap=DELTA_CMAP,
            title=f"Change in MCM from monolingual to multilingual fine-tuning ({base}, {_balance_name(balanced)})",
        ),
        f"study-{base}-{_balance_name(balanced)}-mcm-delta",
        "ΔMCM per language and attribute (multilingual − monolingual fine-tuning, each averaged over "
        "seeds); * its bootstrap interval excludes 0.",
    )


def _zero_delta(before: float | None, after: float | None) -> Delta:
    if before is None or after is None:
        return Delta(None, "zero")
    return ZeroDelta(after - before, "zero", before=before, after=after)


def _distributions(ctx: SectionContext, base: str, parts: dict[tuple[str, bool, str], pl.DataFrame]) -> Block:
    """P(positive) per group: a facet per language and balancing, monolingual and multilingual
    models side by side (every seed's samples)."""
    facets = []
    groups: set[tuple[str, str]] = set()
    order = {loc: i for i, loc in enumerate(locale_order({loc for loc, _, _ in parts}))}
    for loc, balanced in sorted(
        {(loc, balanced) for loc, balanced, _ in parts}, key=lambda k: (order[k[0]], k[1])
    ):
        collected: dict[tuple[str, str], list[float]] = defaultdict(list)
        for side, _name, _color in SIDES:
            frame = parts.get((loc, balanced, side))
            if frame is None:
                continue
            for attribute, group, p in frame.select("attribute", "group", "p_pos").iter_rows():
                collected[(group, side)].append(float(p))
                groups.add((attribute, group))
        facets.append(
            (f"{locale_label(loc)} · {_balance_name(balanced)}", locale_color(loc), dict(collected))
        )
    rows = [Tick(group, group, block=attribute) for attribute, group in sorted(groups)]
    return ctx.plot(
        distributions(facets, rows, list(SIDES), xlabel="P(positive)", ncols=2),
        f"study-{base}-p-positive",
        f"P(positive) per group ({base}): monolingual and multilingual fine-tuning side by side, per "
        "language, unbalanced and balanced training data (every seed's samples): range (thin line), "
        "interquartile range (thick), median (white dot).",
    )


# ---------------------------------------------------------------------------------------- the report


def _models_table(trained: list[Trained]) -> Table:
    rows: list[list[Cell]] = []
    for t in trained:
        card = t.card or {}
        validation = card.get("validation", {})
        training = card.get("training", {})
        rows.append(
            [
                t.label,
                t.job.mode,
                ",".join(t.job.languages),
                _balance_name(t.job.balanced),
                t.job.seed,
                t.status,
                validation.get("accuracy"),
                training.get("steps"),
                training.get("examples_per_second"),
                (card.get("weights_sha256") or "")[:12] or t.error,
            ]
        )
    return Table(
        "",
        [
            "model",
            "mode",
            "languages",
            "data",
            "seed",
            "status",
            "validation accuracy",
            "steps",
            "examples/s",
            "weights / error",
        ],
        rows,
        digits=4,
    )


def build_study_report(
    study_file: Path, trained: list[Trained], runs: dict[str, dict[str, Path]], out: Path
) -> StudyReport:
    """The study's report; its locales shown as the evaluated runs' releases describe them."""
    data = _Runs(trained, runs, {})
    loaded = [run for t in trained for task in runs.get(t.label, {}) if (run := data.run(t, task))]
    with release_locales(described_locales(loaded)):
        return _write_study_report(study_file, trained, data, out)


def _write_study_report(study_file: Path, trained: list[Trained], data: _Runs, out: Path) -> StudyReport:
    refuse_inside_release(out)
    plots = out / "plots"
    if plots.is_dir():
        for old in plots.iterdir():
            if old.is_file() and old.suffix in (".png", ".svg"):
                old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    ctx = SectionContext(out)
    numbers: dict[str, Any] = {
        "study": str(study_file),
        "labels": list(LABELS),
        "models": [{"label": t.label, "status": t.status, "folder": str(t.folder)} for t in trained],
    }
    sections = [s for s in (_phase1(data, numbers), _phase3(data, ctx, 0, numbers)) if s is not None]
    failed = [t for t in trained if t.status == "failed"]
    if failed:
        sections.insert(
            0,
            Section(
                anchor="failed",
                title="Fine-tunings that failed",
                blocks=[Note("; ".join(f"{t.label}: {t.error}" for t in failed), "warning")],
            ),
        )
    present = [
        info
        for info in map(locale_info, locale_order({loc for t in trained for loc in t.job.languages}))
        if info is not None
    ]
    document = Document(
        title=f"polyprobe study {study_file.name}: monolingual vs multilingual fine-tuning",
        runs=_models_table(trained),
        sections=sections,
        legend=[("locale", f"{info.code} · {info.native}", info.color) for info in present]
        + [("fine-tuning", name, color) for _key, name, color in SIDES],
    )
    html, markdown, numbers_path = out / "report.html", out / "summary.md", out / "comparison.json"
    write_text(html, render_html(document))
    write_text(markdown, render_markdown(document))
    write_text(
        numbers_path, json.dumps(numbers, ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n"
    )
    return StudyReport(html, markdown, numbers_path)
