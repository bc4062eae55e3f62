"""`polyprobe review push | pull | status | server`: native speakers' review in Label Studio."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import PUSHABLE, Suite, plain
from toolkit.cli.common import (
    JsonFlag,
    Root,
    err_console,
    list_option,
    out_console,
    print_json,
    print_table,
    project_at,
    say,
    table,
)
from toolkit.release.sealed import refuse_inside_release
from toolkit.review.labelstudio import INTERFACE_VERSION, Client, Settings
from toolkit.review.labelstudio_server import (
    find_label_studio,
    fresh_data_dir,
    server_env,
    start,
    stop,
    stopped_on_sigterm,
    wait_healthy,
)
from toolkit.review.policy import load_policy
from toolkit.review.pull import pull
from toolkit.review.push import push
from toolkit.review.status import REVIEW_COLUMNS, review_status

app = typer.Typer(help="Human review of translations in Label Studio.", no_args_is_help=True)


@app.command("push")
def push_command(
    locale: Annotated[str, typer.Option("--locale", help="The translations' locale, e.g. he.")],
    suite: Annotated[Suite, typer.Option("--suite", help="The suite to review.", callback=plain)],
    status: Annotated[
        list[str] | None,
        list_option(
            "--status",
            help="Statuses to send (default: draft, machine, needs_edit).",
            choices=PUSHABLE,
            metavar="STATUS",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="At most this many new tasks in this push (a task: one segment, e.g. gen-01.f, with "
            "its renderings); segments already in the project do not count.",
        ),
    ] = None,
    root: Root = None,
) -> None:
    """Send translations for review (one project per locale and suite; never the same segment twice).

    Label Studio's address and key come from LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY."""

    statuses = status or ["draft", "machine", "needs_edit"]
    settings = Settings.from_env()
    project = project_at(root)
    catalog = load_catalog(project, suites=[suite], locales=[locale])
    policy = load_policy(project)
    with err_console.status(f"pushing {locale}/{suite} to Label Studio"):
        report = push(Client(settings), catalog, policy, locale, suite, statuses, limit)
    say(
        f"{locale}/{suite}: {len(report.pushed)} task(s) pushed, {report.already} already in project {report.project}"
    )
    if report.settings_changed:
        say(
            f"project settings set: {', '.join(report.settings_changed)} (review interface "
            f"{INTERFACE_VERSION}, {report.reviewers} reviewer(s) per task in the label stream)"
        )
    if report.upgraded:
        say(f"{report.upgraded} earlier task(s) brought to review interface {INTERFACE_VERSION}")
    if report.outdated:
        say(
            f"{report.outdated} task(s) made for an earlier English source marked outdated "
            "(a notice with the new English; out of the label stream)"
        )


@app.command("pull")
def pull_command(
    locale: Annotated[str, typer.Option("--locale", help="The locale whose reviews to bring back, e.g. he.")],
    suite: Annotated[
        list[str] | None,
        list_option("--suite", help="Suites (default: all).", choices=Suite, metavar="SUITE"),
    ] = None,
    root: Root = None,
) -> None:
    """Bring verdicts and edits back into the store, once each, and apply the review policy."""

    project = project_at(root, writes=True)
    catalog = load_catalog(project, suites=suite or None, locales=[locale])
    suites = list(suite) if suite else [s for s in catalog.suites if locale in catalog.suites[s].spec.locales]
    with err_console.status(f"pulling {locale} reviews from Label Studio"):
        report = pull(Client(Settings.from_env()), catalog, load_policy(project), locale, suites)
    say(f"{locale}: {report.events} new review event(s); {len(report.changed)} translation(s) changed status")
    if report.flagged:
        say(f"flagged (edit breaks the template, not applied): {', '.join(sorted(set(report.flagged)))}")
    for line in report.refused:
        say(f"warning: {line}")
    if report.inconsistent:
        say(
            "inconsistent (verdict and text disagree, not counted): "
            f"{', '.join(sorted(set(report.inconsistent)))}"
        )
    if report.saved_over:
        say(
            "saved over another reviewer's annotation (not counted, the owner's verdict stands): "
            f"{', '.join(sorted(set(report.saved_over)))}"
        )
    for line in report.waiting:
        say(f"not decided yet: {line}")
    if report.notices:
        say(f"{report.notices} task(s) got a new or cleared notice for their annotators")
    if report.statuses:
        say(f"{report.statuses} task(s) got their status column brought up to date")
    if report.outdated:
        say(f"{report.outdated} annotation(s) on an outdated English source were ignored")
    if report.outdated_tasks:
        say(
            f"{report.outdated_tasks} task(s) made for an earlier English source marked outdated "
            "(a notice with the new English; out of the label stream)"
        )


@app.command("status")
def status_command(
    locale: Annotated[
        list[str] | None, list_option("--locale", help="Locales (default: all).", metavar="LOCALE")
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Pending / reviewed / approved / rejected / in adjudication, and reviewer agreement.

    One table per suite, a column per locale. alpha: Krippendorff's alpha over the verdicts of
    segments reviewed by two or more. Texts: for every two reviewers of a segment who both kept a
    text (the draft for accept, their edit for edited), the share whose texts are identical and
    the mean chrF between the two texts (100: the same text)."""

    catalog = load_catalog(project_at(root), eager=False)
    rows = []
    for suite in catalog.suites.values():
        for code in suite.spec.locales:
            if (
                code in catalog.locales
                and catalog.locales[code].translated
                and (not locale or code in locale)
            ):
                rows.append(review_status(catalog, code, suite.id))
    if json:
        print_json([r.__dict__ for r in rows])
        return
    cols = [c for c in REVIEW_COLUMNS if c not in ("stale", "untranslated")]  # see `translations status`
    for sid in dict.fromkeys(r.suite for r in rows):
        mine = [r for r in rows if r.suite == sid]
        if not any(n for r in mine for n in r.counts.values()):
            out_console.print(f"review status: {sid}: no segments", highlight=False, markup=False)
            continue
        grid = table(f"review status: {sid}")
        grid.add_column("")
        for r in mine:
            grid.add_column(r.locale, justify="right")
        measures: list[tuple[str, list[str]]] = [
            (c.replace("_", " "), [str(r.counts[c]) for r in mine]) for c in cols
        ]
        measures += [
            ("inconsistent reviews", [str(r.inconsistent) for r in mine]),
            ("saved over another's", [str(r.saved_over) for r in mine]),
            ("flagged edits", [str(sum(r.flagged.values())) for r in mine]),
            ("alpha (verdicts)", [_number(r.alpha, "{:.3f}") for r in mine]),
            ("reviewer pairs with texts", [str(r.text_pairs) for r in mine]),
            ("texts identical", [_number(r.text_exact, "{:.0%}") for r in mine]),
            ("texts chrF", [_number(r.text_chrf, "{:.1f}") for r in mine]),
        ]
        for name, values in measures:
            grid.add_row(name, *values)
        print_table(grid)
    flagged = [(r, reason, n) for r in rows for reason, n in r.flagged.items()]
    if flagged:
        reasons = table("flagged edits by reason (not applied)")
        for col in ("locale", "suite", "reason", "annotations"):
            reasons.add_column(col)
        for r, reason, n in flagged:
            reasons.add_row(r.locale, r.suite, reason, str(n))
        print_table(reasons)


def _number(value: float | None, form: str) -> str:
    return form.format(value) if value is not None else "-"


@app.command("server")
def server_command(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8089,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Default: .polyprobe/label-studio")
    ] = None,
    username: Annotated[
        str, typer.Option("--username", envvar="LABEL_STUDIO_USERNAME")
    ] = "admin@polyprobe.local",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1,
            help="Seconds to wait for Label Studio to answer its health check. A first start sets "
            "up its database (a minute or more, longer on a busy machine).",
        ),
    ] = 600,
    root: Root = None,
) -> None:
    """Start a local Label Studio on 127.0.0.1 (admin and token from LABEL_STUDIO_PASSWORD and
    LABEL_STUDIO_API_KEY, created without prompts) and wait for its health check; stop it with
    Ctrl-C or SIGTERM (Label Studio stops with it)."""

    if data_dir is not None:
        refuse_inside_release(data_dir, "--data-dir")
    project = project_at(root, writes=data_dir is None, announce=True)
    env = server_env(
        username, os.environ.get("LABEL_STUDIO_PASSWORD", ""), os.environ.get("LABEL_STUDIO_API_KEY", "")
    )
    folder = data_dir or project.root / ".polyprobe" / "label-studio"
    log = folder / "server.log"
    url = f"http://127.0.0.1:{port}"
    binary = find_label_studio(project.root)
    cold = "first start: it sets up its database; " if fresh_data_dir(folder) else ""
    with stopped_on_sigterm():
        process = None
        try:
            process = start(binary, folder, port, env, log=log)
            say(f"waiting up to {timeout:.0f}s for Label Studio to answer {url}/health ({cold}log: {log})")
            wait_healthy(url, timeout, process, log=log)
            say(
                f"Label Studio is up at {url} (data in {folder}); log in as {username}. "
                f"Set LABEL_STUDIO_URL={url}."
            )
            process.wait()
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM from a supervisor: the way to stop it
            say(f"stopping Label Studio (its data stays in {folder})")
        finally:
            if process is not None:
                stop(process)
