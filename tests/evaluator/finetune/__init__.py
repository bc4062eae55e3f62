"""Tests of evaluator.finetune."""
