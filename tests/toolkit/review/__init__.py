"""Tests of toolkit.review."""
