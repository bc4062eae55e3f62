"""Property: any sequence of drafts, syncs after English edits, XLIFF round trips (with and
without a vendor's edit), review pulls and concurrent drafts, with good and broken texts
mixed in, never loses a record or a history event, never leaves a store file that is not
whole, and never leaves a record that `render` rejects. An operation that is refused changes
no byte."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.conftest import write_mini_catalog
from tests.support.review_stub import POLICY, StubLabelStudio, annotation, task
from toolkit.catalog.loader import load_catalog
from toolkit.core.errors import PolyprobeError
from toolkit.core.project import Project
from toolkit.render.renderer import render
from toolkit.review.pull import pull
from toolkit.store.files import scan_store
from toolkit.translation.drafts import import_drafts
from toolkit.translation.stale import sync
from toolkit.translation.xliff import export_xliff, import_xliff

LOCALES = ("de", "it")
SEGMENTS = ("gen-01.f", "gen-01.m", "rel-01.f", "rel-01.m")
GOOD = {
    "it": {
        "gen-01.f": ["La donna {{ group.f }} oggi è felice.", "La donna {{ group.f }} è felice oggi."],
        "gen-01.m": ["L'uomo {{ group.m }} oggi è felice.", "Oggi l'uomo {{ group.m }} è felice."],
        "rel-01.f": ["È cresciuta in una famiglia {{ group.f }}.", "Lei è cresciuta in una famiglia {{ group.f }}."],
        "rel-01.m": ["È cresciuto in una famiglia {{ group.f }}.", "Lui è cresciuto in una famiglia {{ group.f }}."],
    },
    "de": {
        "gen-01.f": ["Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist heute glücklich.", "Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist heute froh."],
        "gen-01.m": ["Der {{ adj(group, 'm', 'nom', 'def') }} Mann ist heute glücklich.", "Der {{ adj(group, 'm', 'nom', 'def') }} Mann ist heute froh."],
        "rel-01.f": ["Sie ist in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie aufgewachsen.", "Sie wuchs in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie auf."],
        "rel-01.m": ["Er ist in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie aufgewachsen.", "Er wuchs in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie auf."],
    },
}  # fmt: skip
BROKEN = [
    "Ohne Platzhalter.",
    "{{ group.f",
    "{{ group.pl_x }} x",
    "{{ 10**(10**9) }} {{ group.f }}",
    "{% for a in 'x'*1000 %}{% for b in 'x'*1000 %}{% endfor %}{% endfor %}{{ group.f }}",
    "{{ " + "(" * 2000 + "group.f" + ")" * 2000 + " }}",
    " {{ group.f }}",
    "e\u0301 {{ group.f }}",
]
ENGLISH = {  # an English source and what it becomes when a maintainer edits it
    "gen-01.f": (
        "The {{ group.adj }} woman feels happy today.",
        "The {{ group.adj }} woman feels happy now.",
    ),
    "rel-01.m": ("He grew up in a {{ group.adj }} family.", "He grew up in a {{ group.adj }} home."),
}

texts = st.one_of(
    st.tuples(st.sampled_from(LOCALES), st.sampled_from(SEGMENTS), st.integers(0, 1)).map(
        lambda t: (t[0], t[1], GOOD[t[0]][t[1]][t[2]])
    ),
    st.tuples(st.sampled_from(LOCALES), st.sampled_from(SEGMENTS), st.sampled_from(BROKEN)),
)


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="polyprobe-prop-"))
        self.root = write_mini_catalog(self.tmp / "catalog")
        self.seen: dict[tuple[str, str], tuple[dict, ...]] = {}
        self.annotation = 0
        self.remember()

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    # helpers
    def store_path(self, locale: str) -> Path:
        return self.root / "translations" / locale / "sentiment.jsonl"

    def catalog(self):
        return load_catalog(Project.at(self.root))

    def hashes(self) -> dict[str, str]:
        return {
            p.name + p.parent.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in self.root.rglob("*.jsonl")
        }

    def records(self, locale: str) -> dict[str, dict]:
        path = self.store_path(locale)
        return {r["segment"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}

    def remember(self) -> None:
        for locale in LOCALES:
            for segment, rec in self.records(locale).items():
                self.seen[(locale, segment)] = tuple(rec["history"])

    def refused_or_done(self, action) -> None:
        before = self.hashes()
        try:
            action()
        except PolyprobeError:
            assert self.hashes() == before, "a refused operation changed a store"

    # operations
    @rule(text=texts)
    def draft(self, text: tuple[str, str, str]) -> None:
        locale, segment, value = text
        path = self.tmp / "drafts.yaml"
        path.write_text(json.dumps({segment: value}), encoding="utf-8")
        self.refused_or_done(lambda: import_drafts(self.catalog(), "sentiment", locale, path, "prop"))

    @rule(a=texts, b=texts)
    def concurrent_drafts(self, a: tuple[str, str, str], b: tuple[str, str, str]) -> None:
        errors: list[BaseException] = []

        def one(n: int, text: tuple[str, str, str]) -> None:
            locale, segment, value = text
            path = self.tmp / f"drafts-{n}.yaml"
            path.write_text(json.dumps({segment: value}), encoding="utf-8")
            try:
                import_drafts(self.catalog(), "sentiment", locale, path, f"writer-{n}")
            except PolyprobeError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(n, t)) for n, t in enumerate((a, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        landed = 0
        for locale, segment, value in (a, b):
            if self.records(locale)[segment]["text"] == value:
                landed += 1
        # each writer either landed or was refused for its text: none was overwritten by the other
        if a[:2] != b[:2]:
            assert landed + len(errors) >= 2

    @rule(segment=st.sampled_from(sorted(ENGLISH)))
    def edit_english_and_sync(self, segment: str) -> None:
        tpl = self.root / "templates" / "sentiment" / "templates.yaml"
        text = tpl.read_text(encoding="utf-8")
        old, new = ENGLISH[segment]
        if old not in text:
            old, new = new, old  # edit it back
        tpl.write_text(text.replace(old, new, 1), encoding="utf-8")
        sync(self.catalog())

    @rule(locale=st.sampled_from(LOCALES), edit=st.one_of(st.none(), texts))
    def xliff_round_trip(self, locale: str, edit: tuple[str, str, str] | None) -> None:
        out = self.tmp / f"{locale}.xlf"
        export_xliff(self.catalog(), locale, ["sentiment"], out)
        if edit is None:
            before = self.hashes()
            import_xliff(self.catalog(), out, "vendor")
            assert self.hashes() == before, "an unchanged round trip changed a store"
            return
        _, segment, value = edit
        doc = out.read_text(encoding="utf-8")
        start = doc.index(f'<unit id="{segment}">')
        target = doc.index("<target>", start)
        end = doc.index("</target>", target)
        from xml.sax.saxutils import escape

        out.write_text(doc[:target] + "<target>" + escape(value) + doc[end:], encoding="utf-8")
        self.refused_or_done(lambda: import_xliff(self.catalog(), out, "vendor"))

    @rule(
        locale=st.sampled_from(LOCALES), segment=st.sampled_from(SEGMENTS), edit=st.one_of(st.none(), texts)
    )
    def review_pull(self, locale: str, segment: str, edit: tuple[str, str, str] | None) -> None:
        catalog = self.catalog()
        seg = catalog.suites["sentiment"].segments[segment]
        record = self.records(locale)[segment]
        self.annotation += 2
        verdict = ("accept", None) if edit is None else ("edited", edit[2])
        client = StubLabelStudio(
            [
                task(
                    segment,
                    seg.source_sha,
                    record["text"],
                    annotation(self.annotation - 1, verdict[0], verdict[1], user=1),
                    annotation(self.annotation, verdict[0], verdict[1], user=2),
                )
            ]
        )
        self.refused_or_done(lambda: pull(client, catalog, POLICY, locale, ["sentiment"]))  # type: ignore[arg-type]

    # what must always hold
    @invariant()
    def nothing_lost_nothing_broken(self) -> None:
        for locale in LOCALES:
            path = self.store_path(locale)
            assert scan_store(path.read_bytes()).whole, f"{path} is not whole"
            records = self.records(locale)
            for (loc, segment), history in self.seen.items():
                if loc != locale:
                    continue
                assert segment in records, f"{locale}/{segment} was lost"
                now = tuple(records[segment]["history"])
                assert now[: len(history)] == history, f"{locale}/{segment}: history was rewritten"
        catalog = self.catalog()
        problems = list(catalog.problems)
        for locale in LOCALES:
            problems.extend(render(catalog, "sentiment", locale).problems)
        assert problems == [], [str(p) for p in problems]
        self.remember()


StoreMachine.TestCase.settings = settings(
    max_examples=12,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_store_operations_lose_nothing_and_store_nothing_broken = StoreMachine.TestCase
