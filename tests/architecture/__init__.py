"""The layer contract of docs/architecture.md."""
