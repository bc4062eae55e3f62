"""Bias metrics as pure functions over polars frames of predictions; each documents its formula
and is tested against hand-computed values and independent implementations."""
