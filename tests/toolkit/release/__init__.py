"""Tests of toolkit.release."""
