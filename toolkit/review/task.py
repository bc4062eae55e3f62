"""What one review task tells the annotator, in words: the English source's variant and slots
(where each slot may go, what the honest marker is), the sentence's label, and the annotator
guidelines as Markdown (every task) and HTML (the project's Instructions).

Task data never uses the key `source`: Label Studio's labelling screen overwrites it with the
task's JSON. Display-only values (about, examples, notice) may carry Unicode direction marks;
`draft` is the store's text byte for byte, since `review pull` compares reviews with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from toolkit.catalog.templates import Segment
from toolkit.core.errors import InputError
from toolkit.core.project import Project
from toolkit.review.labelstudio import GUIDELINES, INTERFACE_VERSION

VARIANTS = {
    "f": "about a woman: every word that refers to her is feminine",
    "m": "about a man: every word that refers to him is masculine",
    "n": "about a person (non-binary or unspecified): use the language's neutral or inclusive form",
}

LABELS = {
    "positive": "positive: keep it positive",
    "negative": "negative: keep it negative",
    "neutral": "neutral: keep it neutral",
    "toxic": "deliberately toxic: do not soften it",
    "non_toxic": "the non-toxic twin of a toxic sentence: it must differ from it only in the toxic word",
}

SLOTS = {
    "group": "is filled with identity-group words (Muslim, deaf, Nubian, …). Keep it exactly once; "
    "it may move within the sentence, and the words around it must agree with every group.",
    "completion": "is where a language model continues the sentence. It must stay the very last thing "
    "in the sentence: only punctuation may follow it. The examples show it as {marker}.",
    "sentence": "is replaced by a whole sentence of the sos suite. Keep it exactly once; it may move.",
    "language": "is replaced by the name of the sentence's language. Keep it exactly once; it may move.",
}
OTHER_SLOT = "is filled in by the software. Keep it exactly once; it may move within the sentence."

VIEW_TITLE = "Review tasks"
# The data manager's tab for reviewers: the task list without the technical columns, and without
# the raw draft, which a table cell lays out left to right whatever its language (the examples
# column shows the draft rendered, each sentence isolated in its own direction). Label Studio's
# own columns it hides by default stay hidden.
HIDDEN_COLUMNS = [
    *(
        f"tasks:data.{key}"
        for key in ("draft", "about", "notice", "origin", "suite", "locale", "source_sha", "interface")
    ),
    *(
        f"tasks:{key}"
        for key in (
            "inner_id",
            "annotations_results",
            "annotations_ids",
            "predictions_score",
            "predictions_model_versions",
            "predictions_results",
            "file_upload",
            "storage_filename",
            "created_at",
            "updated_at",
            "updated_by",
            "avg_lead_time",
            "draft_exists",
        )
    ),
]

# Isolates keep a left-to-right label and a right-to-left sentence from reordering each other.
LRI, RLI, PDI = "\u2066", "\u2067", "\u2069"


@dataclass(frozen=True)
class Twin:
    """The other sentence of a segment's pair (sos: a toxic sentence and its non-toxic twin), in
    the same variant: its label, English source and translation in the task's locale."""

    label: str
    english: str
    translation: str | None


def about(segment: Segment, slots: list[str], marker: str | None, twin: Twin | None = None) -> str:
    """The source's variant, label, slots and twin explained in words (Markdown)."""
    lines = []
    if segment.variant:
        lines.append(f"**Variant {segment.variant}**: the sentence is {VARIANTS.get(segment.variant, '')}.")
    label = segment.template.label
    if label:
        lines.append(f"**Label**: {LABELS.get(label, label)}.")
    for slot in slots:
        help_text = SLOTS.get(slot, OTHER_SLOT).format(marker=marker or "[M]")
        lines.append(f"**Slot `{slot}`** (inside `{{{{ … }}}}`) {help_text}")
    if twin is not None:
        translated = f"`{twin.translation}`" if twin.translation else "not translated yet"
        lines.append(
            f"**Its twin** ({LABELS.get(twin.label, twin.label).split(':')[0]}), which this sentence "
            f"must match word for word except the {'toxic' if twin.label == 'non_toxic' else 'non-toxic'} "
            f"word: English `{twin.english}`; translation {translated}."
        )
    if segment.template.note:
        lines.append(f"**Note**: {segment.template.note}")
    return "\n\n".join(lines)


def example_line(variant: str, group: str, bare: bool, text: str, rtl: bool) -> str:
    """One rendered example, labelled with its variant and group. A bare group (the template's own
    noun names it, e.g. 'woman' for Female) has no group word, and the label says so."""
    label = f"[{variant} · {group}{': no group word, the noun names the group' if bare else ''}]"
    if rtl:
        return f"{LRI}{label}{PDI} {RLI}{text}{PDI}"
    return f"{label} {text}"


def task_data(
    *,
    segment: str,
    source_sha: str,
    english: str,
    draft: str,
    examples: str,
    about_text: str,
    status: str,
    origin: str,
    suite: str,
    locale: str,
    notice: str = "",
) -> dict[str, str | int]:
    """One task's data, in the order the data manager shows its columns."""
    return {
        "segment": segment,
        "english": english,
        "draft": draft,
        "examples": examples,
        "about": about_text,
        "notice": notice,
        "status": status,
        "origin": origin,
        "suite": suite,
        "locale": locale,
        "source_sha": source_sha,
        "interface": INTERFACE_VERSION,
    }


def guidelines_markdown(project: Project) -> str:
    """The annotator guidelines: the catalog's own docs/annotators.md, else the copy shipped with
    polyprobe."""
    for path in (project.root / GUIDELINES, Path(__file__).resolve().parents[2] / GUIDELINES):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise InputError(f"{GUIDELINES} is missing: the review projects show it to annotators")


def instructions_html(markdown: str) -> str:
    """The guidelines as HTML for the project's Instructions (raw HTML in the file is not passed)."""
    return MarkdownIt("commonmark", {"html": False}).render(markdown)
