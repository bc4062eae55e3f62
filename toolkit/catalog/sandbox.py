"""The resource limits of the template sandbox.

Jinja's sandbox keeps templates away from Python's internals, but not from exhausting the
machine: ``{{ 10**(10**9) }}``, ``'x' * 10**20``, ``'x'.ljust(10**11)``, nested loops, a
recursive macro or 2,000 nested parentheses hang a render or end in a traceback. Templates
and translations are data written by contributors, vendors and machine translation, so every
render runs within limits, and an operation that would exceed one is refused *before* it runs
(a size is estimated first) with a message naming the limit; the renderer turns it into a
located problem.

- size: integers of at most ``max_int_bits`` bits; strings and sequences of at most
  ``max_length`` characters or items (counted deep: a list of strings counts their characters);
  at most ``max_length`` characters of output per render;
- work: at most ``max_steps`` loop iterations, calls and operations per render, and
  ``max_seconds`` of time;
- depth: calls nested at most ``max_depth`` deep (a recursive macro), brackets nested at most
  ``max_nesting`` deep and expressions at most ``max_tree_depth`` nodes deep (checked before parsing
  and after, see ``static_problems``).

Lists, dicts and sets cannot be modified (the immutable sandbox), so no value can grow in
place or contain itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass, field
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.exceptions import TemplateRuntimeError
from jinja2.runtime import Context, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.visitor import NodeTransformer


@dataclass(frozen=True)
class Limits:
    """The bounds of one render (see the module docstring)."""

    max_int_bits: int = 128
    max_length: int = 10_000
    max_steps: int = 10_000
    max_depth: int = 30
    max_nesting: int = 32
    max_tree_depth: int = 100
    max_seconds: float = 1.0


LIMITS = Limits()

# Filters a template may use: the ones a grammar needs, each bounded by the checks below.
# The others (indent, wordwrap, format, random, map, batch, ...) are refused by name.
ALLOWED_FILTERS = frozenset(
    {
        "abs",
        "capitalize",
        "count",
        "d",
        "default",
        "first",
        "float",
        "int",
        "join",
        "last",
        "length",
        "list",
        "lower",
        "max",
        "min",
        "replace",
        "reverse",
        "round",
        "sort",
        "string",
        "sum",
        "title",
        "trim",
        "truncate",
        "unique",
        "upper",
        "wordcount",
    }
)
# str methods that expand by rules these checks cannot bound.
_DENIED_METHODS = frozenset({"expandtabs", "translate", "encode", "maketrans"})
_DIGITS = re.compile(r"\d+")
_OPEN, _CLOSE = "([{", ")]}"


class LimitExceeded(TemplateRuntimeError):
    """A render would exceed one of the sandbox's limits. ``inside``: the calls (macros, methods)
    the render was in at that moment, outermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        current = _BUDGET.get()
        self.inside: tuple[str, ...] = tuple(current.macros) if current is not None else ()


@dataclass
class Budget:
    """What one render may still spend."""

    limits: Limits
    deadline: float
    steps: int = 0
    depth: int = 0
    output: int = 0
    macros: list[str] = field(default_factory=list)

    def step(self) -> None:
        """Count one loop iteration, call or operation, and refuse to go past the step or time limit."""
        self.steps += 1
        if self.steps > self.limits.max_steps:
            raise LimitExceeded(
                f"more than {self.limits.max_steps:,} loop iterations, calls and operations in one render"
            )
        if time.monotonic() > self.deadline:
            raise LimitExceeded(f"the render took longer than {self.limits.max_seconds:g} s")


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("polyprobe_budget", default=None)


@contextlib.contextmanager
def budget(limits: Limits = LIMITS) -> Iterator[Budget]:
    """A fresh budget for one render."""
    current = Budget(limits, time.monotonic() + limits.max_seconds)
    token = _BUDGET.set(current)
    try:
        yield current
    finally:
        _BUDGET.reset(token)


def _step() -> None:
    current = _BUDGET.get()
    if current is not None:
        current.step()


def size(value: Any) -> int:
    """Characters of a string, items of a sequence or mapping plus the sizes of what they hold."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, dict):
        return len(value) + sum(size(k) + size(v) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) + sum(size(v) for v in value)
    return 0


def _int_bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


def check_value(value: Any, limits: Limits = LIMITS) -> Any:
    """``value`` unchanged when it is within the limits; otherwise LimitExceeded."""
    bits = _int_bits(value)
    if bits > limits.max_int_bits:
        raise LimitExceeded(f"an integer of {bits:,} bits (the limit is {limits.max_int_bits})")
    length = size(value)
    if length > limits.max_length:
        raise LimitExceeded(f"a value of {length:,} characters or items (the limit is {limits.max_length:,})")
    return value


def _too_long(estimate: int, what: str, limits: Limits) -> None:
    if estimate > limits.max_length:
        raise LimitExceeded(
            f"{what} would make {estimate:,} characters or items (the limit is {limits.max_length:,})"
        )


def _check_format(fmt: str, limits: Limits) -> None:
    """A %-format or str.format spec with a huge width or precision ('%99999999999d')."""
    for digits in _DIGITS.findall(fmt):
        if len(digits) > 6 or int(digits) > limits.max_length:
            raise LimitExceeded(f"a format width of {digits} characters (the limit is {limits.max_length:,})")


def _check_binop(operator: str, left: Any, right: Any, limits: Limits) -> None:
    """Refuse an operation whose result would exceed the limits, before computing it."""
    if operator == "**" and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
        bits = right * math.log2(abs(left))
        if bits > limits.max_int_bits:
            raise LimitExceeded(
                f"{left} ** {right} would be an integer of about {bits:,.0f} bits "
                f"(the limit is {limits.max_int_bits})"
            )
    elif operator == "*":
        if _is_int(left) and _is_int(right):
            bits = _int_bits(left) + _int_bits(right)
            if bits > limits.max_int_bits:
                raise LimitExceeded(f"a product of about {bits:,} bits (the limit is {limits.max_int_bits})")
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, str | list | tuple) and _is_int(times) and times > 0:
                _too_long(max(size(seq), 1) * times, f"repeating a value {times:,} times", limits)
    elif operator == "%" and isinstance(left, str):
        _check_format(left, limits)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], limits: Limits) -> None:
    """Refuse a call to a built-in method or filter whose result would exceed the limits."""
    for arg in (*args, *kwargs.values()):
        if _is_int(arg) and abs(arg) > limits.max_length:
            raise LimitExceeded(f"an argument of {arg:,} (the limit is {limits.max_length:,})")
    target = getattr(func, "__wrapped__", func)  # the sandbox wraps str.format
    name = getattr(target, "__name__", "")
    owner = getattr(target, "__self__", None)
    if name in ("format", "format_map") and isinstance(owner, str):
        _check_format(owner, limits)
    elif name == "replace" and isinstance(owner, str) and len(args) >= 2:
        _check_replace(owner, args[0], args[1], limits)
    elif name == "join" and isinstance(owner, str) and args:
        _check_join(owner, args[0], limits)


def _check_replace(text: Any, old: Any, new: Any, limits: Limits) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        hits = text.count(old) if old else len(text) + 1
        _too_long(len(text) + hits * max(len(new) - len(old), 0), "replace", limits)


def _check_join(separator: Any, items: Any, limits: Limits) -> None:
    if isinstance(items, Sized) and isinstance(items, Iterable):
        total = sum(len(str(item)) if isinstance(item, str) else size(item) for item in items)
        _too_long(total + len(str(separator)) * len(items), "join", limits)


def _guard_filter(name: str, func: Callable[..., Any], limits: Limits) -> Callable[..., Any]:
    """A built-in filter wrapped in the same checks as a call from the template."""
    lead = 1 if getattr(func, "jinja_pass_arg", None) is not None else 0  # context/environment first

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _step()
        values = list(args)
        if len(values) > lead and isinstance(values[lead], Iterator):
            values[lead] = _bounded_list(values[lead], limits)  # a generator: count it as it is read
        value = values[lead] if len(values) > lead else None
        rest = tuple(values[lead + 1 :])
        _check_call(func, rest, kwargs, limits)
        if name == "replace" and len(rest) >= 2:
            _check_replace(value, rest[0], rest[1], limits)
        elif name == "join":
            _check_join(rest[0] if rest else "", value, limits)
        return check_value(func(*values, **kwargs), limits)

    return guarded


def _bounded_list(items: Iterable[Any], limits: Limits) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.append(item)
        _too_long(len(out), "a sequence", limits)
    return out


class _Bound(NodeTransformer):
    """Route loop iterations, concatenations and outputs through the budget's checks."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _wrap(node.iter, "bounded_loop")
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _wrap(node, "bounded_value")

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [_wrap(child, "bounded_output") for child in node.nodes]
        return node


def _wrap(node: nodes.Node, filter_name: str) -> nodes.Filter:
    return nodes.Filter(node, filter_name, [], [], None, None, lineno=node.lineno)


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox with the limits of this module on every render."""

    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "%", "**"})

    def __init__(self, limits: Limits = LIMITS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = limits
        self.globals.clear()
        self.filters = {
            name: _guard_filter(name, func, limits)
            for name, func in self.filters.items()
            if name in ALLOWED_FILTERS
        }
        self.filters["bounded_loop"] = self._bounded_loop
        self.filters["bounded_output"] = self._bounded_output
        self.filters["bounded_value"] = self._bounded_value

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """Jinja's rule, and none of the string methods the size checks cannot bound (``_DENIED_METHODS``)."""
        if isinstance(obj, str) and attr in _DENIED_METHODS:
            return False
        return super().is_safe_attribute(obj, attr, value)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """An arithmetic operation, refused before it runs if its result would exceed a limit."""
        _step()
        _check_binop(operator, left, right, self.limits)
        return check_value(super().call_binop(context, operator, left, right), self.limits)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """A call, counted and bounded: calls nest at most ``max_depth`` deep, a callable that is not a
        macro has its arguments checked first, and every result is checked."""
        current = _BUDGET.get()
        if current is not None:
            current.step()
        if not isinstance(__obj, Macro):
            _check_call(__obj, args, kwargs, __self.limits)
        if current is None:
            return check_value(super().call(__context, __obj, *args, **kwargs), __self.limits)
        current.depth += 1
        current.macros.append(str(getattr(__obj, "name", None) or getattr(__obj, "__name__", "?")))
        try:
            if current.depth > __self.limits.max_depth:
                chain = " -> ".join(current.macros[-4:])
                raise LimitExceeded(
                    f"calls nested more than {__self.limits.max_depth} deep (a recursive macro? ... {chain})"
                )
            return check_value(super().call(__context, __obj, *args, **kwargs), __self.limits)
        finally:
            current.depth -= 1
            current.macros.pop()

    @staticmethod
    @pass_context
    def _bounded_loop(context: Context, items: Any) -> Iterator[Any]:
        for item in items:
            _step()
            yield item

    @staticmethod
    @pass_context
    def _bounded_output(context: Context, value: Any) -> Any:
        env = context.environment
        limits = env.limits if isinstance(env, BoundedEnvironment) else LIMITS
        check_value(value, limits)
        current = _BUDGET.get()
        if current is not None:
            current.output += len(str(value))
            if current.output > limits.max_length:
                raise LimitExceeded(f"more than {limits.max_length:,} characters of output in one render")
        return value

    @staticmethod
    @pass_context
    def _bounded_value(context: Context, value: Any) -> Any:
        env = context.environment
        return check_value(value, env.limits if isinstance(env, BoundedEnvironment) else LIMITS)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """Parse, refusing nesting the parser or the compiler would recurse through too deeply."""
        nesting = bracket_depth(source)
        if nesting > self.limits.max_nesting:
            raise LimitExceeded(f"brackets nested {nesting} deep (the limit is {self.limits.max_nesting})")
        ast = super()._parse(source, name, filename)
        depth = tree_depth(ast)
        if depth > self.limits.max_tree_depth:
            raise LimitExceeded(
                f"an expression nested {depth} deep (the limit is {self.limits.max_tree_depth})"
            )
        return ast

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        """Jinja's hook before code generation: every compiled template counts its loop
        iterations and checks its concatenations and outputs."""
        _Bound().visit(source)
        return super()._generate(source, name, filename, defer_init)


def bracket_depth(source: str) -> int:
    """How deep brackets nest in ``source`` (checked before parsing: the parser recurses per level)."""
    depth = deepest = 0
    for char in source:
        if char in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
    return deepest


def tree_depth(ast: nodes.Node) -> int:
    """The depth of a parsed template (the compiler recurses per level)."""
    deepest = 0
    stack: list[tuple[nodes.Node, int]] = [(ast, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.iter_child_nodes())
    return deepest


def macro_cycle(ast: nodes.Template) -> tuple[nodes.Macro, list[str]] | None:
    """A macro of ``ast`` that calls itself, directly or through others, and the chain of calls
    (``ping -> pong -> ping``); None when no macro does. A macro counts as calling every macro
    its body names (a call, or a value passed on: the sandbox cannot follow a name at run
    time), top-level aliases (``{% set p = ping %}``) included. Found before anything renders:
    recursion among macros that branch stays under the depth limit and spends the step and time
    limits of every render instead, a second each."""
    macros = {m.name: m for m in ast.find_all(nodes.Macro)}

    def names(node: nodes.Node) -> set[str]:
        found = [node] if isinstance(node, nodes.Name) else []
        return {n.name for n in [*found, *node.find_all(nodes.Name)] if n.ctx == "load"}

    aliases: dict[str, set[str]] = {}
    for assign in ast.body:
        if isinstance(assign, nodes.Assign) and isinstance(assign.target, nodes.Name):
            named = names(assign.node) & macros.keys()
            if named:
                aliases[assign.target.name] = named
    calls: dict[str, set[str]] = {}
    for name, macro in macros.items():
        refs = set().union(*(names(node) for node in macro.body)) if macro.body else set()
        refs -= {arg.name for arg in macro.args}  # a parameter named like a macro is the parameter
        calls[name] = (refs & macros.keys()).union(*(aliases.get(ref, set()) for ref in refs))
    for start in sorted(macros):  # depth-first, reporting the first cycle found from each start
        path = [start]
        stack = [iter(sorted(calls[start]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                path.pop()
            elif nxt == start:
                return macros[start], [*path, start]
            elif nxt not in path:
                path.append(nxt)
                stack.append(iter(sorted(calls[nxt])))
    return None


def static_problems(ast: nodes.Template, env: BoundedEnvironment) -> list[str]:
    """What the sandbox refuses by looking at a template: filters outside the allowed set,
    recursive loops (their iterations escape the step count)."""
    problems: list[str] = []
    for node in ast.find_all(nodes.Filter):
        if node.name not in env.filters:
            problems.append(
                f"line {node.lineno}: filter {node.name!r} is not allowed in a template "
                f"(allowed: {', '.join(sorted(ALLOWED_FILTERS))})"
            )
    for test in ast.find_all(nodes.Test):
        if test.name not in env.tests:
            problems.append(f"line {test.lineno}: unknown test {test.name!r}")
    for loop in ast.find_all(nodes.For):
        if loop.recursive:
            problems.append(f"line {loop.lineno}: recursive loops are not allowed in a template")
    return sorted(set(problems))
