"""avguard from Python: the same Rust pipeline as the ``avguard`` command line, with pandas results.

Five lines in a notebook::

    import avguard
    frames, obstacles = avguard.read_log("runs/run_0001.h5")
    model = avguard.Model.load("model.bin")
    scores = model.score("runs/", thresholds=[0.3, 0.5])
    risk = model.risk("runs/run_0001.h5")

Every failure raises :class:`AvguardError` with the message the CLI prints. Long calls release the GIL;
``progress=True`` shows a tqdm bar (or pass any tqdm-like object with ``update(n)``, or a callable taking
the number of logs just finished). :mod:`avguard.ray` runs scoring and learning on a Ray cluster, and
:func:`evaluate` the held-out evaluation of ``avguard evaluate``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _native
from ._native import AvguardError, Counts

# Logs are read in a child process, as the CLI reads them: a file that crashes or hangs libhdf5 fails
# alone with an AvguardError instead of taking this interpreter down (AVGUARD_LOG_READER=in-process
# reads here instead).
if sys.executable and getattr(_native, "__file__", None):
    _native._isolate_log_reads(sys.executable, _native.__file__)

__all__ = [
    "AvguardError",
    "LogErrors",
    "Model",
    "Counts",
    "read_log",
    "signals",
    "road_users",
    "learn",
    "learn_counts",
    "merge_counts",
    "build_model",
    "learn_setup",
    "evaluate",
    "Evaluation",
]

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Iterable[PathLike]]
Progress = Union[bool, Callable[[int], object], object, None]

DEFAULT_THRESHOLDS = (0.3, 0.5, 0.7)


class LogErrors(AvguardError):
    """Some logs failed while the others were processed, as the CLI does: ``errors`` lists
    ``(log, message)`` pairs and ``result`` holds what the call produced for the other logs."""

    def __init__(self, message: str, errors, result=None):
        lines = [message] + [f"{name}: {error}" for name, error in errors]
        super().__init__("\n".join(lines))
        self.errors = list(errors)
        self.result = result


def _paths(paths: Paths) -> list:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _opt(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


@contextmanager
def _progress(progress: Progress, total: int, desc: str) -> Iterator[Optional[Callable[[int], object]]]:
    """A callback for the Rust side: ``None``, tqdm's ``update`` (closed afterwards when we made the bar),
    a tqdm-like object's ``update``, or a plain callable."""
    if progress is None or progress is False:
        yield None
    elif progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="log")
        try:
            yield bar.update
        finally:
            bar.close()
    elif hasattr(progress, "update"):
        yield progress.update
    elif callable(progress):
        yield progress
    else:
        raise TypeError("progress must be a bool, a tqdm-like object with update(n), or a callable")


def _table(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({name: np.asarray(values, dtype=dtype) for name, (dtype, values) in columns.items()})


def read_log(path: PathLike) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """Reads an HDF5 run log: ``(frames, obstacles)``, columns named like the file's datasets
    (INTERFACES §2), with the stored dtypes. ``obstacles`` has one row per obstacle per frame, with the
    frame's index (``frame``) and time (``t``) first. The run's metadata (``scenario``, ``run_id``,
    ``frame_period_s``, ``seed``) is in ``frames.attrs``. The file is read in a child process, as the CLI
    reads it, so a file that crashes libhdf5 raises :class:`AvguardError` here."""
    raw = _native.read_log(os.fspath(path))
    frames = _table(raw["frames"])
    frames.attrs.update(raw["meta"])
    obstacles = _table(raw["obstacles"])
    return frames, obstacles


def signals(path: PathLike) -> pd.DataFrame:
    """The law signals of every frame of a log: one row per frame, ``t`` then one column per signal of
    the law language (LawBreaker's and avguard's, by their law-text names, e.g. ``speed``,
    ``closestApproach.ttc``), the values law atoms compare — what ``avguard laws signals`` writes as CSV.
    Infinite values are ``inf``. The file is read as :func:`read_log` reads it."""
    return pd.DataFrame(_native.signals(os.fspath(path)))


ROAD_USER_COLUMNS = ("steps", "jumps", "velocity_pairs", "velocity_flips", "first_collision_touches_as_logged")


def road_users(paths: Paths) -> "tuple[pd.DataFrame, Optional[str]]":
    """How the road users of logs (files, or folders searched for ``*.h5``; read in parallel, in child
    processes, as the CLI reads them) step and turn, as ``avguard inspect`` says it: a table with one row
    per log (``file`` and the counts of ``inspect --json``'s ``road_users``: ``steps`` compared with their
    speeds and ``jumps`` off them by more than half, ``velocity_pairs`` of consecutive steps and
    ``velocity_flips`` turning an acceleration of at least 2 m/s² around, and
    ``first_collision_touches_as_logged``, ``None`` without a collision), and the lines ``inspect`` prints
    after the logs: what they say together and how ``avguard learn`` would read them by default
    (smoothed, their velocities smoothed, moved ahead by a latency, or as logged). Logs that cannot be
    read raise :class:`LogErrors` after the others are read, with ``(table, lines)`` of those as its
    ``result``."""
    rows, summary = _native.road_users(_paths(paths))
    table = pd.DataFrame(
        [(file,) + tuple(counts) for file, counts, error in rows if error is None],
        columns=("file",) + ROAD_USER_COLUMNS,
    )
    errors = [(file, error) for file, _, error in rows if error is not None]
    if errors:
        raise LogErrors(f"{len(errors)} of {len(rows)} logs could not be read", errors, (table, summary))
    return table, summary


def _runs_frame(results: Iterable[str]) -> pd.DataFrame:
    """One row per run × property from per-log results (``score.json``'s ``runs`` fields, nested
    fields flattened with ``/``: ``alarms/0.5/lead_s``, ``baseline/false_alarm``)."""
    rows = []
    for text in results:
        result = json.loads(text)
        for score in result["scores"]:
            rows.append(dict(score, file=result["file"]))
    if not rows:
        return pd.DataFrame(columns=["file", "run_id", "scenario", "property"])
    frame = pd.json_normalize(rows, sep="/")
    first = ["file", "run_id", "scenario", "property"]
    return frame[first + [c for c in frame.columns if c not in first]]


def finish_job(job: "_native.ScoreJob", errors, plot_runs: int) -> pd.DataFrame:
    """Writes a score run's outputs; the runs as a table, or :class:`LogErrors` when some log failed."""
    results, errors, failure = job.finish(errors, plot_runs)
    table = _runs_frame(results)
    if failure is not None:
        raise LogErrors(failure, errors, table)
    return table


class Model:
    """A model learned by ``avguard learn`` (or :func:`build_model`)."""

    def __init__(self, native: "_native.Model", path: Optional[str] = None):
        self._native = native
        self._path = path

    @classmethod
    def load(cls, path: PathLike) -> "Model":
        """Reads a model file."""
        path = os.fspath(path)
        return cls(_native.Model.load(path), path)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Model":
        """A model from a model file's bytes."""
        return cls(_native.Model.from_bytes(data))

    def save(self, path: PathLike) -> None:
        """Writes the model file (the same bytes ``avguard learn`` writes for the same model)."""
        self._native.save(os.fspath(path))

    def to_bytes(self) -> bytes:
        """The model file's bytes."""
        return self._native.to_bytes()

    @property
    def properties(self) -> list:
        """The monitored properties' names."""
        return self._native.properties

    def info(self) -> dict:
        """What ``avguard info --json`` says: per property its predicates, states, PAC summary."""
        return json.loads(self._native.info_json())

    @contextmanager
    def _file(self) -> Iterator[str]:
        """A model file holding this model: the one it was loaded from, else a temporary copy."""
        if self._path is not None:
            yield self._path
            return
        with tempfile.TemporaryDirectory(prefix="avguard-model-") as tmp:
            path = os.path.join(tmp, "model.bin")
            self.save(path)
            yield path

    def score(
        self,
        paths: Paths,
        thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
        horizon: Optional[float] = None,
        conservative: bool = False,
        out: Optional[PathLike] = None,
        force: bool = False,
        plot_runs: int = 3,
        progress: Progress = False,
        map: Optional[PathLike] = None,
    ) -> pd.DataFrame:
        """Scores logs (HDF5 logs or Cyber records; folders are searched for both): one row per run × property, the fields of
        ``score.json``'s ``runs`` (nested ones flattened with ``/``: ``alarms/0.5/lead_s``).

        With ``out``, does exactly what ``avguard score --model MODEL --out OUT [--force] LOGS`` does and
        writes the same files (``score.json``, ``report.md``, ``report.html``, the per-log cache). ``map`` is
        the Apollo HD map that gives ``.record`` inputs their road fields (``--map``). A log
        that fails does not stop the others: once all are done, :class:`LogErrors` is raised with the
        failures, and the other logs' rows in ``.result``.
        """
        if out is None:
            logs = _native.expand_logs(_paths(paths))
            scorer = _native.Scorer(self.to_bytes(), list(thresholds), horizon, conservative, self._path, _opt(map))
            with _progress(progress, len(logs), "scoring") as callback:
                results, errors = scorer.score_all(logs, callback)
            table = _runs_frame(r for r in results if r is not None)
            if errors:
                raise LogErrors(f"{len(errors)} of {len(logs)} logs could not be scored", errors, table)
            return table
        with self._file() as model_path:
            job = _native.ScoreJob(
                model_path, os.fspath(out), _paths(paths), list(thresholds), horizon, conservative, force, _opt(map)
            )
            with _progress(progress, len(job.todo), "scoring") as callback:
                errors = job.score_here(callback)
            return finish_job(job, errors, plot_runs)

    def calibrate(
        self,
        logs: Paths,
        target_false_alarms: float = 0.1,
        confidence: float = 0.95,
        debounce: Sequence[int] = (1, 2, 3, 5),
        select: Optional[Paths] = None,
        horizon: Optional[float] = None,
        per_scenario: bool = False,
        enforce_target_false_alarms: Optional[float] = _native.DEFAULT_ENFORCE_TARGET,
    ) -> "Model":
        """A copy of this model calibrated on ``logs`` (not the training logs), as ``avguard calibrate
        --target-false-alarms RATE [--confidence C] [--debounce M,...] [--select LOGS] [--horizon H]
        [--per-scenario] [--enforce-target-false-alarms RATE|none]`` calibrates it: each property's θ so
        that the one-sided Clopper–Pearson bound of its false-alarm rate is at most ``target_false_alarms``
        (a fraction), the debounce chosen on the ``select`` logs (e.g. the training logs); and for a
        collision property (unsafe predicate the collision flag alone) a second θ, without debounce, at
        which the bridge's interventions start, for ``enforce_target_false_alarms`` (a fraction; ``None``:
        interventions at the alarm's θ). The same inputs give the same model file as the CLI.

        A property that cannot be calibrated (too few safe runs) keeps none, with a warning saying why.
        Logs that cannot be read are skipped; once the others are done, :class:`LogErrors` is raised with
        the failures and the calibrated model in ``.result``.
        """
        if not 0.0 < target_false_alarms < 1.0:
            raise ValueError(f"target_false_alarms must be a fraction in (0, 1), got {target_false_alarms}")
        if enforce_target_false_alarms is not None and not 0.0 < enforce_target_false_alarms < 1.0:
            raise ValueError(
                "enforce_target_false_alarms must be a fraction in (0, 1) or None, "
                f"got {enforce_target_false_alarms}"
            )
        native, skipped, uncalibrated = self._native.calibrate(
            _paths(logs), target_false_alarms, confidence, [int(m) for m in debounce],
            _paths(select) if select is not None else [], horizon, per_scenario, enforce_target_false_alarms,
        )
        model = Model(native)
        for name, why in uncalibrated:
            warnings.warn(f"{name}: not calibrated: {why}", stacklevel=2)
        if skipped:
            raise LogErrors(f"{len(skipped)} logs could not be read", skipped, model)
        return model

    def risk(self, path: PathLike, horizon: Optional[float] = None, conservative: bool = False) -> pd.DataFrame:
        """Per-frame risk of every property over one log (``t`` then one column per property): P(eventually
        unsafe), or P(unsafe within ``horizon`` s), or with ``conservative`` the PAC upper bound."""
        return pd.DataFrame(self._native.risk(os.fspath(path), horizon, conservative))

    def __reduce__(self):
        return (Model.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        return f"avguard.Model(properties={self.properties!r})"


def _flag_value(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _with_frame_period(options: dict, logs: list) -> dict:
    """``options`` with the logs' frame period when none is given, as ``avguard learn`` reads it: that of
    the first log, in path order, that reads."""
    if options.get("frame_period_s") is None:
        options = dict(options, frame_period_s=_native.frame_period([os.fspath(p) for p in logs]))
    return options


def learn_setup(laws: PathLike, properties: Optional[PathLike] = None, **options) -> "_native.LearnSetup":
    """The law folder (and properties file) read once, with ``avguard learn``'s options: what every
    worker of a distributed learning needs. ``options`` are the CLI's flags with ``_`` for ``-``
    (``alpha=0.5``, ``horizons=(1, 2)``, ``abstraction="fixed"``, ``max_predicates=8``, ...): the CLI's
    parser reads them, so defaults, checks and messages are the CLI's. Without ``frame_period_s`` the
    set-up steps at the schema's default of 0.1 s; :func:`learn_counts` and :func:`avguard.ray.learn`
    give it the logs' own period instead, as ``avguard learn`` does."""
    flags = [(name, _flag_value(value)) for name, value in options.items()]
    return _native.LearnSetup(os.fspath(laws), _opt(properties), flags)


def learn_counts(paths: Paths, laws: PathLike, progress: Progress = False, **options) -> Counts:
    """Records logs (files, or folders searched for ``*.h5``) for learning, as ``avguard learn --laws
    LAWS`` does; ``options`` are ``avguard learn``'s (``properties`` and the flags of
    :func:`learn_setup`).
    A log that cannot be read is listed in ``.errors`` and the others are learned. Counts of different
    logs merge exactly (:func:`merge_counts`); :func:`build_model` makes the model."""
    logs = _native.expand_logs(_paths(paths), False)
    setup = learn_setup(laws, **_with_frame_period(options, logs))
    with _progress(progress, len(logs), "learning") as callback:
        return setup.learn(logs, callback)


def merge_counts(counts: Iterable[Counts]) -> Counts:
    """The union of counts of different logs, learned with the same laws and options."""
    return Counts.merge(list(counts))


def build_model(counts: Counts) -> Model:
    """The model ``avguard learn`` writes for the logs behind ``counts``: the same bytes. Counts are
    recorded in one pass: when, under the ``auto`` defaults, their road users jump against their speeds or
    their collisions show them reported late (``counts.again``), ``avguard learn`` would record the logs
    again read otherwise, so this raises instead, naming the ``road_user_smoothing``,
    ``road_user_velocities`` and ``perception_latency`` to learn the counts with; :func:`learn` and :func:`avguard.ray.learn` record
    them again themselves."""
    return Model(counts.build())


def _counts_as_learned(logs: list, laws: PathLike, options: dict, record: Callable) -> Counts:
    """The counts ``avguard learn`` builds its model from: ``record(setup)`` records every log once under
    ``learn_setup(laws, **options)``; when, under ``road_user_smoothing="auto"``,
    ``road_user_velocities="auto"`` or ``perception_latency="auto"`` (the defaults), the logs together read
    otherwise (``Counts.again``: road users that jump against their speeds, velocities that are noisy,
    collisions that show them late), the logs are recorded again
    with the options read, as the CLI does, and its words are given as warnings (as is the CLI's note when
    the collisions disagree with the logged positions, ``Counts.contacts_note``)."""
    options = _with_frame_period(options, logs)
    counts = record(learn_setup(laws, **options))
    again = counts.again
    if again is None:
        if counts.contacts_note is not None:
            warnings.warn(counts.contacts_note, stacklevel=3)
        return counts
    read, words = again
    for line in words.splitlines():
        warnings.warn(line, stacklevel=3)
    return record(learn_setup(laws, **dict(options, **dict(read))))


def learn(
    paths: Paths, laws: PathLike, out: Optional[PathLike] = None, progress: Progress = False, **options
) -> Model:
    """``avguard learn --laws LAWS [--out OUT] LOGS`` in this process: the same model, byte for byte,
    written to ``out`` when given. ``options`` are ``avguard learn``'s (see :func:`learn_counts`). Unlike
    :func:`build_model` on counts of one pass, this records the logs a second time when, under the
    ``auto`` defaults, their road users jump against their speeds or their collisions show them reported
    late (``Counts.again``; warnings say so). Logs that fail are skipped with a warning (``skipped LOG:
    ...``, as the CLI prints them); when none can be learned, :class:`AvguardError` is raised with the
    CLI's message."""
    logs = _native.expand_logs(_paths(paths), False)

    def record(setup):
        with _progress(progress, len(logs), "learning") as callback:
            return setup.learn(logs, callback)

    counts = _counts_as_learned(logs, laws, options, record)
    model = Model(counts.build())
    if out is not None:
        model.save(out)
    for path, error in counts.errors:
        warnings.warn(f"skipped {path}: {error}", stacklevel=2)
    return model


# Last: the evaluation module takes `Model` and `_flag_value` from this one.
from ._evaluation import Evaluation, evaluate  # noqa: E402
