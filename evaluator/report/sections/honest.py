"""The HONEST section: HONEST per attribute for marginalized vs dominant groups, per gender
variant, and the HurtLex category breakdown; Egyptian Arabic is scored with the Arabic lexicon."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from evaluator.report.document import Block, Cell, Locale, Note, Section, Table
from evaluator.report.palette import (
    STANDING_COLORS,
    VARIANT_COLORS,
    VARIANT_NAMES,
    ink,
    locale_color,
    locale_label,
    locale_order,
)
from evaluator.report.plots import BarFacet, HeatPanel, LegendItem, Series, Tick, bars, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    SectionContext,
    breakdown_table,
    by_locale,
    locale_ticks,
    run_key,
    standings,
    uncertainty,
)
from evaluator.results.base import number
from evaluator.results.honest import HonestMetrics, HonestRow

HURTLEX_NAMES: dict[str, str] = {
    "ps": "ethnic slurs",
    "rci": "locations and demonyms",
    "pa": "professions and occupations",
    "ddf": "physical disabilities and diversity",
    "ddp": "cognitive disabilities and diversity",
    "dmc": "moral and behavioural defects",
    "is": "social and economic disadvantage",
    "or": "plants",
    "an": "animals",
    "asm": "male genitalia",
    "asf": "female genitalia",
    "pr": "prostitution",
    "om": "homosexuality",
    "qas": "potentially negative connotations",
    "cds": "derogatory words",
    "re": "crime and immoral behaviour",
    "svp": "the seven deadly sins",
}
"""HurtLex categories (Bassignana et al. 2018), in the lexicon's order."""

SHORT_STANDING = {"marginalized": "marg.", "dominant": "dom."}


@dataclass
class _Parts:
    """What the section's pieces share: the run's metrics, its locales in order and the plot key."""

    metrics: HonestMetrics
    locales: list[str]
    key: str
    ctx: SectionContext


def honest(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(HonestMetrics)
    parts = _Parts(
        metrics=metrics, locales=locale_order(metrics.per_locale), key=run_key(run, index), ctx=ctx
    )
    notes: list[Block] = [
        Note(
            "Egyptian Arabic (arz) has no HurtLex lexicon of its own: it is scored with the Arabic (AR) lexicon."
        )
        for loc in parts.locales
        if loc == "arz"
    ]
    blocks: list[Block] = [
        *_attribute_plot(parts),
        *_gender_plot(parts),
        *_category_heatmap(parts),
        _overall_table(parts),
        *_breakdowns(parts),
    ]
    completion = metrics.completion
    intro = (
        f"{'Sentence' if completion == 'sentence' else 'Word'} completions, K = {metrics.k}, "
        f"HurtLex level {metrics.level}: a completion is hurtful when it "
        + ("contains a HurtLex lemma." if completion == "sentence" else "is a HurtLex lemma.")
    )
    return Section(anchor=parts.key, title=run.label, intro=intro, blocks=notes + blocks)


def _attribute_plot(parts: _Parts) -> list[Block]:
    """HONEST per attribute, marginalized vs dominant groups, a facet per locale."""
    facets: list[BarFacet] = []
    all_standings: set[str] = set()
    for loc in parts.locales:
        table = parts.metrics.per_locale[loc].by_attribute_standing
        attributes = sorted({r.attribute for r in table})
        values: dict[str, dict[str, float | None]] = defaultdict(dict)
        for r in table:
            values[r.standing][r.attribute] = number(r.honest)
        all_standings |= set(values)
        facets.append(
            BarFacet(
                locale_label(loc),
                [Tick(a, a) for a in attributes],
                [Series(s, values[s], STANDING_COLORS.get(s, "#777777")) for s in standings(values)],
                title_color=ink(locale_color(loc)),
            )
        )
    if not any(f.ticks for f in facets):
        return []
    return [
        parts.ctx.plot(
            bars(
                facets,
                xlabel="HONEST (share of hurtful completions)",
                legend=[LegendItem(s, STANDING_COLORS.get(s, "#777777")) for s in standings(all_standings)],
            ),
            f"{parts.key}-attributes",
            "HONEST per attribute, marginalized vs dominant groups, per locale.",
        )
    ]


def _gender_plot(parts: _Parts) -> list[Block]:
    by_variant: dict[str, dict[str, float | None]] = defaultdict(dict)
    for loc, r in by_locale(parts.metrics.per_locale, parts.locales, lambda e: e.by_variant):
        by_variant[r.variant][loc] = number(r.honest)
    variants = [v for v in ("f", "m", "n") if v in by_variant]
    if not variants:
        return []
    return [
        parts.ctx.plot(
            bars(
                [
                    BarFacet(
                        "",
                        locale_ticks(parts.locales),
                        [Series(VARIANT_NAMES[v], by_variant[v], VARIANT_COLORS[v]) for v in variants],
                    )
                ],
                xlabel="HONEST",
                legend=[LegendItem(VARIANT_NAMES[v], VARIANT_COLORS[v]) for v in variants],
            ),
            f"{parts.key}-gender",
            "HONEST per gender variant of the template (female, male, non-binary/person subject).",
        )
    ]


def _category_heatmap(parts: _Parts) -> list[Block]:
    """The share of completions per HurtLex category, locale and standing."""
    shares: dict[tuple[str, str], float | None] = {}
    texts: dict[tuple[str, str], str] = {}
    columns: list[Tick] = []
    for loc in parts.locales:
        table = parts.metrics.per_locale[loc].by_category
        for name in standings(r.standing for r in table):
            columns.append(
                Tick(f"{loc}|{name}", f"{loc}\n{SHORT_STANDING.get(name, name)}", ink(locale_color(loc)))
            )
        for r in table:
            share = number(r.share)
            shares[(r.category, f"{loc}|{r.standing}")] = share
            texts[(r.category, f"{loc}|{r.standing}")] = f"{share:.2f}" if share else ""
    if not columns:
        return []
    top = max([v for v in shares.values() if v is not None] + [0.01])
    return [
        parts.ctx.plot(
            heatmap(
                [
                    HeatPanel(
                        "",
                        [Tick(c, f"{c} — {name}") for c, name in HURTLEX_NAMES.items()],
                        columns,
                        shares,
                        texts,
                    )
                ],
                colorbar="share of completions",
                vmin=0.0,
                vmax=top,
                cmap="Reds",
            ),
            f"{parts.key}-hurtlex",
            "HurtLex category breakdown: share of completions with a lemma of each category, per "
            "locale and standing (marg. = marginalized, dom. = dominant; empty: 0). A lemma with two "
            "categories counts in both.",
        )
    ]


def _overall_table(parts: _Parts) -> Table:
    rows: list[list[Cell]] = []
    for loc in parts.locales:
        entry = parts.metrics.per_locale[loc]
        overall = entry.by_locale[0] if entry.by_locale else None
        note = entry.note or ("scored with the Arabic HurtLex lexicon" if loc == "arz" else "")
        rows.append(
            [
                Locale(loc),
                entry.hurtlex or "—",
                *(_scores(overall) if overall else [None] * 3 + uncertainty(None, None, None)),
                note or "",
            ]
        )
    return Table(
        "HONEST per locale",
        ["locale", "lexicon", "completions", "hurtful", "HONEST", "templates", "95% CI", "note"],
        rows,
        note="95% CI: seeded bootstrap over templates (all variants and groups of a template together).",
    )


def _scores(r: HonestRow) -> list[Cell]:
    return [
        r.n_completions,
        r.n_hurtful,
        number(r.honest),
        *uncertainty(r.n_units, r.honest_ci_low, r.honest_ci_high),
    ]


def _breakdowns(parts: _Parts) -> list[Block]:
    per_locale, locales = parts.metrics.per_locale, parts.locales
    totals = ["completions", "hurtful", "HONEST", "templates", "95% CI"]
    categories: list[list[Cell]] = [
        [
            Locale(loc),
            r.standing,
            r.category,
            HURTLEX_NAMES.get(r.category, ""),
            r.n_with_category,
            number(r.share),
        ]
        for loc, r in by_locale(per_locale, locales, lambda e: e.by_category)
        if (number(r.share) or 0) > 0
    ]
    return [
        breakdown_table(
            "HONEST by standing",
            ["locale", "standing", *totals],
            by_locale(per_locale, locales, lambda e: e.by_standing),
            lambda r: [r.standing, *_scores(r)],
        ),
        breakdown_table(
            "HONEST by gender variant",
            ["locale", "variant", *totals],
            by_locale(per_locale, locales, lambda e: e.by_variant),
            lambda r: [VARIANT_NAMES.get(r.variant, r.variant), *_scores(r)],
        ),
        breakdown_table(
            "HONEST by attribute and standing",
            ["locale", "attribute", "standing", *totals],
            by_locale(per_locale, locales, lambda e: e.by_attribute_standing),
            lambda r: [r.attribute, r.standing, *_scores(r)],
        ),
        Table(
            "HurtLex categories found",
            ["locale", "standing", "category", "meaning", "completions", "share"],
            categories,
            note="Categories with no hurtful completion are left out.",
        ),
        breakdown_table(
            "HONEST by group",
            ["locale", "group", *totals],
            by_locale(per_locale, locales, lambda e: e.by_group),
            lambda r: [r.group, *_scores(r)],
            collapsed=True,
        ),
    ]
