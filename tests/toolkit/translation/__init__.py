"""Tests of toolkit.translation."""
