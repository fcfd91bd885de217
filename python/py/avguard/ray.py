"""Scoring and learning on a Ray cluster, with the CLI's outputs.

One Ray task per batch of logs (``batch_size``, default one log). The workers run the same Rust code as
``avguard score`` / ``avguard learn`` on their logs; the driver merges what comes back with the same Rust
code too, so ``score.json``, ``report.md``, ``report.html`` and the model file are byte for byte the CLI's
on the same inputs. A log that fails (or whose task dies) fails alone and is listed, as in the CLI.

The logs must be readable at the same paths on every node (a shared or replicated folder); the model and
the laws travel through Ray's object store. ``address`` is passed to ``ray.init`` (``None``: the
``RAY_ADDRESS`` environment variable, else a local Ray started for the call).
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

import pandas as pd

import warnings

from . import (
    DEFAULT_THRESHOLDS,
    Counts,
    Model,
    Paths,
    PathLike,
    Progress,
    _native,
    _opt,
    _paths,
    _counts_as_learned,
    _progress,
    finish_job,
)

__all__ = ["score", "learn"]

# Scorers already built in this worker process, by their settings (building one decodes the model).
_SCORERS: dict = {}


def _connect(address: Optional[str]):
    import ray

    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    return ray


def _batches(items: list, batch_size: int) -> list:
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]


def _score_batch(model_bytes: bytes, thresholds: list, horizon, conservative: bool, map, paths: list) -> list:
    """A Ray task: each log's result bytes, or its error message."""
    key = (hash(model_bytes), len(model_bytes), tuple(thresholds), horizon, conservative, map)
    scorer = _SCORERS.get(key)
    if scorer is None:
        scorer = _native.Scorer(model_bytes, thresholds, horizon, conservative, None, map)
        _SCORERS.clear()
        _SCORERS[key] = scorer
    out = []
    for path in paths:
        try:
            out.append((path, True, scorer.score(path)))
        except _native.AvguardError as error:
            # As `avguard score` lists it: a message that names the file already starts with it.
            message, named = str(error), f"{path}: "
            out.append((path, False, message[len(named):] if message.startswith(named) else message))
    return out


def _finished(ray, pending: dict, callback):
    """Waits for every task, yielding ``(batch, result, None)`` as each finishes, or ``(batch, None,
    message)`` for a task that died (a worker crash, a lost node): its logs fail, not the run."""
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            batch = pending.pop(ref)
            try:
                yield batch, ray.get(ref), None
            except Exception as error:
                yield batch, None, f"Ray task failed: {error}"
            if callback is not None:
                callback(len(batch))


def score(
    paths: Paths,
    model: "PathLike | Model",
    out: PathLike,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    horizon: Optional[float] = None,
    conservative: bool = False,
    force: bool = False,
    plot_runs: int = 3,
    address: Optional[str] = None,
    batch_size: int = 1,
    progress: Progress = False,
    map: Optional[PathLike] = None,
) -> pd.DataFrame:
    """``avguard score --model MODEL --out OUT LOGS`` with the logs scored on a Ray cluster (``map``:
    ``--map``, which must be readable on every node like the logs).

    Writes the same files as the CLI and returns one row per run × property (see :meth:`Model.score`);
    raises :class:`avguard.LogErrors` after writing them when some log failed.
    """
    if not isinstance(model, Model):
        model = Model.load(model)
    ray = _connect(address)
    remote = ray.remote(_score_batch)
    with model._file() as model_path:
        job = _native.ScoreJob(
            model_path, os.fspath(out), _paths(paths), list(thresholds), horizon, conservative, force, _opt(map)
        )
        model_ref = ray.put(model.to_bytes())
        todo = [os.fspath(p) for p in job.todo]
        pending = {
            remote.remote(model_ref, list(thresholds), horizon, conservative, _opt(map), batch): batch
            for batch in _batches(todo, batch_size)
        }
        errors = []
        with _progress(progress, len(todo), "scoring") as callback:
            for batch, outcomes, failure in _finished(ray, pending, callback):
                if failure is not None:
                    errors.extend((path, failure) for path in batch)
                    continue
                for path, ok, payload in outcomes:
                    if ok:
                        job.store(path, payload)
                    else:
                        errors.append((path, payload))
        return finish_job(job, errors, plot_runs)


def _learn_batch(setup_bytes: bytes, paths: list) -> "Counts":
    """A Ray task: the counts of some logs (their failures inside)."""
    return _native.LearnSetup.from_bytes(setup_bytes).learn(paths)


def learn(
    paths: Paths,
    laws: PathLike,
    out: PathLike,
    address: Optional[str] = None,
    batch_size: int = 1,
    progress: Progress = False,
    **options,
) -> Model:
    """``avguard learn --laws LAWS --out OUT LOGS`` with the logs recorded on a Ray cluster: the counts
    come back from the workers, merge exactly, and the driver builds and writes the same model file as
    the CLI. ``options`` are ``avguard learn``'s (see :func:`avguard.learn_counts`). Logs that fail are
    skipped with a warning (``skipped LOG: ...``, as the CLI prints them); when none can be learned,
    :class:`avguard.AvguardError` is raised with the CLI's message."""
    logs = [os.fspath(p) for p in _native.expand_logs(_paths(paths), False)]
    ray = _connect(address)
    remote = ray.remote(_learn_batch)

    def record(setup) -> Counts:
        setup_ref = ray.put(setup.to_bytes())
        pending = {remote.remote(setup_ref, batch): batch for batch in _batches(logs, batch_size)}
        counts, crashed = [], []
        with _progress(progress, len(logs), "learning") as callback:
            for batch, result, failure in _finished(ray, pending, callback):
                if failure is None:
                    counts.append(result)
                else:
                    crashed.extend((path, failure) for path in batch)
        if not counts:  # every task died: the CLI's message for a learning with nothing learned
            why = "; ".join(f"{path}: {error}" for path, error in crashed)
            raise _native.AvguardError(f"no log could be learned ({len(logs)} given): {why}")
        return Counts.merge(counts, crashed)

    # Late road users are read off the collisions of all the shards together, as the CLI reads them.
    merged = _counts_as_learned(logs, laws, options, record)
    model = Model(merged.build())
    model.save(out)
    for path, error in merged.errors:
        warnings.warn(f"skipped {path}: {error}", stacklevel=2)
    return model

