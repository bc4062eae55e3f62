"""Tests of the toolkit, one folder per package."""
