"""Suites and their English source templates (templates/<suite>/suite.yaml and *.yaml).

A suite declares its variants, labels, slots, identity lists and locales; each template
gives one English text per variant. One template variant is one translatable segment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from toolkit.catalog.identities import VARIANTS, Taxonomy, Variant
from toolkit.catalog.locales import Locales
from toolkit.catalog.published.bbq import sample_segments as bbq_sample_segments
from toolkit.core.errors import InputError, Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import SEMVER_RE, Record, parse_record, record_name
from toolkit.core.text import text_problems
from toolkit.store.model import source_sha

TEMPLATE_ID = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"

SampleSegments = Callable[[Project, list[Problem]], list[tuple[str, str, str, str]]]
SAMPLE_SOURCES: dict[str, SampleSegments] = {"bbq": bbq_sample_segments}
"""Sample-mode suites and where their segments come from: (segment id, English text, item id,
file) of every imported sample."""


class SuiteSpec(Record):
    """A suite's suite.yaml, as written."""

    id: str = Field(pattern=TEMPLATE_ID)
    version: str
    description: str
    mode: Literal["template", "sample", "import"]
    """template: translatable templates; sample: translatable rendered samples (bbq); import: rows of
    a published dataset read as published from the user's own copy, nothing to translate."""
    variants: tuple[Variant, ...] = ()
    labels: tuple[str, ...] = ()
    slots: tuple[str, ...] = ()
    """Variables a template may use besides its locale's grammar macros."""
    identities: tuple[str, ...] = ()
    """Identity lists (paths under lexicons/) whose groups fill the ``group`` slot."""
    locales: tuple[str, ...]
    citation: tuple[str, ...] = ()
    builds_on: str | None = Field(default=None, pattern=TEMPLATE_ID)
    """Another suite whose rendered rows this one wraps (ifm puts sos sentences into prompts)."""
    lexicon: str | None = None
    """A lexicon (path under lexicons/) the suite's rows are built from (iat's stimuli)."""
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Suite-specific settings, e.g. the marker a completion slot renders as."""
    glossed: bool = False
    """Its texts are the prompts a model is asked (ifm's instruction, iat's prompt): every
    translation needs a reviewer's English gloss (back-translation) in the store, so that one
    question is checked across locales (`translations status --needs-gloss`)."""


class Template(Record):
    """One English template: a text per variant (or one text), its label, and for paired suites its twin."""

    id: str = Field(pattern=TEMPLATE_ID)
    label: str | None = None
    attributes: tuple[str, ...] = ()
    variants: dict[Variant, str] | None = None
    text: str | None = None
    pair: str | None = Field(default=None, pattern=TEMPLATE_ID)
    span: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Paired templates (sos): per locale, the words this twin may differ from its twin in (the
    toxic or non-toxic word, with what the word governs or agrees with, e.g. es "Temo a" /
    "Confío en"), one phrase per form it takes (it "disgustose", "disgustosi"). A phrase whose
    last word is written joined to the next one (a proclitic preposition: ar "أثق ب", he
    "להקשיב ל") covers only that prefix of it. `catalog lint` and `catalog validate` render both
    twins for every group and variant and report any difference outside these words."""
    note: str = ""


@dataclass(frozen=True)
class Segment:
    """One translatable unit: a template variant (template mode) or a rendered sample (sample mode)."""

    suite: str
    id: str
    template: Template
    variant: Variant | None
    source: str
    file: str

    @property
    def source_sha(self) -> str:
        """The hash that ties a translation to this exact source."""
        return source_sha(self.source)


@dataclass(frozen=True)
class Suite:
    """A loaded suite: its spec, its usable templates, their segments, and which templates and
    files could not be used."""

    spec: SuiteSpec
    templates: tuple[Template, ...]
    segments: dict[str, Segment]
    template_files: tuple[str, ...]
    left_out: dict[str, str] = field(default_factory=dict)
    """Templates with problems, by id, with their file: not rendered, and their translations
    are not orphans (their problems follow from the template's)."""
    broken_files: tuple[str, ...] = ()
    """Template files that could not be read whole: translations of templates they held look
    like orphans, which follows from the file's problem."""

    def cause_of_orphan(self, segment_id: str) -> str:
        """The file whose problem explains a store record without a segment, or ""."""
        template_id = segment_id.split(".", 1)[0]
        if template_id in self.left_out:
            return self.left_out[template_id]
        return self.broken_files[0] if self.broken_files else ""

    @property
    def id(self) -> str:
        """The suite's id (its folder's name)."""
        return self.spec.id


def segment_id(template_id: str, variant: str | None) -> str:
    """A segment's id: the template's, with the variant after a dot when it has one."""
    return template_id if variant is None else f"{template_id}.{variant}"


def load_suite(
    project: Project, suite_id: str, locales: Locales, taxonomy: Taxonomy, problems: list[Problem]
) -> Suite | None:
    """Load and check one suite folder: suite.yaml, then every template (or, in sample mode, the
    imported samples) as segments. Problems are appended, never raised; None when the suite
    cannot be used."""
    folder = project.templates / suite_id
    spec_path = folder / "suite.yaml"
    rel_spec = project.rel(spec_path)
    if not spec_path.is_file():
        problems.append(Problem(rel_spec, suite_id, "", "suite has no suite.yaml"))
        return None
    raw_spec = load_yaml_collecting(spec_path, rel_spec, problems)
    if raw_spec is None:
        return None
    spec = parse_record(SuiteSpec, raw_spec, file=rel_spec, record=suite_id, problems=problems)
    if spec is None:
        return None
    _check_spec(project, spec, suite_id, rel_spec, locales, problems)
    if spec.mode == "import":
        return Suite(spec=spec, templates=(), segments={}, template_files=())
    if spec.mode == "sample":
        return _sample_suite(project, spec, suite_id, problems)
    return _template_suite(project, spec, suite_id, rel_spec, taxonomy, problems)


def _check_spec(
    project: Project, spec: SuiteSpec, suite_id: str, rel_spec: str, locales: Locales, problems: list[Problem]
) -> None:
    if spec.id != suite_id:
        problems.append(Problem(rel_spec, suite_id, "id", f"must be the folder's name {suite_id!r}"))
    if not SEMVER_RE.match(spec.version):
        problems.append(Problem(rel_spec, suite_id, "version", "must be a semantic version like 1.0.0"))
    for code in spec.locales:
        if code not in locales:
            problems.append(Problem(rel_spec, suite_id, "locales", f"unknown locale {code!r}", code))
        elif locales[code].published_only and spec.mode == "template":
            problems.append(
                Problem(
                    rel_spec,
                    suite_id,
                    "locales",
                    f"{code!r} is published-only (no templates or translations): "
                    "only suites of published data (mode sample or import) may list it",
                    code,
                )
            )
    if not spec.locales:
        problems.append(
            Problem(rel_spec, suite_id, "locales", "lists no locales: the suite would render nothing")
        )
    if spec.lexicon is not None and not (project.lexicons / spec.lexicon).is_file():
        problems.append(Problem(rel_spec, suite_id, "lexicon", f"no lexicon lexicons/{spec.lexicon}"))
    for path in spec.identities:
        if not (project.lexicons / path).is_file():
            problems.append(Problem(rel_spec, suite_id, "identities", f"no identity list lexicons/{path}"))


def _sample_suite(project: Project, spec: SuiteSpec, suite_id: str, problems: list[Problem]) -> Suite:
    """Sample mode: one segment per rendered English sample, read from what was imported (e.g. BBQ
    items); template files are not used."""
    if suite_id not in SAMPLE_SOURCES:
        raise InputError(
            f"templates/{suite_id}/ is a sample-mode suite polyprobe has no samples for; "
            f"sample-mode suites: {', '.join(sorted(SAMPLE_SOURCES))}"
        )
    segments: dict[str, Segment] = {}
    for seg_id, text, item_id, file in SAMPLE_SOURCES[suite_id](project, problems):
        segments[seg_id] = Segment(suite_id, seg_id, Template(id=item_id, text=text), None, text, file)
    return Suite(spec=spec, templates=(), segments=dict(sorted(segments.items())), template_files=())


def _template_suite(
    project: Project,
    spec: SuiteSpec,
    suite_id: str,
    rel_spec: str,
    taxonomy: Taxonomy,
    problems: list[Problem],
) -> Suite:
    """Template mode: every template file of the suite's folder, each template checked."""
    folder = project.templates / suite_id
    templates: list[Template] = []
    files: list[str] = []
    broken: list[str] = []
    left_out: dict[str, str] = {}
    seen: dict[str, str] = {}
    segments: dict[str, Segment] = {}
    for tpl_path in sorted(folder.glob("*.yaml")):
        if tpl_path.name == "suite.yaml":
            continue
        rel = project.rel(tpl_path)
        files.append(rel)
        raw = load_yaml_collecting(tpl_path, rel, problems)
        if raw is None:
            broken.append(rel)
            continue
        items = raw.get("templates") if isinstance(raw, dict) else None
        if not isinstance(items, list) or set(raw) - {"templates"}:
            problems.append(
                Problem(
                    rel, "(file)", "templates", "a template file is a mapping with one key, templates: a list"
                )
            )
            broken.append(rel)
            continue
        if not items:
            problems.append(Problem(rel, "(file)", "templates", "has no templates: the file adds nothing"))
            continue
        for i, item in enumerate(items):
            tpl = parse_record(Template, item, file=rel, record=record_name(item, i), problems=problems)
            if tpl is None:
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    left_out.setdefault(item["id"], rel)
                continue
            if tpl.id in seen:
                problems.append(Problem(rel, tpl.id, "id", f"duplicate template id (also in {seen[tpl.id]})"))
                continue
            seen[tpl.id] = rel
            before = len(problems)
            if _check_template(tpl, spec, rel, taxonomy, problems):
                templates.append(tpl)
                for variant, text in _texts(tpl):
                    sid = segment_id(tpl.id, variant)
                    segments[sid] = Segment(suite_id, sid, tpl, variant, text, rel)
            else:  # blamed on the file the template's own problems follow from, if they all do
                causes = {p.cause for p in problems[before:]}
                left_out[tpl.id] = causes.pop() if len(causes) == 1 and "" not in causes else rel
    if not files:
        problems.append(
            Problem(rel_spec, suite_id, "", f"suite has no template files (templates/{suite_id}/*.yaml)")
        )
        broken.append(rel_spec)
    templates.sort(key=lambda t: t.id)
    return Suite(
        spec=spec,
        templates=tuple(templates),
        segments=dict(sorted(segments.items())),
        template_files=tuple(files),
        left_out=left_out,
        broken_files=tuple(broken),
    )


def _texts(tpl: Template) -> list[tuple[Variant | None, str]]:
    if tpl.variants is not None:
        return [(v, tpl.variants[v]) for v in VARIANTS if v in tpl.variants]
    return [(None, tpl.text or "")]


def _check_template(
    tpl: Template, spec: SuiteSpec, rel: str, taxonomy: Taxonomy, problems: list[Problem]
) -> bool:
    ok = True

    def bad(field: str, message: str) -> None:
        nonlocal ok
        ok = False
        problems.append(Problem(rel, tpl.id, field, message))

    if spec.labels and tpl.label not in spec.labels:
        bad("label", f"unknown label {tpl.label!r}; this suite's labels: {', '.join(spec.labels)}")
    if not spec.labels and tpl.label is not None:
        bad("label", "this suite has no labels")
    for attr in tpl.attributes:
        if attr not in taxonomy.by_id:
            ok = False
            problems.append(
                Problem(
                    rel,
                    tpl.id,
                    "attributes",
                    f"unknown attribute {attr!r}; known: {', '.join(sorted(taxonomy.by_id)) or 'none'}",
                    cause=taxonomy.cause,
                )
            )
    if spec.identities and not tpl.attributes:
        bad("attributes", "list the attributes whose groups this template is filled with")
    if spec.variants:
        if tpl.variants is None or tpl.text is not None:
            bad("variants", f"give one text per variant ({', '.join(spec.variants)}), not 'text'")
        elif set(tpl.variants) != set(spec.variants):
            missing = [v for v in spec.variants if v not in tpl.variants]
            extra = sorted(set(tpl.variants) - set(spec.variants))
            detail = "; ".join(
                part
                for part in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"unknown {', '.join(extra)}" if extra else "",
                )
                if part
            )
            bad("variants", f"must be exactly {', '.join(spec.variants)} ({detail})")
    elif tpl.text is None or tpl.variants is not None:
        bad("text", "this suite has no variants: give 'text'")
    for variant, text in _texts(tpl):
        for message in text_problems(text):
            bad("text" if variant is None else f"variants.{variant}", f"text {message}")
    problems.extend(_span_problems(tpl, spec, rel))
    return ok


def _span_problems(tpl: Template, spec: SuiteSpec, rel: str) -> list[Problem]:
    """What is wrong with a template's span declaration; the template still renders (the pair
    check, not the render, reads the span)."""
    out = []
    if tpl.span and tpl.pair is None:
        out.append(Problem(rel, tpl.id, "span", "only a paired template (with `pair`) declares a span"))
    for code, phrases in tpl.span.items():
        if code not in spec.locales:
            out.append(Problem(rel, tpl.id, f"span.{code}", f"{code!r} is not a locale of this suite", code))
        if not phrases:
            out.append(
                Problem(
                    rel, tpl.id, f"span.{code}", "lists no phrase: give the words this twin differs in", code
                )
            )
        for i, phrase in enumerate(phrases):
            out.extend(
                Problem(rel, tpl.id, f"span.{code}[{i}]", f"phrase {message}", code)
                for message in text_problems(phrase)
            )
    return out
