"""`catalog validate`: render every template × group × variant × locale and report every
problem at once. Rendering is the check (a template that cannot render is found here, not
in a release build), plus the pair check on what was rendered (sos twins differ only in their
declared span, toolkit.render.pairs), the store records that no longer belong to any segment and
the evaluation lexicons (answers, prompts) every release carries."""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.catalog.evaluation_lexicons import lexicon_problems
from toolkit.catalog.loader import Catalog
from toolkit.core.errors import PolyprobeError, Problem, ordered
from toolkit.core.progress import Step
from toolkit.render.pairs import pair_problems
from toolkit.render.renderer import render


@dataclass
class Validation:
    """What `catalog validate` found: every problem, and how many rows each suite and locale renders."""

    problems: list[Problem] = field(default_factory=list)
    rows: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Nothing was found wrong."""
        return not self.problems


def _render_failure(suite: str, locale: str, exc: Exception) -> Problem:
    """A suite and locale that could not be rendered at all, as a problem beside the others."""
    first = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, PolyprobeError):
        return Problem(f"templates/{suite}/", suite, "", f"cannot be rendered: {first}", locale)
    return Problem(
        f"templates/{suite}/",
        suite,
        "",
        f"rendering failed ({type(exc).__name__}: {first}); please report this as a bug, with the problems listed here",
        locale,
    )


def validate(catalog: Catalog, progress: Step | None = None) -> Validation:
    """Render every suite in every locale at the lowest status (drafts included) and gather every
    problem: the renders', the pair check's, orphaned store records and the pinned lexicons'.
    A render that crashes is reported as a problem beside the others, never hides them."""
    result = Validation()
    problems = list(catalog.problems)
    jobs = [(s, loc) for s in catalog.suites.values() for loc in s.spec.locales if loc in catalog.locales]
    for done, (suite, locale) in enumerate(jobs):
        if progress:
            progress(f"validating {suite.id} {locale}", done, len(jobs))
        try:
            rendered = render(catalog, suite.id, locale, min_status="draft")
        except Exception as exc:  # a crash must not hide the located problems found so far
            problems.append(_render_failure(suite.id, locale, exc))
            continue
        problems.extend(rendered.problems)
        problems.extend(pair_problems(catalog, suite, locale, rendered.frame))
        result.rows[(suite.id, locale)] = rendered.frame.height
        if not catalog.locales[locale].translated:
            continue
        store = catalog.store(suite.id, locale)
        rel = catalog.project.rel(store.path)
        for segment in store.records:
            if segment not in suite.segments:
                problems.append(
                    Problem(
                        rel,
                        segment,
                        "segment",
                        "no template variant has this segment id (orphan)",
                        locale,
                        cause=suite.cause_of_orphan(segment),
                    )
                )
    problems += lexicon_problems(catalog.project, catalog.locales.codes)
    result.problems = ordered([*problems, *catalog.problems])
    return result
