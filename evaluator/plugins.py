"""Tasks and backends that other installed packages add, found through Python entry points, so a
plugin is offered by `eval run --task/--backend` and sweep files like a built-in one:

    [project.entry-points."polyprobe.tasks"]
    fluency = "my_package.tasks:FLUENCY"           # a TaskDescriptor whose name is the entry's

    [project.entry-points."polyprobe.backends"]
    rules = "my_package.backends:RuleBackend"      # a Backend class, imported when chosen

A plugin that cannot be loaded, or whose name a built-in already has, is left out with a warning
naming the entry point and its package: one broken plugin does not stop the others or the CLI."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint, entry_points

TASK_GROUP = "polyprobe.tasks"
BACKEND_GROUP = "polyprobe.backends"


def plugin_entries(group: str) -> list[EntryPoint]:
    """The group's entry points of every installed package, by name (a fixed order)."""
    return sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def describe(ep: EntryPoint) -> str:
    """The entry point as a warning names it: group, name, value and the package it comes from."""
    package = ep.dist.name if ep.dist is not None else "an unknown package"
    return f"{ep.group} entry point {ep.name!r} = {ep.value!r} (from {package})"


def warn_left_out(ep: EntryPoint, why: str) -> None:
    """One `warning:` line on stderr: this plugin is not offered, and why."""
    sys.stderr.write(f"warning: {describe(ep)} is left out: {why}\n")
