"""Machine translation with DeepL (official `deepl` SDK): drafts a reviewer can use, costing as
little as possible and never losing work.

- The store is the translation memory: only segments without a current translation (none, or
  stale) are sent, and identical source texts are sent once. A segment stored as needing a human
  edit is sent again only on request (``retry_rejected``).
- Template code travels as XML tags. A group slot comes back as a tag and is resolved into the
  target locale's own slot expression (toolkit/translation/slots.py, templates/_grammar/<locale>.slots.yaml);
  English-only macros around it are sent as the English they stand for.
- Nothing stored can break a render: every answer passes the store-entry gate (the checks
  ``render`` applies, and a render for every group and variant of the suite) before it is
  stored. One that passes is a current ``machine`` draft; one that does not, or whose slot
  could not be resolved with confidence, is stored as ``needs_edit`` with the raw answer and the
  reason, is never rendered, and is offered to reviewers.
- Up to 50 texts per request; every answered request is written to the store at once (atomic
  rename) and to the ledger; Ctrl-C stops a request in flight but waits for an answered one to be
  recorded. Faults are handled in one place (toolkit/translation/deepl_api.py): 429/5xx/dropped connections
  retried with backoff and a budget, 456 stops cleanly with its own exit code.
- The key comes from DEEPL_AUTH_KEY and goes to the SDK only: never to a file, log or message.

This module runs one suite and locale under the store's lock; what is sent is planned in
machine_plan.py, sent in machine_requests.py, stored in machine_writer.py, and Ctrl-C is held
around a batch being recorded in machine_interrupts.py.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.core.errors import InputError
from toolkit.render.suites import kind_of
from toolkit.store.files import StoreFile, load_store_strict, store_lock
from toolkit.store.model import utc_now
from toolkit.translation.answers import AnswerReader, slot_rules, source_slots_of
from toolkit.translation.deepl_api import KEY_ENV, SERVER_ENV, DeepL, QuotaExhausted, RetryPolicy
from toolkit.translation.ledger import Ledger, ledger_path
from toolkit.translation.machine_plan import MODEL_TYPES, Options, Plan, Report, describe, pending, plan
from toolkit.translation.machine_requests import send, server_host
from toolkit.translation.machine_writer import DraftWriter
from toolkit.translation.placeholders import SourceSlots
from toolkit.translation.slot_rules import SLOTS_SUFFIX, SlotRules


def translate(
    catalog: Catalog,
    suite_id: str,
    locale: str,
    options: Options,
    *,
    auth_key: str | None = None,
    server_url: str | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> Report:
    """Translate what is missing of one suite into one locale. See the module docstring."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    target = _target(catalog, locale)
    if options.model_type is not None and options.model_type not in MODEL_TYPES:
        raise InputError(f"unknown model type {options.model_type!r}; known: {', '.join(MODEL_TYPES)}")
    report = Report(locale=locale, suite=suite_id)
    slots = source_slots_of(catalog)
    rules = slot_rules(catalog, locale)
    with store_lock(catalog.project, locale, suite_id):
        store = load_store_strict(catalog.project, locale, suite_id)  # fresh, under the lock; refuses damage
        todo, work = _plan_run(catalog, suite, locale, store, options, report, target, slots, rules)
        units = work.units
        planned_requests = math.ceil(len(units) / options.batch_size) if units else 0
        if options.dry_run:
            report.requests = planned_requests
            report.outcome = "dry run"
            return report
        if not units:
            return report
        server = server_url or os.environ.get(SERVER_ENV) or None
        client = _client(auth_key, server, f"{locale}/{suite_id}", options)
        ledger = Ledger(ledger_path(catalog.project), run=uuid.uuid4().hex[:12])
        ledger.append(
            {
                "event": "start",
                "at": utc_now(),
                "locale": locale,
                "suite": suite_id,
                "server": server_host(server),
                "pending": len(todo),
                "unique_texts": len(units),
                "characters": report.characters,
            }
        )
        writer = DraftWriter(store, AnswerReader(catalog, suite, locale), report)
        _run(client, writer, ledger, todo, work, options, target, server, on_batch)
    return report


def _plan_run(
    catalog: Catalog,
    suite: Suite,
    locale: str,
    store: StoreFile,
    options: Options,
    report: Report,
    target: str,
    slots: SourceSlots,
    rules: SlotRules | None,
) -> tuple[list[Segment], Plan]:
    """The segments to translate (published ones left to their published translation) and the
    plan for them, described in the report; refused when a group slot could not be resolved."""
    loc = catalog.locales[locale]
    published = kind_of(suite.id).published_segments(catalog.project, suite, locale)
    wanted = [seg for seg in suite.segments.values() if seg.id not in published]
    todo = pending(store, wanted, options.retry_rejected)
    work = plan(todo, options.max_chars, slots)
    describe(report, todo, work, options, loc, target)
    if published:
        report.notes.append(
            f"{len(published)} segment(s) not sent: their items have a published {loc.name} "
            "translation (`import bbq`), which the release uses as published"
        )
    if rules is None and any(t.group for u in work.units for t in u.protected.tags):
        raise InputError(
            f"{locale} has no slot rules (templates/_grammar/{locale}{SLOTS_SUFFIX}): "
            "a group slot could not be turned into this locale's slot expression, so nothing is sent"
        )
    return todo, work


def _client(auth_key: str | None, server: str | None, where: str, options: Options) -> DeepL:
    """The DeepL client for one run; the key goes to it and nowhere else."""
    key = auth_key or os.environ.get(KEY_ENV)
    if not key:
        raise InputError(f"set {KEY_ENV} to your DeepL API key (free keys end in ':fx')")
    policy = RetryPolicy(retries=options.retries, budget=options.retry_budget, backoff=options.backoff)
    return DeepL(key, server, where=where, policy=policy, timeout=options.timeout)


def _run(
    client: DeepL,
    writer: DraftWriter,
    ledger: Ledger,
    todo: list[Segment],
    work: Plan,
    options: Options,
    target: str,
    server: str | None,
    on_batch: Callable[[int, int], None] | None,
) -> None:
    """Send the plan; however it ends, the report and the ledger's end line say how, and what
    is left."""
    report = writer.report
    outcome = "complete"
    try:
        send(client, writer, ledger, work.units, options, target, server, on_batch)
    except QuotaExhausted:
        outcome = "quota exhausted"
        raise
    except BaseException as exc:
        outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        raise
    finally:
        done = report.translated + report.needs_edit
        report.remaining += len(todo) - work.deferred - len(work.unsendable) - done
        report.outcome = outcome
        ledger.append(
            {
                "event": "end",
                "at": utc_now(),
                "outcome": outcome,
                "translated": report.translated,
                "needs_edit": report.needs_edit,
                "remaining": report.remaining,
            }
        )
        client.close()


def _target(catalog: Catalog, locale: str) -> str:
    """The locale's DeepL target language; refused for a locale machine translation cannot serve."""
    loc = catalog.locales[locale]
    if loc.source:
        raise InputError(f"{locale} is the source locale: there is nothing to translate into it")
    if loc.published_only:
        raise InputError(
            f"{locale} is a published-only locale (rows only from a published dataset imported as published): it has no translations"
        )
    if not loc.deepl_target:
        raise InputError(
            f"DeepL has no target for {loc.name} ({locale}): its segments go to human translation only "
            "(write drafts with `polyprobe translations draft`, then review them)"
        )
    return loc.deepl_target
