"""`polyprobe release build`: freeze the catalog into dist/polyprobe-VERSION/.

Everything is written to a temporary folder next to the target and renamed into place at the
end: a failed build leaves nothing, an existing version is never overwritten, and of two
concurrent builds of one version the first rename wins and the other fails cleanly. Nothing
in the output depends on the clock, so a rebuild from the same inputs is byte-identical."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

import toolkit
from toolkit.catalog.evaluation_lexicons import EVALUATION_LEXICONS
from toolkit.catalog.lexicon_pins import load_pins
from toolkit.catalog.loader import Catalog, load_catalog
from toolkit.catalog.locales import Locale
from toolkit.catalog.published.files import read_header
from toolkit.catalog.studies import load_study, study_manifest
from toolkit.core.errors import CatalogError, InputError
from toolkit.core.fileio import OutputRefused, WriteFailed, is_io_failure, load_yaml, special_kind
from toolkit.core.progress import Step
from toolkit.core.project import Project
from toolkit.core.records import SEMVER_RE
from toolkit.release.approvals import approval_backed
from toolkit.release.card import render_card
from toolkit.release.changelog import Changelog, diff_inputs, diff_samples
from toolkit.release.content import content_sha256, file_sha256, semver_key
from toolkit.release.manifest import (
    Counts,
    CreatedBy,
    FileEntry,
    GitState,
    HurtlexPin,
    InputEntry,
    LeftOutRow,
    LexiconPins,
    LocaleEntry,
    Manifest,
    PublishedImport,
    StudyEntry,
    SuiteEntry,
)
from toolkit.release.reader import MANIFEST, open_release
from toolkit.release.seal import CARD, release_signature
from toolkit.release.sealed import NAME, refuse_inside_release
from toolkit.release.staging import remove_stale, staging_folder
from toolkit.render.renderer import render
from toolkit.render.suites import kind_of
from toolkit.render.validate import validate
from toolkit.review.policy import POLICY_FILE, load_policy
from toolkit.store.files import store_path
from toolkit.store.rules import state


class ReleaseExists(InputError):
    """A released version is never overwritten."""


@dataclass(frozen=True)
class BuildOptions:
    """What `polyprobe release build` was asked for: version, preview or stable, which suites and
    locales, where to write, and the release to compare with."""

    version: str
    preview: bool
    suites: list[str] | None = None
    locales: list[str] | None = None
    dist: Path | None = None
    previous: Path | None = None


def check_dist(dist: Path) -> None:
    """--dist must be a folder (or not exist yet) and not inside a release: a release built into
    another's folder would make that one fail verification."""
    refuse_inside_release(dist, "--dist")
    kind = special_kind(dist)
    if kind == "a folder" or not dist.exists():
        return
    raise OutputRefused(f"--dist {dist} is {kind or 'a file'}, not a folder: nothing was written")


def release_dir(dist: Path, version: str) -> Path:
    """The folder a release of this version is written to under ``dist``."""
    return dist / f"{NAME}-{version}"


def check_version(version: str, preview: bool) -> None:
    """Refuse a version that is not semantic, a preview without a preview version, and a stable
    release with a pre-release version."""
    if not SEMVER_RE.match(version):
        raise InputError(
            f"{version!r} is not a semantic version (e.g. 0.1.0, or 0.1.0-preview.1 with --preview)"
        )
    pre = version.split("-", 1)[1] if "-" in version else ""
    if preview and "preview" not in pre:
        raise InputError(f"a preview release needs a preview version, e.g. {version.split('-')[0]}-preview.1")
    if not preview and pre:
        raise InputError(f"{version} is a pre-release version: build it with --preview, or drop '-{pre}'")


def _hash_files(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _git(project: Project) -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "templates", "lexicons", "translations"],
            cwd=project.root,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        return {"commit": commit, "inputs_uncommitted": bool(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "inputs_uncommitted": None}


def _inputs(catalog: Catalog, suites: list[str], locales: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Every file the release is built from, with its version where it has one, and its sha256."""
    project = catalog.project
    out: dict[str, dict[str, Any]] = {}

    def add(rel: str, version: str | None = None) -> None:
        path = project.root / rel
        if path.is_file():
            out[rel] = {"sha256": file_sha256(path), **({"version": version} if version else {})}

    add("lexicons/locales.yaml", catalog.locales.version)
    add("lexicons/taxonomy.yaml", catalog.taxonomy.version)
    add("lexicons/hurtlex.toml", load_pins(project).version)
    add("translations/review-policy.yaml")
    used_locales = sorted({loc for locs in locales.values() for loc in locs})
    for code in used_locales:
        add(f"templates/_grammar/{code}.j2")
    for sid in suites:
        suite = catalog.suites[sid]
        folder = project.templates / sid
        out[f"templates/{sid}"] = {
            "sha256": _hash_files(list(folder.glob("*.yaml"))),
            "version": suite.spec.version,
        }
        for path in suite.spec.identities:
            ilist = catalog.identity_lists.get(path)
            add(f"lexicons/{path}", ilist.version if ilist else None)
        if suite.spec.lexicon:
            stimuli = catalog.iat(suite)
            add(f"lexicons/{suite.spec.lexicon}", stimuli.version if stimuli else None)
        for code in locales[sid]:
            if catalog.locales[code].translated:
                add(project.rel(store_path(project, code, sid)))
        for rel in kind_of(sid).imported(project, suite):  # imported samples: their content is an input
            add(rel)
    for study_id in study_manifest(catalog, suites):
        add(f"lexicons/studies/{study_id}.yaml", load_study(project, study_id).version)
    return dict(sorted(out.items()))


def _missing_approvals(catalog: Catalog, suites: list[str], locales: dict[str, list[str]]) -> list[str]:
    """Per locale and suite, what keeps a stable release from including every segment: records
    not approved, and approvals without review events that satisfy the review policy."""
    policy = load_policy(catalog.project)
    lines = []
    for sid in suites:
        suite = catalog.suites[sid]
        for code in locales[sid]:
            if not catalog.locales[code].translated:
                continue  # the source, or published-only (rows as published, nothing to approve)
            published = kind_of(sid).published_segments(catalog.project, suite, code)
            records = catalog.store(sid, code).records
            counts: Counter[str] = Counter()
            unbacked: list[str] = []
            for seg in suite.segments.values():
                if seg.id in published:
                    continue  # its item is in a published translation, rendered as published
                rec = records.get(seg.id)
                where = state(rec, seg.source_sha)
                if rec is None or where != "approved":
                    counts[where] += 1
                elif not approval_backed(rec, policy):
                    unbacked.append(seg.id)
            if unbacked:
                shown = ", ".join(unbacked[:5]) + (
                    f", … ({len(unbacked) - 5} more)" if len(unbacked) > 5 else ""
                )
                counts[f"approved without reviews that satisfy {POLICY_FILE} ({shown})"] = len(unbacked)
            if counts:
                lines.append(f"{code}/{sid}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return lines


def _previous(dist: Path, version: str, explicit: Path | None) -> Path | None:
    if explicit is not None:
        return explicit
    if not dist.is_dir():
        return None
    older = []
    for folder in dist.iterdir():
        name = folder.name.removeprefix(f"{NAME}-")
        if (
            folder.is_dir()
            and folder.name.startswith(f"{NAME}-")
            and (folder / MANIFEST).is_file()
            and SEMVER_RE.match(name)
        ) and semver_key(name) < semver_key(version):
            older.append((semver_key(name), folder))
    return max(older)[1] if older else None


@dataclass
class _Plan:
    """What a build renders: the catalog, its suites, each suite's locales, the minimum status."""

    catalog: Catalog
    suites: list[str]
    locales: dict[str, list[str]]
    min_status: str


def build_release(
    project: Project,
    options: BuildOptions,
    progress: Callable[[str, int, int], None] | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> Path:
    """Build a release; ``progress(what, done, total)`` follows each stage (validating, rendering,
    writing) against its own total; ``log`` hears of stale build folders removed."""
    step = progress or (lambda what, done, total: None)
    check_version(options.version, options.preview)
    dist = options.dist or project.root / "dist"
    check_dist(dist)
    target = release_dir(dist, options.version)
    if target.exists():
        raise ReleaseExists(
            f"{target} exists: a released version is never overwritten (choose a new version)"
        )
    plan = _plan(project, options)
    _check(plan, options, step)
    frames = _render_all(plan, step)
    try:
        dist.mkdir(parents=True, exist_ok=True)
        for stale in remove_stale(dist):
            log(f"removed {stale}, left by a build that was killed")
        with staging_folder(dist, target) as tmp:
            files, counts = _write_data(tmp, frames, step)
            lexicon_files, lexicon_inputs = _write_lexicons(project, tmp)
            manifest = _manifest(plan, options, frames, counts, files | lexicon_files, lexicon_inputs)
            manifest = _write_changelog(tmp, manifest, dist, options, frames)
            _write_sealed(tmp, manifest)
            _publish(tmp, target)
    except BaseException as exc:
        if is_io_failure(exc):
            raise WriteFailed(target, exc) from None
        raise
    return target


def _plan(project: Project, options: BuildOptions) -> _Plan:
    catalog = load_catalog(project, suites=options.suites, locales=options.locales)
    suites = [s for s in catalog.suites if options.suites is None or s in options.suites]
    locales = {
        s: [
            c
            for c in catalog.suites[s].spec.locales
            if c in catalog.locales and (options.locales is None or c in options.locales)
        ]
        for s in suites
    }
    return _Plan(catalog, suites, locales, "draft" if options.preview else "approved")


def _check(plan: _Plan, options: BuildOptions, step: Step) -> None:
    """Every problem of the catalog (in the release's locales), and for a stable release every
    translation it includes approved through review."""
    checked = validate(plan.catalog, progress=step)
    relevant = [
        p for p in checked.problems if not p.locale or options.locales is None or p.locale in options.locales
    ]
    if relevant:
        raise CatalogError(relevant)
    if not options.preview:
        missing = _missing_approvals(plan.catalog, plan.suites, plan.locales)
        if missing:
            raise InputError(
                "a stable release needs every included translation approved through review; not approved:\n  "
                + "\n  ".join(missing)
                + "\nbuild a --preview release, or finish the reviews"
            )


def _render_all(plan: _Plan, step: Step) -> dict[tuple[str, str], pl.DataFrame]:
    """Every suite in every locale, rows sorted by sample id; (suite, locale) without rows left out."""
    frames: dict[tuple[str, str], pl.DataFrame] = {}
    jobs = [(sid, code) for sid in plan.suites for code in plan.locales[sid]]
    for done, (sid, code) in enumerate(jobs):
        step(f"rendering {sid} {code}", done, len(jobs))
        rendered = render(plan.catalog, sid, code, min_status=plan.min_status)
        if rendered.problems:
            raise CatalogError(rendered.problems)
        if rendered.frame.height:
            frames[(sid, code)] = rendered.frame.sort("sample_id")
    return frames


def _entry(path: Path, **extra: Any) -> FileEntry:
    return FileEntry(sha256=file_sha256(path), bytes=path.stat().st_size, **extra)


def _write_data(
    tmp: Path, frames: dict[tuple[str, str], pl.DataFrame], step: Step
) -> tuple[dict[str, FileEntry], Counts]:
    """data/SUITE/LOCALE.parquet for every frame; their entries and row counts per variant and status."""
    files: dict[str, FileEntry] = {}
    counts: Counts = {}
    for written, ((sid, code), frame) in enumerate(frames.items()):
        step(f"writing {sid} {code}", written, len(frames))
        rel = f"data/{sid}/{code}.parquet"
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(
            path, compression="zstd", compression_level=9, statistics=False, row_group_size=100_000
        )
        files[rel] = _entry(
            path,
            rows=frame.height,
            content_sha256=content_sha256(frame),
            schema={name: str(dtype) for name, dtype in frame.schema.items()},
        )
        per_variant: dict[str, dict[str, int]] = {}
        for variant, status, n in (
            frame.group_by("variant", "status").len().sort("variant", "status").iter_rows()
        ):
            per_variant.setdefault(str(variant or "-"), {})[str(status)] = int(n)
        counts.setdefault(sid, {})[code] = per_variant
    return files, counts


def _write_lexicons(project: Project, tmp: Path) -> tuple[dict[str, FileEntry], dict[str, InputEntry]]:
    """The evaluation lexicons as canonical JSON (lexicons/NAME.json); their entries and inputs."""
    files: dict[str, FileEntry] = {}
    inputs: dict[str, InputEntry] = {}
    for name in EVALUATION_LEXICONS:
        source = project.lexicons / f"{name}.yaml"
        if not source.is_file():
            continue
        data = load_yaml(source, f"lexicons/{name}.yaml")  # its shape was checked with the catalog (_check)
        rel = f"lexicons/{name}.json"
        (tmp / "lexicons").mkdir(exist_ok=True)
        (tmp / rel).write_text(
            json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        files[rel] = _entry(tmp / rel, version=str(data["version"]))
        inputs[f"lexicons/{name}.yaml"] = InputEntry(sha256=file_sha256(source), version=str(data["version"]))
    return files, inputs


def _manifest(
    plan: _Plan,
    options: BuildOptions,
    frames: dict[tuple[str, str], pl.DataFrame],
    counts: Counts,
    files: dict[str, FileEntry],
    lexicon_inputs: dict[str, InputEntry],
) -> Manifest:
    """The manifest before the changelog and the seal."""
    catalog, project = plan.catalog, plan.catalog.project
    inputs = {rel: InputEntry(**entry) for rel, entry in _inputs(catalog, plan.suites, plan.locales).items()}
    return Manifest(
        name=NAME,
        version=options.version,
        preview=options.preview,
        min_status=plan.min_status,
        created_by=CreatedBy(
            toolkit=toolkit.__version__, polars=pl.__version__, python=platform.python_version()
        ),
        git=GitState(**_git(project)),
        inputs=inputs | lexicon_inputs,
        lexicon_pins=LexiconPins(hurtlex=HurtlexPin.model_validate(load_pins(project).as_dict())),
        locales={
            c: locale_entry(catalog.locales[c], catalog.locales.codes.index(c))
            for c in sorted({c for v in plan.locales.values() for c in v})
            if not catalog.locales[c].published_only or any((sid, c) in frames for sid in plan.suites)
        },
        suites={
            sid: SuiteEntry(
                version=catalog.suites[sid].spec.version,
                mode=catalog.suites[sid].spec.mode,
                locales=[c for c in plan.locales[sid] if (sid, c) in frames],
                reference_groups={
                    path: catalog.identity_lists[path].reference_groups
                    for path in catalog.suites[sid].spec.identities
                    if path in catalog.identity_lists and catalog.identity_lists[path].reference_groups
                },
                citation=list(catalog.suites[sid].spec.citation),
            )
            for sid in plan.suites
        },
        studies={sid: StudyEntry(**entry) for sid, entry in study_manifest(catalog, plan.suites).items()},
        published=_published(catalog, plan) or None,
        counts=counts,
        files=files,
        changelog_against=None,
        signature="",
    )


def _published(catalog: Catalog, plan: _Plan) -> dict[str, PublishedImport]:
    """Every published dataset's import the release reads (one with a header: the files it read
    and the rows it left out), so the release says which published rows it does not hold."""
    out: dict[str, PublishedImport] = {}
    for sid in plan.suites:
        for rel in kind_of(sid).imported(catalog.project, catalog.suites[sid]):
            header = read_header(catalog.project, rel)
            if header is None:
                continue
            out[rel] = PublishedImport(
                dataset=header.dataset,
                sources={s.file: s.sha256 for s in header.sources},
                rows=sum(s.records for s in header.sources),
                left_out=[LeftOutRow(**f.model_dump()) for f in header.left_out],
            )
    return dict(sorted(out.items()))


def locale_entry(locale: Locale, position: int) -> LocaleEntry:
    """What the evaluator needs of a locale: its name and direction, its HurtLex language and how
    its text splits into words, how reports show it (and where, ``position`` in
    lexicons/locales.yaml), and whether it is published-only."""
    return LocaleEntry(
        name=locale.name,
        direction=locale.direction,
        hurtlex=locale.hurtlex,
        native_name=locale.native_name,
        published_only=True if locale.published_only else None,
        colour=locale.report.colour,
        html_lang=locale.report.html_lang,
        word_split=locale.word_split,
        position=position,
    )


def _write_changelog(
    tmp: Path,
    manifest: Manifest,
    dist: Path,
    options: BuildOptions,
    frames: dict[tuple[str, str], pl.DataFrame],
) -> Manifest:
    """CHANGELOG.md against the previous release (if any); the manifest with it."""
    previous = _previous(dist, options.version, options.previous)
    changelog = Changelog(old=None, new=options.version)
    if previous is not None:
        old = open_release(previous)
        changelog = Changelog(
            old=old.version, new=options.version, inputs=diff_inputs(old.manifest.inputs, manifest.inputs)
        )
        keys = sorted(set(frames) | {(s, loc) for s in old.suites() for loc in old.locales(s)})
        for sid, code in keys:
            old_frame = old.scan(sid, code).collect() if old.has(sid, code) else None
            changelog.samples.append(diff_samples(sid, code, old_frame, frames.get((sid, code))))
    (tmp / "CHANGELOG.md").write_text(changelog.markdown(), encoding="utf-8")
    files = manifest.files | {"CHANGELOG.md": _entry(tmp / "CHANGELOG.md")}
    return manifest.model_copy(update={"files": files, "changelog_against": changelog.old})


def _write_sealed(tmp: Path, manifest: Manifest) -> None:
    """The signature (over the manifest's JSON form), the card it describes, and manifest.json."""
    manifest = manifest.model_copy(update={"signature": release_signature(manifest.to_json())})
    (tmp / CARD).write_text(render_card(manifest), encoding="utf-8")
    files = dict(sorted((manifest.files | {CARD: _entry(tmp / CARD)}).items()))
    manifest = manifest.model_copy(update={"files": files})
    (tmp / MANIFEST).write_text(
        json.dumps(manifest.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def _publish(tmp: Path, target: Path) -> None:
    """Make the folder read-only for others and rename it into place (the first rename wins)."""
    for path in tmp.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    os.chmod(tmp, 0o755)
    try:
        os.rename(tmp, target)
    except OSError:
        if not target.exists():
            raise
        raise ReleaseExists(
            f"{target} was created by another build meanwhile; this build is discarded"
        ) from None
