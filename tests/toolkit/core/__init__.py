"""Tests of toolkit.core."""
