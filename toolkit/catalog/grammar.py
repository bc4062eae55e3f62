"""The sandbox templates render in: one Jinja environment per locale, holding only that
locale's grammar macros (templates/_grammar/<locale>.j2).

Templates are data written by contributors and translators, so they get a sandboxed
environment with ``StrictUndefined``, no default globals (no ``cycler``, ``range``,
``namespace``...), no loader (no include/import), resource limits on every render
(toolkit/catalog/sandbox.py), and a static check that refuses any access to underscore attributes
before anything is rendered.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError, nodes
from jinja2 import Template as JinjaTemplate
from jinja2.exceptions import SecurityError, TemplateError

from toolkit.catalog.sandbox import (
    LIMITS,
    BoundedEnvironment,
    LimitExceeded,
    Limits,
    budget,
    macro_cycle,
    static_problems,
)
from toolkit.core.errors import Problem
from toolkit.core.fileio import FileFormatError, read_text
from toolkit.core.project import Project

_FORBIDDEN_NODES: dict[type[nodes.Node], str] = {
    nodes.Import: "import",
    nodes.FromImport: "from-import",
    nodes.Include: "include",
    nodes.Extends: "extends",
    nodes.Block: "block",
    nodes.Macro: "macro definitions (grammar macros live in templates/_grammar/)",
    nodes.CallBlock: "call blocks",
}
_WS = re.compile(r"[ \t\r\n]+")
_MISSING_ATTR = re.compile(r"has no attribute '([^']+)'")
_UNDEFINED_NAME = re.compile(r"'([^']+)' is undefined")


_EMPTY = "\ue000"
_GAP = re.compile("([ \t]*)\ue000([ \t]*)")


def _mark_empty(value: object) -> object:
    return _EMPTY if str(value) == "" else value


def _mark_empty_outputs(ast: nodes.Template) -> None:
    """Wrap every ``{{ expression }}`` of a template so an empty result leaves a marker.

    A bare group (or an empty optional form) renders as "", and the spaces around it must close
    up without touching the template's own spacing: "la donna {{ group.f }}." must become
    "la donna." while French "femme\u202f?" keeps its narrow space.
    """
    for output in ast.find_all(nodes.Output):
        output.nodes = [
            node
            if isinstance(node, nodes.TemplateData)
            else nodes.Filter(node, "mark_empty", [], [], None, None, lineno=node.lineno)
            for node in output.nodes
        ]


def _close_gap(match: re.Match[str]) -> str:
    """Close the gap an empty expression left: one space between words, none before closing
    punctuation, at the start, or where the template itself had no space on one side."""
    left, right = match.group(1), match.group(2)
    if not (left and right) or match.start() == 0:
        return ""
    after = match.string[match.end() : match.end() + 1]
    if not after or unicodedata.category(after) in ("Pe", "Pf", "Po"):
        return ""
    return " "


def _accessed_name(node: nodes.Node) -> object:
    """The attribute or constant key a Getattr / Getitem node reads."""
    if isinstance(node, nodes.Getattr):
        return node.attr
    return getattr(getattr(node, "arg", None), "value", None)


class RenderFailure(Exception):
    """A template failed for one set of values; the message says why in the user's terms.
    ``cause``: a file whose own problem this failure follows from (the grammar), if any."""

    def __init__(self, message: str, cause: str = "") -> None:
        super().__init__(message)
        self.cause = cause


OVERRUNS_PER_LOCALE = 3
"""Renders of one locale whose grammar macros may run into the sandbox's limits in one command;
after that its other renders are not tried (each would cost up to the time limit, and the
grammar, not the text, is what needs fixing)."""


@dataclass(frozen=True)
class Analysis:
    """What a text reads and what is wrong with it, found without rendering it."""

    variables: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()


@dataclass
class LocaleGrammar:
    """The sandboxed environment of one locale, with caches of analyses and compiled templates."""

    locale: str
    file: str | None
    env: BoundedEnvironment
    macros: frozenset[str]
    broken: bool = False
    """The file has a problem and none of its macros are defined: what fails for want of them
    follows from that problem (it is its cause)."""
    problems: list[Problem] | None = None
    """Where a problem of the grammar file itself found while rendering goes (the catalog's)."""
    overruns: int = 0
    """Renders whose grammar macros ran into the sandbox's limits (see OVERRUNS_PER_LOCALE)."""
    _analyses: dict[str, Analysis] = field(default_factory=dict)
    _asts: dict[str, nodes.Template] = field(default_factory=dict)
    _compiled: dict[str, JinjaTemplate] = field(default_factory=dict)
    _parts: dict[str, list[str]] = field(default_factory=dict)

    def analyse(self, text: str) -> Analysis:
        """Parse ``text`` and report syntax errors, unsafe constructs and the variables it reads."""
        cached = self._analyses.get(text)
        if cached is None:
            cached = self._analyses[text] = self._analyse(text)
        return cached

    def _analyse(self, text: str) -> Analysis:
        if len(text) > self.env.limits.max_length:
            return Analysis(
                problems=(
                    f"sandbox limit: the text has {len(text):,} characters "
                    f"(the limit is {self.env.limits.max_length:,})",
                )
            )
        try:
            ast = self.env.parse(text)
        except TemplateSyntaxError as exc:
            return Analysis(problems=(f"Jinja syntax error on line {exc.lineno}: {exc.message}",))
        except LimitExceeded as exc:
            return Analysis(problems=(f"sandbox limit: {exc}",))
        except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
            return Analysis(problems=(f"Jinja cannot parse it: {type(exc).__name__}: {exc}",))
        self._asts[text] = ast
        problems: list[str] = list(static_problems(ast, self.env))
        loads: set[str] = set()
        stores: set[str] = set()
        forbidden: set[str] = set()
        # One walk over the tree: what it reads, what it assigns, what it must not do.
        stack: list[nodes.Node] = [ast]
        while stack:
            node = stack.pop()
            for node_type, what in _FORBIDDEN_NODES.items():
                if isinstance(node, node_type):
                    forbidden.add(what)
            if isinstance(node, nodes.Name):
                (loads if node.ctx == "load" else stores).add(node.name)
            elif isinstance(node, (nodes.Getattr, nodes.Getitem)):
                name = _accessed_name(node)
                if isinstance(name, str) and name.startswith("_"):
                    problems.append(f"line {node.lineno}: access to {name!r} is not allowed")
            stack.extend(node.iter_child_nodes())
        problems.extend(f"{what} not allowed in a template" for what in sorted(forbidden))
        variables = frozenset(loads - stores) - self.macros
        return Analysis(variables=variables, problems=tuple(sorted(problems)))

    def compile(self, text: str) -> JinjaTemplate:
        """The text compiled once per locale; what Jinja or the sandbox refuses becomes a RenderFailure."""
        tpl = self._compiled.get(text)
        if tpl is None:
            try:
                ast = self._asts.pop(text, None) or self.env.parse(text)
                _mark_empty_outputs(ast)
                tpl = self.env.from_string(ast)
            except LimitExceeded as exc:
                raise RenderFailure(f"sandbox limit: {exc}") from None
            except TemplateError as exc:
                raise RenderFailure(str(exc)) from None
            except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
                raise RenderFailure(f"Jinja cannot compile it: {type(exc).__name__}") from None
            self._compiled[text] = tpl
        return tpl

    def render(self, text: str, context: dict[str, Any]) -> str:
        """Render and normalise: NFC, runs of whitespace collapsed (an empty term leaves no gap)."""
        return finish(self._run(self.compile(text), context))

    def render_cached(
        self, text: str, context: dict[str, Any], key: str, cache: dict[tuple[str, str], str]
    ) -> str:
        """The same result as ``render``, faster when many texts share expressions.

        A flat template (text and ``{{ expressions }}`` only) is the concatenation of its parts,
        so each expression is rendered once per ``key`` (the caller's name for the context, e.g.
        the group) and reused by every template that contains it."""
        parts = self._parts.get(text)
        if parts is None:
            parts = self._parts[text] = _split_flat(text)
        if not parts:
            return self.render(text, context)
        out: list[str] = []
        for part in parts:
            if part.startswith("{{") and part.endswith("}}"):
                value = cache.get((part, key))
                if value is None:
                    value = cache[(part, key)] = self._run(self.compile(part), context)
                out.append(value)
            else:
                out.append(part)
        return finish("".join(out))

    def _run(self, template: JinjaTemplate, context: dict[str, Any]) -> str:
        """Render within a fresh budget of the sandbox's limits."""
        if self.overruns >= OVERRUNS_PER_LOCALE:
            raise RenderFailure(
                f"not rendered: the grammar macros of {self.file} ran into the sandbox's limits in "
                f"{self.overruns} renders already",
                cause=self.file or "",
            )
        try:
            with budget(self.env.limits):
                return template.render(context)
        except LimitExceeded as exc:
            in_macro = [name for name in exc.inside if name in self.macros]
            if in_macro:
                self._overran(in_macro[-1], str(exc))
            raise RenderFailure(f"sandbox limit: {exc}") from None
        except RecursionError:
            raise RenderFailure("sandbox limit: calls nested too deep (a recursive macro?)") from None
        except MemoryError:
            raise RenderFailure("sandbox limit: the render ran out of memory") from None
        except SecurityError as exc:
            raise RenderFailure(f"unsafe template: {exc}") from None
        except UndefinedError as exc:
            msg = str(exc.message or exc)
            if m := _MISSING_ATTR.search(msg):
                raise RenderFailure(f"no form {m.group(1)!r}") from None
            if m := _UNDEFINED_NAME.search(msg):
                raise RenderFailure(f"unknown variable {m.group(1)!r}") from None
            raise RenderFailure(msg) from None
        except TemplateError as exc:
            raise RenderFailure(str(exc)) from None
        except (TypeError, ValueError, KeyError, IndexError, ArithmeticError) as exc:
            raise RenderFailure(f"{type(exc).__name__}: {exc}") from None

    def _overran(self, macro: str, why: str) -> None:
        """Count a render whose grammar macro ran into a limit; at the last one allowed, say so
        on the grammar file itself."""
        self.overruns += 1
        if self.overruns == OVERRUNS_PER_LOCALE and self.file and self.problems is not None:
            self.problems.append(
                Problem(
                    self.file,
                    "(grammar)",
                    f"macro {macro}",
                    f"ran into the sandbox's limits in {self.overruns} renders ({why}); the locale's "
                    "other renders were not tried: fix the macro",
                    self.locale,
                )
            )


_FLAT_SPLIT = re.compile(r"(\{\{.*?\}\})", re.DOTALL)


def _split_flat(text: str) -> list[str]:
    """Literal text and ``{{ ... }}`` pieces of a flat template; [] when it is not flat
    (statements, comments or whitespace control change what concatenation would give)."""
    if "{%" in text or "{#" in text or "{{-" in text or "-}}" in text:
        return []
    return [p for p in _FLAT_SPLIT.split(text) if p]


def finish(out: str) -> str:
    """Close the gaps empty expressions left, collapse whitespace, trim, NFC."""
    out = _GAP.sub(_close_gap, out) if _EMPTY in out else out
    out = _WS.sub(" ", out).strip()
    return out if unicodedata.is_normalized("NFC", out) else unicodedata.normalize("NFC", out)


def new_environment(limits: Limits = LIMITS) -> BoundedEnvironment:
    """A bounded sandbox that refuses undefined variables and marks empty expressions, so an empty
    term leaves no double space behind."""
    env = BoundedEnvironment(limits, undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.filters["mark_empty"] = _mark_empty
    return env


def load_grammar(project: Project, locale: str, problems: list[Problem]) -> LocaleGrammar:
    """The locale's environment with its grammar macros; a locale without a file gets none."""
    env = new_environment()
    path = project.grammar / f"{locale}.j2"
    if not path.is_file():
        return LocaleGrammar(locale, None, env, frozenset())
    rel = project.rel(path)
    try:
        source = read_text(path, rel)
        ast = env.parse(source)
    except TemplateSyntaxError as exc:
        problems.append(
            Problem(rel, "(grammar)", f"line {exc.lineno}", f"Jinja syntax error: {exc.message}", locale)
        )
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    except FileFormatError as exc:
        problems.append(exc.problem(locale))
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    except (LimitExceeded, RecursionError, MemoryError, ValueError, OverflowError) as exc:
        why = (
            f"sandbox limit: {exc}"
            if isinstance(exc, LimitExceeded)
            else f"cannot parse: {type(exc).__name__}"
        )
        problems.append(Problem(rel, "(grammar)", "", why, locale))
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    refused = static_problems(ast, env)
    if refused:
        problems.extend(Problem(rel, "(grammar)", "", message, locale) for message in refused)
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    cycle = macro_cycle(ast)
    if cycle is not None:
        macro, chain = cycle
        problems.append(
            Problem(
                rel,
                "(grammar)",
                f"line {macro.lineno}",
                f"macro {macro.name!r} calls itself ({' -> '.join(chain)}): a grammar macro may not "
                "recurse (its renders would each run into the sandbox's limits)",
                locale,
            )
        )
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    names = [m.name for m in ast.find_all(nodes.Macro) if not m.name.startswith("_")]
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        name = _accessed_name(node)
        if isinstance(name, str) and name.startswith("_"):
            problems.append(
                Problem(rel, "(grammar)", f"line {node.lineno}", f"access to {name!r} is not allowed", locale)
            )
            return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    try:
        with budget(env.limits):
            module = env.from_string(ast).module
    except (TemplateError, TypeError, ValueError, ArithmeticError, RecursionError, MemoryError) as exc:
        why = f"sandbox limit: {exc}" if isinstance(exc, LimitExceeded) else f"{type(exc).__name__}: {exc}"
        problems.append(Problem(rel, "(grammar)", "", f"the macros do not load: {why}", locale))
        return LocaleGrammar(locale, rel, env, frozenset(), broken=True)
    env.globals.update({name: getattr(module, name) for name in names})
    return LocaleGrammar(locale, rel, env, frozenset(names), problems=problems)
