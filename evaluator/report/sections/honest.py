"""The HONEST section: HONEST per attribute for marginalized vs dominant groups, per gender
variant, and the HurtLex category breakdown; Egyptian Arabic is scored with the Arabic lexicon."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

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
    Context,
    breakdown_table,
    count,
    locale_ticks,
    num,
    rows_of,
    run_key,
    standings,
    uncertainty,
)

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


def honest(run: Run, index: int, ctx: Context) -> Section:
    per_locale: dict[str, Any] = run.metrics["per_locale"]
    locales = locale_order(per_locale)
    key = run_key(run, index)
    blocks: list[Block] = []

    facets: list[BarFacet] = []
    all_standings: set[str] = set()
    for loc in locales:
        table = rows_of(per_locale[loc].get("by_attribute_standing"))
        attributes = sorted({str(r.get("attribute")) for r in table})
        values: dict[str, dict[str, float | None]] = defaultdict(dict)
        for r in table:
            values[str(r.get("standing"))][str(r.get("attribute"))] = num(r.get("honest"))
        all_standings |= set(values)
        facets.append(
            BarFacet(
                locale_label(loc),
                [Tick(a, a) for a in attributes],
                [Series(s, values[s], STANDING_COLORS.get(s, "#777777")) for s in standings(values)],
                title_color=ink(locale_color(loc)),
            )
        )
    if any(f.ticks for f in facets):
        blocks.append(
            ctx.plot(
                bars(
                    facets,
                    xlabel="HONEST (share of hurtful completions)",
                    legend=[
                        LegendItem(s, STANDING_COLORS.get(s, "#777777")) for s in standings(all_standings)
                    ],
                ),
                f"{key}-attributes",
                "HONEST per attribute, marginalized vs dominant groups, per locale.",
            )
        )

    by_variant: dict[str, dict[str, float | None]] = defaultdict(dict)
    for loc in locales:
        for r in rows_of(per_locale[loc].get("by_variant")):
            by_variant[str(r.get("variant"))][loc] = num(r.get("honest"))
    variants = [v for v in ("f", "m", "n") if v in by_variant]
    if variants:
        blocks.append(
            ctx.plot(
                bars(
                    [
                        BarFacet(
                            "",
                            locale_ticks(locales),
                            [Series(VARIANT_NAMES[v], by_variant[v], VARIANT_COLORS[v]) for v in variants],
                        )
                    ],
                    xlabel="HONEST",
                    legend=[LegendItem(VARIANT_NAMES[v], VARIANT_COLORS[v]) for v in variants],
                ),
                f"{key}-gender",
                "HONEST per gender variant of the template (female, male, non-binary/person subject).",
            )
        )

    shares: dict[tuple[str, str], float | None] = {}
    share_texts: dict[tuple[str, str], str] = {}
    columns: list[Tick] = []
    category_rows: list[list[Cell]] = []
    for loc in locales:
        table = rows_of(per_locale[loc].get("by_category"))
        for name in standings(str(r.get("standing")) for r in table):
            columns.append(
                Tick(f"{loc}|{name}", f"{loc}\n{SHORT_STANDING.get(name, name)}", ink(locale_color(loc)))
            )
        for r in table:
            name = str(r.get("standing"))
            share = num(r.get("share"))
            shares[(str(r.get("category")), f"{loc}|{name}")] = share
            share_texts[(str(r.get("category")), f"{loc}|{name}")] = f"{share:.2f}" if share else ""
            if (num(r.get("share")) or 0) > 0:
                category_rows.append(
                    [
                        Locale(loc),
                        name,
                        str(r.get("category")),
                        HURTLEX_NAMES.get(str(r.get("category")), ""),
                        count(r.get("n_with_category")),
                        num(r.get("share")),
                    ]
                )
    if columns:
        top = max([v for v in shares.values() if v is not None] + [0.01])
        blocks.append(
            ctx.plot(
                heatmap(
                    [
                        HeatPanel(
                            "",
                            [Tick(c, f"{c} — {name}") for c, name in HURTLEX_NAMES.items()],
                            columns,
                            shares,
                            share_texts,
                        )
                    ],
                    colorbar="share of completions",
                    vmin=0.0,
                    vmax=top,
                    cmap="Reds",
                ),
                f"{key}-hurtlex",
                "HurtLex category breakdown: share of completions with a lemma of each category, per "
                "locale and standing (marg. = marginalized, dom. = dominant; empty: 0). A lemma with two "
                "categories counts in both.",
            )
        )

    overall_rows: list[list[Cell]] = []
    notes: list[Block] = []
    for loc in locales:
        entry = per_locale[loc]
        overall = (rows_of(entry.get("by_locale")) or [{}])[0]
        note = entry.get("note") or ("scored with the Arabic HurtLex lexicon" if loc == "arz" else "")
        overall_rows.append(
            [
                Locale(loc),
                str(entry.get("hurtlex") or "—"),
                count(overall.get("n_completions")),
                count(overall.get("n_hurtful")),
                num(overall.get("honest")),
                *uncertainty(overall, "honest"),
                note or "",
            ]
        )
        if loc == "arz":
            notes.append(
                Note(
                    "Egyptian Arabic (arz) has no HurtLex lexicon of its own: it is scored with the Arabic (AR) lexicon."
                )
            )
    blocks.append(
        Table(
            "HONEST per locale",
            ["locale", "lexicon", "completions", "hurtful", "HONEST", "templates", "95% CI", "note"],
            overall_rows,
            note="95% CI: seeded bootstrap over templates (all variants and groups of a template together).",
        )
    )

    def scores(r: dict[str, Any]) -> list[Cell]:
        return [
            count(r.get("n_completions")),
            count(r.get("n_hurtful")),
            num(r.get("honest")),
            *uncertainty(r, "honest"),
        ]

    totals = ["completions", "hurtful", "HONEST", "templates", "95% CI"]
    blocks.append(
        breakdown_table(
            "HONEST by standing",
            ["locale", "standing", *totals],
            per_locale,
            locales,
            "by_standing",
            lambda r: [str(r.get("standing")), *scores(r)],
        )
    )
    blocks.append(
        breakdown_table(
            "HONEST by gender variant",
            ["locale", "variant", *totals],
            per_locale,
            locales,
            "by_variant",
            lambda r: [VARIANT_NAMES.get(str(r.get("variant")), str(r.get("variant"))), *scores(r)],
        )
    )
    blocks.append(
        breakdown_table(
            "HONEST by attribute and standing",
            ["locale", "attribute", "standing", *totals],
            per_locale,
            locales,
            "by_attribute_standing",
            lambda r: [str(r.get("attribute")), str(r.get("standing")), *scores(r)],
        )
    )
    blocks.append(
        Table(
            "HurtLex categories found",
            ["locale", "standing", "category", "meaning", "completions", "share"],
            category_rows,
            note="Categories with no hurtful completion are left out.",
        )
    )
    blocks.append(
        breakdown_table(
            "HONEST by group",
            ["locale", "group", *totals],
            per_locale,
            locales,
            "by_group",
            lambda r: [str(r.get("group")), *scores(r)],
            collapsed=True,
        )
    )
    completion = run.metrics.get("completion")
    intro = (
        f"{'Sentence' if completion == 'sentence' else 'Word'} completions, K = {run.metrics.get('k')}, "
        f"HurtLex level {run.metrics.get('level')}: a completion is hurtful when it "
        + ("contains a HurtLex lemma." if completion == "sentence" else "is a HurtLex lemma.")
    )
    return Section(anchor=key, title=run.label, intro=intro, blocks=notes + blocks)
