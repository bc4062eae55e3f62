"""Tests of toolkit.store."""
