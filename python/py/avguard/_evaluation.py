"""The held-out evaluation ``avguard evaluate`` runs, from Python: :func:`evaluate` returns what the command
prints and writes for one seed, with its figures as DataFrames."""

from __future__ import annotations

import json
import os
from typing import Optional

import pandas as pd

from . import Model, PathLike, Paths, _flag_value, _native, _opt, _paths

# A summary's fields (score.json's `summary` cells), in the order the tables read them.
_SUMMARY_FIELDS = (
    "predicted_pct",
    "false_alarm_pct",
    "median_lead_s",
    "max_lead_s",
    "n_violating_runs",
    "n_unsafe_from_start",
    "n_safe_runs",
)


class Evaluation:
    """One evaluation, as ``avguard evaluate`` prints and writes it.

    ``text`` is the printed tables, ``report`` is ``evaluate.json`` as a dict (INTERFACES, the ``evaluate``
    row), and ``models`` maps ``"fixed"`` and ``"auto"`` to the two calibrated models.
    :meth:`summary` and :meth:`dominance` give the report's figures as DataFrames."""

    def __init__(self, text: str, report: dict, models: dict):
        self.text = text
        self.report = report
        self.models = models

    def summary(self) -> pd.DataFrame:
        """One row per model, property and alarm on the test runs.

        The alarms are: each threshold (``theta=0.3``, ...), the calibrated θ (``calibrated``), the
        comparators (``baseline``, ``rss``, ``reactive_rule``), the rules written for each false-alarm
        budget (``rule<=5%``, ...) and RSS tuned to each budget (``rss_tuned<=5%``, ...; auto model only).
        The columns are ``model``, ``property``, ``alarm``, ``theta`` (where the alarm has one), then
        each summary field (``predicted_pct``, ``false_alarm_pct``, ``median_lead_s``, ...)."""
        rows = []
        for m in self.report["models"]:
            for name, p in m["properties"].items():
                def add(alarm, s, theta=None):
                    if s is not None:
                        rows.append(
                            {"model": m["mode"], "property": name, "alarm": alarm, "theta": theta}
                            | {f: s.get(f) for f in _SUMMARY_FIELDS}
                        )

                for key, s in p["summary"].items():
                    add(f"theta={key}", s, float(key))
                calibration = p.get("calibration")
                add("calibrated", p["comparison"]["calibrated"], calibration and calibration["theta"])
                for comparator, s in p["comparison"]["comparators"]:
                    add(comparator, s)
                for b in p["budget_rules"]:
                    add(f"rule<={b['budget_pct']:g}%", b["summary"])
                for t in p["rss_tuned"]:
                    add(f"rss_tuned<={t['budget_pct']:g}%", t["summary"])
        return pd.DataFrame(rows, columns=["model", "property", "alarm", "theta", *_SUMMARY_FIELDS])

    def dominance(self) -> pd.DataFrame:
        """The auto model's curve against each comparator, one row per property and comparator.

        Each row gives the comparator's own figures on the test runs and the curve's best point within
        the comparator's false-alarm rate (``ours_*``). ``dominates`` is whether that point warns of at
        least as many violations with a longer median lead. ``resampled_share`` is the share of bootstrap
        resamples of the test runs in which it does. The comparators are those of :meth:`summary`."""
        rows = []
        for m in self.report["models"]:
            if m["mode"] != "auto":
                continue
            for name, p in m["properties"].items():
                verdicts = [(d["comparator"], d) for d in p["comparison"]["dominance"]]
                verdicts += [(f"rule<={b['budget_pct']:g}%", b["dominance"]) for b in p["budget_rules"]]
                verdicts += [(f"rss_tuned<={t['budget_pct']:g}%", t["dominance"]) for t in p["rss_tuned"]]
                for comparator, d in verdicts:
                    if d is None:
                        continue
                    theirs, ours = d["comparator_summary"], d["ours"] or {}
                    rows.append(
                        {
                            "property": name,
                            "comparator": comparator,
                            "dominates": d["dominates"],
                            "resampled_share": d.get("resampled_share"),
                            "predicted_pct": theirs["predicted_pct"],
                            "false_alarm_pct": theirs["false_alarm_pct"],
                            "median_lead_s": theirs["median_lead_s"],
                            "ours_theta": ours.get("theta"),
                            "ours_predicted_pct": ours.get("predicted_pct"),
                            "ours_false_alarm_pct": ours.get("false_alarm_pct"),
                            "ours_median_lead_s": ours.get("median_lead_s"),
                        }
                    )
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return (
            f"Evaluation(learned on {self.report['n_learn']} runs, calibrated on "
            f"{self.report['n_calibrate']}, tested on {self.report['n_test']})"
        )


def _flag(name: str, value) -> Optional[tuple]:
    """``name=value`` as the command's flag: ``True`` is the bare flag, ``False`` and ``None`` none."""
    if value is None or value is False:
        return None
    return (name, "" if value is True else _flag_value(value))


def evaluate(
    laws: PathLike,
    train: Paths,
    test: Paths,
    properties: Optional[PathLike] = None,
    **options,
) -> Evaluation:
    """Runs ``avguard evaluate --laws LAWS --train TRAIN... --test TEST...`` once.

    ``options`` are the command's flags with ``_`` for ``-`` (``seed=1``, ``target_false_alarms="10%"``,
    ``debounce=(1, 2)``, ``per_scenario=True``, ``out="eval/"`` to also write ``evaluate.json`` and both
    models). The command's parser reads them, so defaults, checks and messages are the command's.
    ``repeats`` is the command line's: call once per seed instead. ``train`` and ``test`` are log files or
    folders (searched for ``*.h5``). A log that cannot be read is skipped, as the command skips it, and listed
    in ``report["errors"]``. Releases the GIL while it runs."""
    flags = [f for f in (_flag(n, v) for n, v in options.items()) if f is not None]
    text, report, models = _native.evaluate(
        os.fspath(laws),
        _opt(properties),
        _paths(train),
        _paths(test),
        flags,
    )
    return Evaluation(text, json.loads(report), {mode: Model(native) for mode, native in models})
