"""`polyprobe review push`: review batches into Label Studio, one project per locale and suite.

Push is idempotent: a segment already in its project with the same source hash is not pushed
again (a stale one, with a new source hash, is a new task). Tasks of an earlier interface are
brought up to the current one, machine translations that only need rewording go first, and
tasks whose English changed since push are marked outdated (toolkit/review/outdated.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment
from toolkit.core.errors import InputError
from toolkit.review.examples import Examples
from toolkit.review.labelstudio import (
    INTERFACE_VERSION,
    Client,
    ProjectSetup,
    label_config,
    project_title,
)
from toolkit.review.outdated import is_outdated, mark_outdated
from toolkit.review.policy import ReviewPolicy
from toolkit.review.task import (
    HIDDEN_COLUMNS,
    VIEW_TITLE,
    guidelines_markdown,
    instructions_html,
    task_data,
)
from toolkit.store.model import Translation
from toolkit.store.rules import needs_rewording, state


@dataclass
class PushReport:
    """What one push did: the project, the segments pushed, those already there, and the settings,
    task interfaces and outdated tasks brought up to date."""

    project: int
    pushed: list[str] = field(default_factory=list)
    already: int = 0
    settings_changed: list[str] = field(default_factory=list)
    """Project settings brought up to date (all of them for a new project)."""
    reviewers: int = 0
    upgraded: int = 0
    """Tasks of an earlier interface whose data was brought up to the current one."""
    outdated: int = 0
    """Tasks made for an English source that changed since, marked now (a notice, and out of
    the label stream)."""


def reviewers_needed(policy: ReviewPolicy) -> int:
    """Annotations per task the label stream must collect so the policy can reach any decision."""
    return max(policy.reviewed_after, policy.approved_after, policy.rejected_after)


def project_setup(catalog: Catalog, locale: str, policy: ReviewPolicy) -> ProjectSetup:
    """The Label Studio project's settings for a locale: the labelling interface (right-to-left
    where the locale is), the guidelines, and the reviewers each task collects."""
    loc = catalog.locales[locale]
    guidelines = guidelines_markdown(catalog.project)
    return ProjectSetup(
        label_config=label_config(loc.name, loc.direction == "rtl", guidelines),
        instructions=instructions_html(guidelines),
        reviewers=reviewers_needed(policy),
    )


def push(
    client: Client,
    catalog: Catalog,
    policy: ReviewPolicy,
    locale: str,
    suite_id: str,
    statuses: list[str],
    limit: int | None,
) -> PushReport:
    """Push the segments of one suite in the given statuses to their review project, at most
    ``limit`` new tasks (see the module docstring)."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    if catalog.locales[locale].published_only:
        raise InputError(f"{locale} is a published-only locale: it has no translations to review")
    project, changed = client.project(project_title(locale, suite_id), project_setup(catalog, locale, policy))
    report = PushReport(project=project, settings_changed=changed, reviewers=reviewers_needed(policy))
    client.ensure_view(project, VIEW_TITLE, HIDDEN_COLUMNS)
    present = client.tasks(project)
    existing = {(t.data.get("segment"), t.data.get("source_sha")) for t in present}
    records = catalog.store(suite_id, locale).records
    examples = Examples(catalog, suite_id, locale)
    for task in present:
        upgraded = _upgrade(task.data, suite.segments.get(str(task.data.get("segment"))), examples)
        if upgraded is not None:
            client.update_task_data(task.id, upgraded)
            task.data = upgraded
            report.upgraded += 1
    tasks: list[dict[str, Any]] = []
    # machine translations that only need rewording (a slot the suite cannot use where it is) first
    ordered = sorted(suite.segments.values(), key=lambda seg: not needs_rewording(records.get(seg.id)))
    for segment in ordered:
        rec = records.get(segment.id)
        if rec is None or state(rec, segment.source_sha) not in statuses:
            continue
        if (segment.id, segment.source_sha) in existing:
            report.already += 1
            continue
        if limit is not None and len(tasks) >= limit:
            break
        tasks.append(
            task_data(
                segment=segment.id,
                source_sha=segment.source_sha,
                english=segment.source,
                draft=rec.text,
                status=rec.status,
                origin=rec.origin,
                examples=_needs_edit_reason(rec) or "\n".join(examples(segment, rec.text)) or "(no examples)",
                about_text=examples.about(segment),
                suite=suite_id,
                locale=locale,
            )
        )
    if tasks:
        client.import_tasks(project, tasks)
    report.pushed = [str(t["segment"]) for t in tasks]
    if any(is_outdated(t.data, suite.segments) for t in present):
        report.outdated = mark_outdated(client, suite.segments, client.tasks(project) if tasks else present)
    return report


def _upgrade(data: dict[str, Any], segment: Segment | None, examples: Examples) -> dict[str, Any] | None:
    """The data of a task pushed with an earlier interface, in the current one: the same segment,
    source hash and draft (what its annotations were made on), with the English source under a
    key Label Studio leaves alone, and the examples and explanations made again (kept as they
    were when the segment is gone from the catalog). None when the task is current."""
    if int(data.get("interface") or 1) >= INTERFACE_VERSION:
        return None
    draft = str(data.get("draft", ""))
    english = str(data.get("english") or data.get("source") or "")
    shown, about_text = str(data.get("examples", "")), ""
    if segment is not None:
        shown = "\n".join(examples(segment, draft)) or "(no examples)"
        about_text = examples.about(segment) if english == segment.source else ""
    return task_data(
        segment=str(data.get("segment", "")),
        source_sha=str(data.get("source_sha", "")),
        english=english,
        draft=draft,
        status=str(data.get("status", "")),
        origin=str(data.get("origin", "")),
        examples=shown,
        about_text=about_text,
        suite=str(data.get("suite", "")),
        locale=str(data.get("locale", "")),
        notice=str(data.get("notice", "")),
    )


def _needs_edit_reason(rec: Translation) -> str:
    """For a machine translation that needs a human edit: why, in place of the examples (its raw
    text renders nothing)."""
    if rec.status != "needs_edit":
        return ""
    note = next((e.note for e in reversed(rec.history) if e.note), None) or "no reason recorded"
    return f"Needs a human edit (machine translation could not be used as it is): {note}"
