"""polyprobe evaluator: scores language models on frozen releases (read only through
toolkit.release), with backends, tasks, metrics and reports."""
