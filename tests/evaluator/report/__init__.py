"""Tests of evaluator.report."""
