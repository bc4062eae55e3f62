"""Tests of evaluator.tasks."""
