"""Evaluation sweeps: models × tasks × seeds on one release, run locally or on Ray."""

from evaluator.sweep.runner import SweepResult, run_sweep
from evaluator.sweep.spec import Sweep, SweepFileError, load_sweep

__all__ = ["Sweep", "SweepFileError", "SweepResult", "load_sweep", "run_sweep"]
