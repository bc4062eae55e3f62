"""Frozen, versioned, verifiable releases: build (toolkit.release.build), and the reader the
evaluator uses (open_release / verify)."""

from toolkit.release.reader import MANIFEST, Release, ReleaseInvalid, open_release, verify

__all__ = ["MANIFEST", "Release", "ReleaseInvalid", "open_release", "verify"]
