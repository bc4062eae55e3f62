"""Fine-tuning for the sentiment study's phases 1 and 3 (Levy et al. 2023): the user's own
labelled data read and checked (``data``), a sequence classifier trained from a base model with
the transformers Trainer (``train``), the jobs of a monolingual / multilingual comparison
(``plan``), the study that fine-tunes, evaluates and compares them (``study``) and its report
(``study_report``). The output of a fine-tuning is a model folder that `eval run --model` takes."""
