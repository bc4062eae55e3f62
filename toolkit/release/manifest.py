"""The release manifest (manifest.json), typed: every field the build writes and the reader and the
evaluator read, with unknown fields refused (``extra="forbid"``) and no coercion (``strict``).

The JSON form is the format (docs/release-format.md): ``to_json()`` gives exactly the mapping the
build writes (an optional field of a file or input entry is left out when it has none) and
``seal`` hashes; a manifest read from a release is checked against this model (``problems``)
before anything else is done with it."""

from __future__ import annotations

from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from toolkit.catalog.locales import WordSplit
from toolkit.core.model import StrictModel

SHA256 = r"^[0-9a-f]{64}$"


class _Strict(StrictModel):
    """A part of the manifest: nothing coerced (``"3"`` is no count), and a field whose JSON name
    is taken in Python (``schema``) readable by either name."""

    model_config = ConfigDict(strict=True, populate_by_name=True)


class _Sparse(_Strict):
    """An entry whose optional fields are left out of the JSON when they are not set."""

    @model_serializer(mode="wrap")
    def _without_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class FileEntry(_Sparse):
    """One file of the release: its bytes' hash and size; for a data file also its rows, content
    hash and schema."""

    sha256: str = Field(pattern=SHA256)
    bytes: int = Field(ge=0)
    rows: int | None = Field(default=None, ge=0)
    """Data files (Parquet): rows, content hash and schema."""
    content_sha256: str | None = Field(default=None, pattern=SHA256)
    schema_: dict[str, str] | None = Field(default=None, alias="schema")
    version: str | None = None
    """Evaluation lexicons (lexicons/NAME.json): the lexicon's version."""


class InputEntry(_Sparse):
    """One input the release was built from: its hash and, where it has one, its version."""

    sha256: str = Field(pattern=SHA256)
    version: str | None = None


class CreatedBy(_Strict):
    """The versions of the software that built the release."""

    toolkit: str
    polars: str
    python: str


class GitState(_Strict):
    """The commit the release was built from, and whether its inputs had uncommitted changes (None:
    git could not say, e.g. outside a checkout)."""

    commit: str | None
    inputs_uncommitted: bool | None


class HurtlexPin(_Strict):
    """The HurtLex version the release's lexicon scores use, pinned by commit and hashes."""

    version: str
    license: str
    commit: str
    url: str
    sha256: dict[str, str]


class LexiconPins(_Strict):
    """The external lexicons the release is pinned to."""

    hurtlex: HurtlexPin


class LocaleEntry(_Sparse):
    """A locale of the release as its users need it: name, writing direction, HurtLex language,
    whether it is published-only, and its report name, colour and language tag."""

    name: str
    direction: str
    hurtlex: str | None = None
    native_name: str | None = None
    """The report's name for the locale (releases from before every locale had a report style:
    only where it had one, as for colour, html_lang, word_split and position)."""
    published_only: bool | None = None
    """True for a locale whose rows are only published data imported as published."""
    colour: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")
    html_lang: str | None = None
    """The locale's report colour and HTML language tag (lexicons/locales.yaml ``report``)."""
    word_split: WordSplit | None = None
    """How its text splits into words (lexicons/locales.yaml ``word_split``), for HONEST."""
    position: int | None = None
    """Where lexicons/locales.yaml lists it (from 0): reports list locales in this order."""


class SuiteEntry(_Strict):
    """A suite of the release: its version, mode, locales, reference groups and citation."""

    version: str
    mode: str
    locales: list[str]
    reference_groups: dict[str, dict[str, dict[str, str]]]
    """Identity list -> attribute -> locale -> the reference group."""
    citation: list[str]


class StudyEntry(_Strict):
    """A study whose identities the release links to its groups."""

    version: str
    name: str
    citation: str
    groups: dict[str, list[str]]
    """Group id -> the study's terms for it."""


class LeftOutRow(_Strict):
    """One row of a published dataset left out of the release, located, with why."""

    file: str
    line: int
    check: str
    message: str


class PublishedImport(_Strict):
    """A published dataset's import as the release used it: the files read, and every row of them
    that was left out (defective, or not alignable) with why."""

    dataset: str
    sources: dict[str, str]
    """File name -> sha256."""
    rows: int
    """Rows in the files."""
    left_out: list[LeftOutRow]


Counts = dict[str, dict[str, dict[str, dict[str, int]]]]
"""suite -> locale -> variant ("-" for none) -> status -> rows."""


class Manifest(_Strict):
    """manifest.json: what the release is, what it was built from and by, what it holds (counts,
    files with their hashes), and its signature."""

    name: str
    version: str
    preview: bool
    min_status: str
    created_by: CreatedBy
    git: GitState
    inputs: dict[str, InputEntry]
    lexicon_pins: LexiconPins
    locales: dict[str, LocaleEntry]
    suites: dict[str, SuiteEntry]
    studies: dict[str, StudyEntry]
    counts: Counts
    files: dict[str, FileEntry]
    changelog_against: str | None
    """The version the changelog compares with (None: the first release)."""
    signature: str
    """See toolkit.release.seal (empty until the build has sealed the manifest)."""
    published: dict[str, PublishedImport] | None = None
    """Import file -> what it read and left out (releases with imported published data only)."""

    def to_json(self) -> dict[str, Any]:
        """The mapping manifest.json holds (``published`` only where the release has imports)."""
        out = self.model_dump(mode="json", by_alias=True)
        if out.get("published") is None:
            out.pop("published", None)
        return out

    def data_files(self) -> list[str]:
        """The release's data files (Parquet, under data/)."""
        return [rel for rel in self.files if rel.startswith("data/")]


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc if part != "schema_")


def parse_manifest(raw: Any, manifest_name: str) -> tuple[Manifest | None, list[str]]:
    """The typed manifest, or what is malformed in its fields (wrong type, missing, unknown, not a
    hash), each naming the field."""
    if not isinstance(raw, dict):
        return None, [f"{manifest_name}: must be a JSON object"]
    try:
        return Manifest.model_validate(raw), []
    except ValidationError as exc:
        return None, [
            f"{manifest_name}: field {_where(tuple(err['loc']))}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
