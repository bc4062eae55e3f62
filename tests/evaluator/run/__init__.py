"""One run (evaluator.run, run_folder, signature, cache)."""
