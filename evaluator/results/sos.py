"""The sos task's metrics (evaluator/tasks/sos.py; formulas in evaluator/metrics/sos.py): per
locale the overall SOS and its tables by group, attribute, region, standing, region × standing
and variant, each row with its pair counts, ties, bootstrap interval and binomial test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from evaluator.results.base import Measure, Part, TaskMetrics, number


class SosRow(Part):
    """SOS of a set of sentence pairs: the share whose toxic sentence scores higher (ties left
    out of the denominator under the paper's rule), with the counts it rests on, its interval and
    its binomial test."""

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
    """The pairs about one group (of one attribute)."""

    attribute: str
    group: str


class SosByAttribute(SosRow):
    """The pairs about the groups of one attribute."""

    attribute: str


class SosByRegion(SosRow):
    """The pairs about the groups of one region."""

    region: str


class SosByStanding(SosRow):
    """The pairs about the groups of one standing."""

    standing: str


class SosByRegionStanding(SosRow):
    """The pairs about the groups of one standing within one region."""

    region: str
    standing: str


class SosByVariant(SosRow):
    """The pairs of one gender variant."""

    variant: str


class SosLocale(Part):
    """One locale's overall SOS and its tables."""

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
    """metrics.json of the sos task: how sentences were scored, the rule (paper or original),
    and each locale's tables."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "SOS per locale": (),
        "SOS by standing": (),
        "SOS by region and standing": (),
        "SOS by attribute": (),
    }

    score: str | None
    """How sentences were scored: pll, ll or shared (None: no predictions)."""
    rule: str = "paper"
    per_locale: dict[str, SosLocale]

    def measures(self) -> list[Measure]:
        """Each locale's SOS (plotted), and by standing, by region and standing, and by attribute."""
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
