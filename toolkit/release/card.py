"""The dataset card (README.md of a release) with a Hugging Face–style YAML header."""

from __future__ import annotations

import json

from toolkit.release.manifest import Manifest

LICENSE = "cc-by-4.0"


def _yaml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]"


def render_card(manifest: Manifest) -> str:
    """The card of a release: the build writes it, `verify` renders it again from the manifest."""
    files = manifest.data_files()
    locales = sorted({f.split("/")[2].removesuffix(".parquet") for f in files})
    return "\n".join([*_header(manifest, files, locales), *_contents(manifest, locales), *_about(manifest)])


def _header(manifest: Manifest, files: list[str], locales: list[str]) -> list[str]:
    """The Hugging Face-style YAML header: language, size, one config per suite and locale."""
    total = sum(manifest.files[f].rows or 0 for f in files)
    size = "100K<n<1M" if total < 1_000_000 else "1M<n<10M"
    if total < 100_000:
        size = "10K<n<100K" if total >= 10_000 else "1K<n<10K"
    header = [
        "---",
        f"pretty_name: polyprobe {manifest.version}",
        f"license: {LICENSE}",
        f"language: {_yaml_list(locales)}",
        "multilinguality: multilingual",
        "task_categories: [text-classification, text-generation, fill-mask, question-answering]",
        "tags: [bias, fairness, multilingual, gender, hate-speech]",
        f"size_categories: [{size}]",
        "configs:",
    ]
    for f in sorted(files):
        _, suite, name = f.split("/")
        header += [
            f"- config_name: {suite}-{name.removesuffix('.parquet')}",
            "  data_files:",
            "  - split: test",
            f"    path: {f}",
        ]
    header.append("---")
    return header


def _contents(manifest: Manifest, locales: list[str]) -> list[str]:
    """The title, the preview warning, the signature and the rows per suite, locale and status."""
    lines = ["", f"# polyprobe {manifest.version}", ""]
    if manifest.preview:
        lines += [
            "> **Preview release.** It includes translations that no native speaker has approved yet",
            "> (machine drafts, contributors' drafts, single reviews). Every row's `status` column says",
            "> which; filter on `status == 'approved'` (or `source`) for reviewed text only.",
            "",
        ]
    lines += [
        "Parallel, gender-explicit probes for measuring social bias in language models, in "
        + ", ".join(f"{manifest.locales[c].name if c in manifest.locales else c} (`{c}`)" for c in locales)
        + ". Every row has a `parallel_id` that is the same in every locale for the same template,",
        "variant and group.",
        "",
        f"Signature: `{manifest.signature}`",
        "",
        "## Contents",
        "",
        "| suite | locale | rows | statuses |",
        "|---|---|---:|---|",
    ]
    counts = manifest.counts
    for suite in sorted(counts):
        for locale, per_variant in sorted(counts[suite].items()):
            statuses: dict[str, int] = {}
            for per_status in per_variant.values():
                for status, n in per_status.items():
                    statuses[status] = statuses.get(status, 0) + n
            rows = sum(statuses.values())
            summary = ", ".join(f"{s} {n}" for s, n in sorted(statuses.items()))
            lines.append(f"| {suite} | {locale} | {rows} | {summary} |")
    return lines + _left_out(manifest)


SHOWN_LEFT_OUT = 20
"""Rows left out listed one by one in the card; the manifest lists them all."""


def _left_out(manifest: Manifest) -> list[str]:
    """The published rows the release does not hold, per import (the manifest's ``published``)."""
    if not manifest.published:
        return []
    lines = [
        "",
        "## Published data left out",
        "",
        "Rows of the published datasets that the imports could not use (defective, or not alignable",
        "with the English items), as the manifest's `published` lists them:",
        "",
    ]
    for rel, entry in manifest.published.items():
        rows = len({(row.file, row.line) for row in entry.left_out})
        lines.append(f"- `{rel}` ({entry.dataset}): {rows} of {entry.rows} rows left out")
        for row in entry.left_out[:SHOWN_LEFT_OUT]:
            lines.append(f"  - {row.file}, line {row.line}: {row.check}: {row.message}")
        if len(entry.left_out) > SHOWN_LEFT_OUT:
            lines.append(f"  - … and {len(entry.left_out) - SHOWN_LEFT_OUT} more (manifest.json)")
    return lines


def _about(manifest: Manifest) -> list[str]:
    """How it was made, limitations, intended use, citations."""
    lines = [
        "",
        "## How it was made",
        "",
        "English templates written by the polyprobe project are filled with identity groups from",
        "versioned lists (each group with its region, standing and a source for both). Every template",
        "has a female-subject, a male-subject and, where the suite needs it, a non-binary/person",
        "variant, so gendered languages never guess. Templates are translated once per variant",
        "(DeepL drafts, contributors' drafts, vendors), reviewed by native speakers in Label Studio,",
        "and rendered with per-locale grammar macros (agreement, declension, definiteness). The",
        "manifest pins every input by version and sha256, and the git commit.",
        "",
        "## Limitations",
        "",
        "- Draft translations: rows whose `status` is `draft` or `machine` have not been checked by a",
        "  native speaker; `reviewed` means one reviewer, `approved` two who agree.",
        "- Non-binary forms: the `n` variant uses each language's neutral person noun (person,",
        "  Person, persona, personne, شخص, אדם, 人士); in Hebrew, Arabic and Egyptian Arabic these are",
        "  grammatically masculine, in German, Italian, Spanish and French feminine.",
        "- Dialect: Egyptian Arabic (`arz`) is human-translated only (DeepL has no Egyptian target);",
        "  it is scored with the Arabic HurtLex lexicon.",
        "- Group lists are a selection per region; standing (dominant / marginalized) is a",
        "  generalisation across a society and is documented with its source per group.",
        "- HurtLex is not included (CC BY-NC-SA 4.0); its pins are in the manifest, fetch it with",
        "  `polyprobe lexicon fetch hurtlex`. BBQ is included only if the builder imported their own copy.",
        "",
        "## Intended use and misuse",
        "",
        "For measuring and comparing social biases of language models across languages, groups and",
        "genders. The sos and ifm suites contain deliberately offensive sentences: use them only to",
        "probe models, never to train a model to produce them, and never as statements about any",
        "group. Results describe models, not the groups named.",
        "",
        "## Citation",
        "",
        "The suites follow these studies:",
        "",
    ]
    for suite in sorted(manifest.suites):
        for cite in manifest.suites[suite].citation:
            lines.append(f"- {suite}: {cite}")
    lines.append("")
    return lines
