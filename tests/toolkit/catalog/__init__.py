"""Tests of toolkit.catalog."""
