"""Exports of releases to other evaluation frameworks (lm-evaluation-harness)."""
