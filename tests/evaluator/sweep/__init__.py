"""Tests of evaluator.sweep."""
