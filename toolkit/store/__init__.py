"""The translation store (translations/<locale>/<suite>.jsonl): its records and events (model),
its rules (what is current, which status may follow which), its files (strict reads, locks,
atomic writes) and their repair. Imports only toolkit.core."""
