"""polyprobe toolkit: dataset construction, translation management and releases.

This package never imports torch, transformers or the evaluator.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("polyprobe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
