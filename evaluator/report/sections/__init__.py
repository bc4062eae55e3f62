"""One run's section per task (a module each, named by the task's descriptor: evaluator.tasks):
its plots, its tables (with the significance tests the metric has) and the metrics the run could
not compute, read from the run's typed metrics (evaluator.results) and, where a plot needs
samples, from predictions.parquet."""
