"""Reports over evaluation runs: plots, a self-contained HTML page and Markdown tables
(`polyprobe eval report`). It imports matplotlib: the CLI imports it only for that command."""

from __future__ import annotations

from evaluator.report.build import ReportResult, build_report

__all__ = ["ReportResult", "build_report"]
