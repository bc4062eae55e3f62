"""Tests of evaluator.export."""
