"""Tests of toolkit.importers."""
