"""`python -m toolkit.cli`: the same as the `polyprobe` command."""

from toolkit.cli import entry

entry()
