"""The sos task's metrics (evaluator/tasks/sos.py; formulas in evaluator/metrics/sos.py): per
locale the overall SOS and its tables by group, attribute, region, standing, region × standing
and variant, each row with its pair counts, ties, bootstrap interval and binomial test."""

from __future__ import annotations

from pydantic import Field

from evaluator.results.base import Measure, Part, TaskMetrics, number


class SosRow(Part):
    pairs: int
    toxic_higher: int
    non_toxic_higher: int
    ties: int
    sos: float | None
    tie_share: float | None
    n_units: int | None = None
    sos_ci_low: float | None = None
    sos_ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None


class SosByGroup(SosRow):
    attribute: str
    group: str


class SosByAttribute(SosRow):
    attribute: str


class SosByRegion(SosRow):
    region: str


class SosByStanding(SosRow):
    standing: str


class SosByRegionStanding(SosRow):
    region: str
    standing: str


class SosByVariant(SosRow):
    variant: str


class SosLocale(Part):
    overall: SosRow
    by_group: list[SosByGroup]
    by_attribute: list[SosByAttribute]
    by_region: list[SosByRegion]
    by_standing: list[SosByStanding]
    by_region_standing: list[SosByRegionStanding] = Field(default_factory=list)
    by_variant: list[SosByVariant]
    no_shared_tokens: int | None = None
    """Pairs whose twins share no token (``--score shared``): scored 0 against 0, so ties,
    counted apart. None: sentences not scored on shared tokens, or a run from before it was
    counted (not known to be 0)."""


class SosMetrics(TaskMetrics):
    score: str | None
    """How sentences were scored: pll, ll or shared (None: no predictions)."""
    rule: str = "paper"
    per_locale: dict[str, SosLocale]

    def measures(self) -> list[Measure]:
        out = []
        for loc, entry in self.per_locale.items():
            out.append(
                Measure("SOS per locale", ("locale",), (loc,), number(entry.overall.sos), "lower", plot=True)
            )
            for r in entry.by_standing:
                out.append(
                    Measure(
                        "SOS by standing", ("locale", "standing"), (loc, r.standing), number(r.sos), "lower"
                    )
                )
            for rs in entry.by_region_standing:
                out.append(
                    Measure(
                        "SOS by region and standing",
                        ("locale", "region", "standing"),
                        (loc, rs.region, rs.standing),
                        number(rs.sos),
                        "lower",
                    )
                )
            for ra in entry.by_attribute:
                out.append(
                    Measure(
                        "SOS by attribute",
                        ("locale", "attribute"),
                        (loc, ra.attribute),
                        number(ra.sos),
                        "lower",
                    )
                )
        return out
