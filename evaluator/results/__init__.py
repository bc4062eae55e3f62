"""What a run's metrics.json holds, one typed model per task (pydantic, unknown keys refused):
the task writes it, and the report, `eval merge`, the sweep summary and the comparison read it
back, so a renamed or missing field is a type error or a validation error, never a silent "—".

Fields that runs written before the field existed lack (bootstrap intervals, Holm-adjusted
p-values, BBQ's no-target counts, ...) have a default, so older run folders still read; a
model is written back with exactly the keys it was given (:meth:`TaskMetrics.dump`)."""
