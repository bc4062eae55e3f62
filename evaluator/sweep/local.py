"""The local executor: jobs in order on this machine, each model loaded once and reused for all
its tasks, then let go before the next model is loaded."""

from __future__ import annotations

import gc
import os
import sys

from evaluator.backends.base import Backend
from evaluator.cache import ResponseCache
from evaluator.run import evaluate, load_backend
from evaluator.sweep.driver import Driver, Shortfall, Work, WorkDone, describe
from evaluator.sweep.progress import Event
from evaluator.sweep.spec import ModelPlan
from toolkit.core.project import cache_dir


def free_accelerator() -> None:
    """Give a finished model's GPU memory back before the next one loads."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


class LocalExecutor:
    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def check(self, plans: list[ModelPlan]) -> list[Shortfall]:
        """Nothing to check: a model's `device` decides where it runs (`gpus`/`cpus` are Ray's)."""
        return []

    def run(self, plans: list[ModelPlan], driver: Driver) -> None:
        pid = os.getpid()
        cache_path = driver.sweep.cache or cache_dir() / "responses.sqlite"
        for plan in plans:
            backend: Backend | None = None
            load_error: str | None = None
            for job in plan.jobs:
                driver.event(Event("start", job.id, pid=pid))
                progress = driver.progress_for(job, pid)
                if backend is None and load_error is None:
                    try:
                        backend = load_backend(job.options, progress)
                    except Exception as exc:
                        load_error = f"the model could not be loaded: {describe(exc)}"
                if backend is None:
                    driver.fail(job, load_error or "the model could not be loaded")
                    continue
                backend.progress = progress
                cache = ResponseCache(cache_path)
                try:
                    evaluation = evaluate(job.options, driver.release, backend, cache)
                except Exception as exc:
                    driver.fail(job, describe(exc))
                else:
                    driver.complete(job, evaluation)
                finally:
                    cache.close()
            del backend
            free_accelerator()

    def run_work(self, work: list[Work], done: WorkDone) -> None:
        """One item after the other, here; its GPU memory given back before the next."""
        for item in work:
            try:
                result = item.function(*item.arguments)
            except Exception as exc:
                done(item, None, describe(exc))
            else:
                done(item, result, None)
            finally:
                free_accelerator()
