"""Tests of evaluator.backends."""
