"""Tests of toolkit.render."""
