"""The benches in bench/ that CI runs or relies on."""
