"""Tests of the evaluator, one folder per package; its top modules' tests here."""
