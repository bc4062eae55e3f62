"""Tests of evaluator.metrics."""
