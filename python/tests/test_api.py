"""The package against the CLI and against independent readers, on the same inputs."""

import io
import json
import os
import shutil
import threading
import time
import warnings

import h5py
import numpy as np
import pandas as pd
import pytest

import avguard
from conftest import REPO, cli, same_files, score_json

OUTPUTS = ["score.json", "report.md", "report.html", "states.json"]


def test_read_log_matches_h5py(data):
    for path in data.test_logs()[:2]:
        frames, obstacles = avguard.read_log(path)
        with h5py.File(path, "r") as f:
            g = f["frames"]
            assert sorted(frames.columns) == sorted(g.keys())
            for name in g:
                stored = g[name][()]
                assert frames[name].dtype == stored.dtype, name
                np.testing.assert_array_equal(frames[name].to_numpy(), stored, err_msg=name)
            o = f["obstacles"]
            per_frame = np.diff(o["offset"][()]).astype(int)
            assert per_frame.sum() > 0, "the scenario should have obstacles"
            np.testing.assert_array_equal(obstacles["frame"], np.repeat(np.arange(len(per_frame)), per_frame))
            np.testing.assert_array_equal(obstacles["t"], np.repeat(g["t"][()], per_frame))
            assert sorted(obstacles.columns) == sorted(["frame", "t", *[k for k in o if k != "offset"]])
            for name in o:
                if name != "offset":
                    assert obstacles[name].dtype == o[name].dtype, name
                    np.testing.assert_array_equal(obstacles[name].to_numpy(), o[name][()], err_msg=name)
            for key in ["scenario", "run_id"]:
                stored = f.attrs[key]
                assert frames.attrs[key] == (stored.decode() if isinstance(stored, bytes) else stored)
            assert frames.attrs["frame_period_s"] == f.attrs["frame_period_s"]


def test_signals_are_the_cli_s_and_read_the_log_s_values(data, tmp_path):
    path = data.test_logs()[0]
    table = avguard.signals(path)
    csv = tmp_path / "signals.csv"
    cli("laws", "signals", "--out", csv, path)
    expected = pd.read_csv(csv)
    assert list(table.columns) == list(expected.columns)
    assert len(table) > 0
    # The CSV holds shortest round-trip decimals: the same values exactly (pandas reads whole numbers as ints).
    pd.testing.assert_frame_equal(table, expected, check_dtype=False, check_exact=True)
    # Independently of the signal code: LawBreaker's `speed` is the frame's speed in km/h, and the
    # light and stop line are the stored fields.
    frames, _ = avguard.read_log(path)
    np.testing.assert_allclose(table["speed"], frames["speed"] * 3.6, rtol=1e-12)
    np.testing.assert_array_equal(table["trafficLightAhead.color"], frames["light_color"])
    np.testing.assert_array_equal(table["stoplineAhead"], frames["stopline_dist"])
    np.testing.assert_array_equal(table["t"], frames["t"])
    with pytest.raises(avguard.AvguardError, match="zz_corrupt.h5"):
        avguard.signals(data.bad)


def test_a_bad_log_raises_the_message_the_cli_gives_it(data, tmp_path):
    cli_out = tmp_path / "cli"
    assert cli("score", "--model", data.model, "--out", cli_out, data.bad, check=False).returncode == 1
    [listed] = score_json(cli_out)["errors"]
    with pytest.raises(avguard.AvguardError) as raised:
        avguard.read_log(data.bad)
    # The file cannot be opened at all: reading it alone names it; score.json names it once, under "file".
    assert str(raised.value) == f"{data.bad}: {listed['error']}"


def test_model_load_save_properties_and_info_are_the_cli_s(data, tmp_path):
    model = avguard.Model.load(data.model)
    copy = tmp_path / "copy.bin"
    model.save(copy)
    assert copy.read_bytes() == data.model.read_bytes()
    assert avguard.Model.from_bytes(model.to_bytes()).to_bytes() == model.to_bytes()
    info = json.loads(cli("info", "--json", data.model).stdout)
    assert model.info() == info
    assert model.properties == [p["name"] for p in info["properties"]]
    assert len(model.properties) >= 2


def test_a_bad_model_raises_the_cli_s_message(data, tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 64)
    missing = tmp_path / "missing.bin"
    for path in [bad, missing]:
        done = cli("score", "--model", path, "--out", tmp_path / "out", data.test, check=False)
        assert done.returncode == 1
        with pytest.raises(avguard.AvguardError) as raised:
            avguard.Model.load(path)
        assert "avguard: " + str(raised.value) == done.stderr.strip()


@pytest.mark.parametrize(
    "thresholds, horizon, conservative",
    [((0.3, 0.5, 0.7), None, False), ((0.4,), 2.0, False), ((0.2, 0.6), None, True)],
)
def test_score_with_out_writes_the_cli_s_bytes_and_a_bad_log_fails_alone(
    data, tmp_path, thresholds, horizon, conservative
):
    options = ["--thresholds", ",".join(map(str, thresholds))]
    if horizon is not None:
        options += ["--horizon", horizon]
    if conservative:
        options.append("--conservative")
    cli_out, py_out = tmp_path / "cli", tmp_path / "py"
    done = cli("score", "--model", data.model, "--out", cli_out, *options, data.mixed, check=False)
    assert done.returncode == 1, done.stderr
    model = avguard.Model.load(data.model)
    with pytest.raises(avguard.LogErrors) as raised:
        model.score(data.mixed, thresholds=thresholds, horizon=horizon, conservative=conservative, out=py_out)
    same_files(cli_out, py_out, OUTPUTS)
    listed = score_json(cli_out)
    assert raised.value.errors == [(e["file"], e["error"]) for e in listed["errors"]]
    assert [name for name, _ in raised.value.errors] == [str(data.bad)]
    assert len(raised.value.result) == len(listed["runs"]) == len(data.test_logs()) * len(model.properties)


def test_score_in_memory_gives_score_json_s_runs(data, tmp_path):
    cli_out = tmp_path / "cli"
    cli("score", "--model", data.model, "--out", cli_out, data.test)
    expected = pd.json_normalize(score_json(cli_out)["runs"], sep="/")
    table = avguard.Model.load(data.model).score(data.test)
    keys = ["run_id", "property"]
    got = table.drop(columns=["file"]).sort_values(keys).reset_index(drop=True)
    expected = expected[got.columns].sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected)


def test_a_model_without_a_file_scores_too(data, tmp_path):
    model = avguard.Model.from_bytes(data.model.read_bytes())
    cli_out, py_out = tmp_path / "cli", tmp_path / "py"
    cli("score", "--model", data.model, "--out", cli_out, data.test)
    model.score(data.test, out=py_out)
    same_files(cli_out, py_out, OUTPUTS)


def test_risk_agrees_with_the_scores(data):
    """The per-frame risk (Model.risk) and the scores (first alarm, maximum risk before the violation)
    are computed by different code; they must tell the same story."""
    model = avguard.Model.load(data.model)
    table = model.score(data.test, thresholds=[0.5])
    n_alarms = 0
    for path in data.test_logs():
        risk = model.risk(path)
        assert list(risk.columns) == ["t", *model.properties]
        assert risk["t"].is_monotonic_increasing
        for prop in model.properties:
            [row] = table[(table["file"] == path.name) & (table["property"] == prop)].to_dict("records")
            before = risk if not row["violated"] else risk[risk["t"] < row["violation_t"]]
            values = before[prop].to_numpy()
            assert np.all((risk[prop] >= 0) & (risk[prop] <= 1))
            assert row["max_risk"] == pytest.approx(values.max() if len(values) else 0.0, abs=0)
            crossing = before["t"][values >= 0.5]
            first = crossing.iloc[0] if len(crossing) else None
            assert row["alarms/0.5/first_alarm_t"] == first or (first is None and pd.isna(row["alarms/0.5/first_alarm_t"]))
            n_alarms += first is not None
    assert n_alarms > 0, "no run alarmed: the comparison compared nothing"


def test_progress_goes_to_a_callable_or_a_tqdm_bar(data):
    from tqdm import tqdm

    model = avguard.Model.load(data.model)
    logs = data.train_logs()
    steps = []
    model.score(logs, progress=steps.append)
    assert steps == [1] * len(logs)
    bar = tqdm(total=len(logs), file=io.StringIO())
    model.score(logs, progress=bar)
    assert bar.n == len(logs)


def test_scoring_releases_the_gil(data, tmp_path):
    """While a long score runs in one thread, another keeps running Python: its longest pause is a small
    part of the call (holding the GIL throughout would pause it for the whole call). The call is made
    longer until it lasts long enough to tell."""
    model = avguard.Model.load(data.model)

    def timed_call(logs):
        done = threading.Event()
        took = []

        def work():
            start = time.perf_counter()
            model.score(logs)
            took.append(time.perf_counter() - start)
            done.set()

        thread = threading.Thread(target=work)
        last, longest = time.perf_counter(), 0.0
        thread.start()
        while not done.is_set():
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        thread.join()
        return took[0], longest

    logs = data.train_logs()
    for attempt in range(5):
        took, longest = timed_call(logs)
        if took > 0.5:
            break
        # More logs under other names (hard links: the same files, scored again).
        folder = tmp_path / f"more-{attempt}"
        folder.mkdir()
        for i in range(4):
            for log in data.train_logs():
                os.link(log, folder / f"{i}-{log.name}")
        logs = logs + sorted(folder.iterdir())
    assert took > 0.5, f"even {len(logs)} logs took only {took:.3f} s: too short to tell"
    assert longest < 0.25 * took, f"Python paused {longest:.3f} s of a {took:.3f} s call"

def cli_learn(data, out, logs, *options):
    return cli("learn", "--laws", data.laws, "--out", out, *options, *logs, check=False)


@pytest.mark.parametrize(
    "options, cli_options",
    [
        ({}, []),
        (
            {"alpha": 0.5, "horizons": (1, 2), "epsilon": 0.1, "abstraction": "fixed"},
            ["--alpha", 0.5, "--horizons", "1,2", "--epsilon", 0.1, "--abstraction", "fixed"],
        ),
        ({"prior": "hierarchical", "max_predicates": 4}, ["--prior", "hierarchical", "--max-predicates", 4]),
        ({"forest_kind": "both", "max_predicates": 4}, ["--forest-kind", "both", "--max-predicates", 4]),
    ],
)
def test_counts_of_parts_merge_into_the_cli_s_model(data, tmp_path, options, cli_options):
    logs = data.train_logs()
    done = cli_learn(data, tmp_path / "cli.bin", [*logs, data.bad], *cli_options)
    assert done.returncode == 0, done.stderr
    first = avguard.learn_counts(logs[:7], laws=data.laws, **options)
    second = avguard.learn_counts([*logs[7:], data.bad], laws=data.laws, **options)
    assert first.errors == [] and [p for p, _ in second.errors] == [str(data.bad)]
    assert f"skipped {data.bad}: {second.errors[0][1]}" in done.stderr
    merged = avguard.merge_counts([second, first])  # in any order: the logs are sorted as the CLI sorts them
    assert merged.n_logs == len(logs) + 1 and merged.logs == [str(p) for p in logs]
    model = avguard.build_model(merged)
    assert model.to_bytes() == (tmp_path / "cli.bin").read_bytes()


def test_logs_at_another_frame_rate_learn_at_their_rate_as_the_cli_learns_them(data, tmp_path):
    """Told no frame period, `learn_counts` steps at the logs' own (here 20 Hz), as `avguard learn` does:
    the same model file, and one that steps at 0.05 s; told another period, each log fails with the CLI's
    reason."""
    text = (REPO / "scenarios" / "red_light_queue.toml").read_text()
    fast_toml = tmp_path / "fast.toml"
    fast_toml.write_text(text.replace("[scenario]\n", "[scenario]\nframe_period_s = 0.05\n", 1))
    fast = tmp_path / "fast"
    cli("simulate", "--scenario", fast_toml, "--runs", 4, "--seed", 3, "--out", fast)
    done = cli_learn(data, tmp_path / "cli.bin", [fast], "--abstraction", "fixed")
    assert done.returncode == 0 and "frame period 0.05 s, from " in done.stderr, done.stderr
    model = avguard.build_model(avguard.learn_counts([fast], laws=data.laws, abstraction="fixed"))
    assert model.to_bytes() == (tmp_path / "cli.bin").read_bytes()
    assert model.info()["frame_period_s"] == 0.05
    told = avguard.learn_counts([fast], laws=data.laws, abstraction="fixed", frame_period_s=0.1)
    assert len(told.errors) == 4
    assert all("frame period 0.05 s differs from the model's 0.1 s" in e for _, e in told.errors)


def test_counts_of_late_road_users_ask_for_the_latency_the_cli_reads(data, late_logs):
    """On logs whose road users are 0.3 s late, `avguard learn` reads the lag off the collisions and learns
    with the road users moved ahead. Counts are recorded in one pass, so building them under the default
    (`auto`) refuses, naming the lag to give (and `Counts.late` gives it); given it, they build the CLI's
    model byte for byte. `avguard.learn` records the logs again itself, as the CLI does."""
    late = late_logs.late
    assert "road users seem to be reported late" in late_logs.cli_stderr
    info = json.loads(cli("info", "--json", late_logs.cli_model).stdout)
    lag = info["perception_latency_s"]
    assert 0.25 <= lag <= 0.3, late_logs.cli_stderr
    counts = avguard.learn_counts([late], laws=data.laws, abstraction="fixed")
    read_lag, words = counts.late
    assert read_lag == lag and words.startswith(f"road users seem to be reported late, by about {lag:.2f} s")
    assert words in late_logs.cli_stderr
    with pytest.raises(Exception, match=f"perception_latency={lag:.2f}") as refused:
        avguard.build_model(counts)
    assert "road users seem to be reported late" in str(refused.value)
    given = avguard.learn_counts([late], laws=data.laws, abstraction="fixed", perception_latency=lag)
    assert given.late is None  # a latency given is not read again
    model = avguard.build_model(given)
    assert model.to_bytes() == late_logs.cli_model.read_bytes()
    assert model.info()["perception_latency_s"] == lag
    with pytest.warns(UserWarning, match=f"moved {lag:.2f} s ahead") as told:
        learned = avguard.learn(late, data.laws, abstraction="fixed")
    assert any(words in str(w.message) for w in told)
    assert learned.to_bytes() == late_logs.cli_model.read_bytes()
    # Kept as logged when asked: one pass, latency 0, the CLI's `--perception-latency 0` model.
    as_logged = avguard.learn(late, data.laws, abstraction="fixed", perception_latency=0)
    assert as_logged.info()["perception_latency_s"] == 0.0
    # Timely logs build under `auto` as before, in one pass.
    timely = avguard.learn_counts([late_logs.orig], laws=data.laws, abstraction="fixed")
    assert timely.late is None
    assert avguard.build_model(timely).info()["perception_latency_s"] == 0.0


def test_counts_of_road_users_of_varying_age_ask_for_the_smoothing_the_cli_reads(data, late_logs):
    """On logs whose road users are 0.1-0.5 s late, an age that varies from frame to frame, `avguard
    learn` smooths them and reads the latency on the frames as smoothed. `Counts.again` names both
    options; counts of one pass refuse to build under `auto`, build the CLI's model given them, and
    `avguard.learn` records the logs again itself, with the CLI's words and model."""
    jittered = late_logs.jittered
    assert "road users seem to be reported at varying ages" in late_logs.jittered_stderr
    info = json.loads(cli("info", "--json", late_logs.jittered_model).stdout)
    assert info["road_user_smoothing_s"] == 0.7
    lag = info["perception_latency_s"]
    assert 0.2 <= lag <= 0.5, late_logs.jittered_stderr
    counts = avguard.learn_counts([jittered], laws=data.laws, abstraction="fixed")
    read, words = counts.again
    assert dict(read) == {"road_user_smoothing": "0.7", "road_user_velocities": "as-logged",
                          "perception_latency": repr(lag)}
    for line in words.splitlines():
        assert line in late_logs.jittered_stderr
    assert words.splitlines()[0].startswith("road users seem to be reported at varying ages")
    with pytest.raises(Exception, match='road_user_smoothing=0.7, road_user_velocities="as-logged" and '
                                        "perception_latency=") as refused:
        avguard.build_model(counts)
    assert "varying ages" in str(refused.value)
    given = avguard.learn_counts([jittered], laws=data.laws, abstraction="fixed", **dict(read))
    assert given.again is None
    assert avguard.build_model(given).to_bytes() == late_logs.jittered_model.read_bytes()
    with pytest.warns(UserWarning) as told:
        learned = avguard.learn(jittered, data.laws, abstraction="fixed")
    assert {str(w.message) for w in told} == set(words.splitlines())
    assert learned.to_bytes() == late_logs.jittered_model.read_bytes()
    # The late logs of a constant delay do not jump: `again` asks for the latency alone.
    read, _ = avguard.learn_counts([late_logs.late], laws=data.laws, abstraction="fixed").again
    assert dict(read)["road_user_smoothing"] == "0.0"


def test_counts_of_noisy_velocities_ask_for_the_velocity_smoothing_the_cli_reads(data, late_logs):
    """On logs whose road users' speeds and headings are noisy, `avguard learn` smooths their velocities
    with their positions over 0.7 s. `Counts.again` names that; counts of one pass refuse to build under
    `auto` and build the CLI's model given the options read; `avguard.learn` records again itself."""
    noisy = late_logs.noisy
    assert "road users' velocities seem noisy" in late_logs.noisy_stderr
    info = json.loads(cli("info", "--json", late_logs.noisy_model).stdout)
    assert info["road_user_velocities_smoothed"] is True
    assert info["road_user_smoothing_s"] == 0.7
    counts = avguard.learn_counts([noisy], laws=data.laws, abstraction="fixed")
    read, words = counts.again
    assert dict(read)["road_user_velocities"] == "smoothed"
    assert dict(read)["road_user_smoothing"] == "0.7"
    assert words.splitlines()[0].startswith("road users' velocities seem noisy")
    for line in words.splitlines():
        assert line in late_logs.noisy_stderr
    with pytest.raises(Exception, match='road_user_velocities="smoothed"'):
        avguard.build_model(counts)
    given = avguard.learn_counts([noisy], laws=data.laws, abstraction="fixed", **dict(read))
    assert given.again is None
    assert avguard.build_model(given).to_bytes() == late_logs.noisy_model.read_bytes()
    with pytest.warns(UserWarning):
        learned = avguard.learn(noisy, data.laws, abstraction="fixed")
    assert learned.to_bytes() == late_logs.noisy_model.read_bytes()
    # The options' own refusal: smoothed velocities without a window.
    with pytest.raises(Exception, match="--road-user-velocities smoothed needs"):
        avguard.learn_counts([noisy], laws=data.laws, abstraction="fixed", road_user_smoothing="0",
                             road_user_velocities="smoothed")


def test_road_users_count_what_inspect_counts_and_say_what_it_says(late_logs, tmp_path):
    """`avguard.road_users` gives each log's counts as `avguard inspect --json` does and the lines
    `inspect` prints after the logs; on noisy logs those carry `learn`'s own line on the velocities. A log
    that cannot be read raises LogErrors after the others are read."""
    noisy = late_logs.noisy
    table, summary = avguard.road_users(noisy)
    inspected = cli("inspect", "--json", noisy)
    by_file = {}
    for line in inspected.stdout.splitlines():
        row = json.loads(line)
        by_file[row["file"]] = row["road_users"]
    assert sorted(table["file"]) == sorted(by_file)
    for _, row in table.iterrows():
        want = by_file[row["file"]]
        for column in avguard.ROAD_USER_COLUMNS:
            assert row[column] == want[column], (row["file"], column)
    assert table["velocity_flips"].sum() * 10 >= table["velocity_pairs"].sum() > 0
    assert summary == inspected.stderr.strip()
    text = cli("inspect", noisy).stdout.splitlines()
    assert summary.splitlines() == text[len(table):]
    said_by_learn = late_logs.noisy_stderr.splitlines()
    velocity_line = next(line for line in said_by_learn if line.startswith("road users' velocities"))
    assert "  " + velocity_line in summary.splitlines()
    # As simulated: nothing flips, and `learn` would read them as logged.
    plain, said = avguard.road_users(sorted(late_logs.orig.glob("*.h5")))
    assert plain["velocity_flips"].sum() == 0 and plain["jumps"].sum() == 0
    assert said.endswith("`avguard learn` would read them as logged")
    # A bad file fails alone.
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not a log")
    good = sorted(late_logs.orig.glob("*.h5"))[0]
    with pytest.raises(avguard.LogErrors) as failed:
        avguard.road_users([good, bad])
    assert [name for name, _ in failed.value.errors] == [str(bad)]
    one, one_said = failed.value.result
    assert list(one["file"]) == [str(good)]
    assert one_said.startswith("road users of the 1 log read: ")


def test_learn_gives_the_cli_s_note_when_collisions_disagree_with_the_positions(data, late_logs, tmp_path):
    """Each first collision frame's road users moved 30 m off the ego and stopped: no contact as logged or
    at any lag. `avguard learn` notes it on stderr; `Counts.contacts_note` is that note, `avguard.learn`
    warns with it, and the model is the CLI's."""
    apart = tmp_path / "apart"
    shutil.copytree(late_logs.orig, apart)
    for path in sorted(apart.glob("*.h5")):
        with h5py.File(path, "r+") as log:
            hit = np.flatnonzero(log["frames/collision"][...])
            if len(hit) == 0:
                continue
            k = hit[0]
            lo, hi = log["obstacles/offset"][k], log["obstacles/offset"][k + 1]
            ego_x, ego_y = log["frames/x"][k], log["frames/y"][k]
            for column, value in [("x", ego_x + 30.0), ("y", ego_y + 30.0), ("speed", 0.0)]:
                values = log[f"obstacles/{column}"][...]
                values[lo:hi] = value
                log[f"obstacles/{column}"][...] = values
    done = cli_learn(data, tmp_path / "cli.bin", [apart], "--abstraction", "fixed")
    assert done.returncode == 0, done.stderr
    note = next(line for line in done.stderr.splitlines() if line.startswith("note: at the first collision"))
    assert "in only 0 as logged, and in at most 0" in note, note
    counts = avguard.learn_counts([apart], laws=data.laws, abstraction="fixed")
    assert counts.late is None and counts.contacts_note == note
    with pytest.warns(UserWarning, match="no latency alone explains them") as told:
        model = avguard.learn(apart, data.laws, abstraction="fixed")
    assert [str(w.message) for w in told if "no latency" in str(w.message)] == [note]
    assert model.to_bytes() == (tmp_path / "cli.bin").read_bytes()
    # Timely logs as simulated: no note.
    assert avguard.learn_counts([late_logs.orig], laws=data.laws, abstraction="fixed").contacts_note is None


def test_learn_writes_the_cli_s_model_and_skips_a_bad_log(data, tmp_path):
    logs = [*data.train_logs(), data.bad]
    done = cli("learn", "--laws", data.laws, "--out", tmp_path / "cli.bin", *logs)
    assert f"skipped {data.bad}" in done.stderr
    with pytest.warns(UserWarning, match=f"skipped {data.bad}"):
        model = avguard.learn(logs, data.laws, out=tmp_path / "py.bin")
    assert (tmp_path / "py.bin").read_bytes() == (tmp_path / "cli.bin").read_bytes() == model.to_bytes()
    with pytest.raises(avguard.AvguardError, match="no log could be learned"):
        avguard.learn([data.bad], data.laws)


def test_counts_travel_as_bytes_and_refuse_to_mix(data, tmp_path):
    import pickle

    logs = data.train_logs()
    counts = avguard.learn_counts(logs[:4], laws=data.laws)
    again = pickle.loads(pickle.dumps(counts))
    assert again.logs == counts.logs
    assert avguard.build_model(again).to_bytes() == avguard.build_model(counts).to_bytes()
    with pytest.raises(avguard.AvguardError, match="not avguard counts"):
        avguard.Counts.from_bytes(counts.to_bytes()[:-9])
    other = avguard.learn_counts(logs[4:6], laws=data.laws, alpha=2.0)
    with pytest.raises(avguard.AvguardError, match="different laws or options"):
        avguard.merge_counts([counts, other])
    with pytest.raises(avguard.AvguardError, match="more than one"):
        avguard.merge_counts([counts, again])


def test_learning_nothing_raises_the_cli_s_message(data, tmp_path):
    done = cli_learn(data, tmp_path / "none.bin", [data.bad])
    assert done.returncode == 1
    counts = avguard.learn_counts([data.bad], laws=data.laws)
    with pytest.raises(avguard.AvguardError) as raised:
        avguard.build_model(counts)
    assert "avguard: " + str(raised.value) == done.stderr.strip().splitlines()[-1]
    with pytest.raises(avguard.AvguardError, match="13 is not in 1..=12"):
        avguard.learn_counts(data.train_logs()[:1], laws=data.laws, max_predicates=13)
    with pytest.raises(avguard.AvguardError, match="unexpected argument '--colour'"):
        avguard.learn_counts(data.train_logs()[:1], laws=data.laws, colour="red")


KNOWN_LIBHDF5 = REPO / "tests" / "fuzz" / "known-libhdf5"


def test_files_that_crash_libhdf5_fail_alone_and_the_interpreter_lives(data, tmp_path):
    """Logs are read in a child process, as the CLI reads them: Debian's libhdf5 1.10.8 segfaults on
    these files after reading another one (and wants 3 GB for the last), which in this interpreter would
    end the test run. Each fails alone with the CLI's message; the good logs around them still read."""
    good = data.test_logs()[0]
    bad = [
        KNOWN_LIBHDF5 / "2-bad-attribute-dataspace.h5",
        KNOWN_LIBHDF5 / "3-libfuzzer-h5aiterate-crash.h5",
        KNOWN_LIBHDF5 / "5-libhdf5-allocates-3gb.h5",
    ]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(good, mixed / good.name)
    for path in bad:
        shutil.copy(path, mixed / path.name)
    cli_out = tmp_path / "cli"
    assert cli("score", "--model", data.model, "--out", cli_out, mixed, check=False).returncode == 1
    cli_errors = [(e["file"], e["error"]) for e in score_json(cli_out)["errors"]]
    assert [os.path.basename(f) for f, _ in cli_errors] == [p.name for p in bad]

    def same_failure(path, message, cli_message):
        # The CLI's message, or the crash itself: whether libhdf5 faults on a file in a fresh process
        # depends on that process's heap, and the interpreter's is not the CLI's.
        crashed = f"{path}: the HDF5 library crashed reading it"
        return message == cli_message or message.startswith(crashed)

    frames, _ = avguard.read_log(good)
    for path, (_, cli_message) in zip(bad, cli_errors):
        with pytest.raises(avguard.AvguardError) as raised:
            avguard.read_log(path)
        assert same_failure(path, str(raised.value), cli_message), (str(raised.value), cli_message)
        again, _ = avguard.read_log(good)
        assert again.equals(frames)
    # Scoring: the same files fail, each alone, and the good log is scored.
    model = avguard.Model.load(data.model)
    with pytest.raises(avguard.LogErrors) as raised:
        model.score(mixed)
    assert [f for f, _ in raised.value.errors] == [f for f, _ in cli_errors]
    for (name, message), (_, cli_message) in zip(raised.value.errors, cli_errors):
        assert same_failure(name, message, cli_message), (message, cli_message)
    assert len(raised.value.result) == len(model.properties)


def test_calibrate_gives_the_cli_s_model_and_skips_a_bad_log(data, tmp_path):
    """Model.calibrate makes the model file `avguard calibrate` writes for the same logs and options; a log
    that cannot be read is skipped (LogErrors, with the model calibrated on the others)."""
    cal = tmp_path / "cal"
    cli("simulate", "--scenario", REPO / "scenarios" / "red_light_queue.toml", "--runs", 60, "--seed", 17, "--out", cal)
    by_cli = tmp_path / "cli.bin"
    cli("calibrate", "--model", data.model, "--target-false-alarms", "10%", "--debounce", "1", "--out", by_cli, cal)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = avguard.Model.load(data.model).calibrate(cal, target_false_alarms=0.1, debounce=[1])
    assert model.to_bytes() == by_cli.read_bytes()
    calibration = {p["name"]: p["calibration"] for p in model.info()["properties"]}
    assert any(c is not None for c in calibration.values())
    # One warning per property left uncalibrated, naming it.
    warned = sorted(str(w.message).split(":")[0] for w in caught)
    assert warned == sorted(name for name, c in calibration.items() if c is None)
    mixed = tmp_path / "mixed"
    shutil.copytree(cal, mixed)
    (mixed / "zz_corrupt.h5").write_bytes(b"not an HDF5 file\n" * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(avguard.LogErrors) as failed:
            avguard.Model.load(data.model).calibrate(mixed, target_false_alarms=0.1, debounce=[1])
    assert [os.path.basename(name) for name, _ in failed.value.errors] == ["zz_corrupt.h5"]
    assert failed.value.result.to_bytes() == by_cli.read_bytes()
    with pytest.raises(ValueError):
        avguard.Model.load(data.model).calibrate(cal, target_false_alarms=10)


def test_calibrate_sets_the_collision_interventions_threshold_as_the_cli_does(data, tmp_path):
    """enforce_target_false_alarms is `--enforce-target-false-alarms`: the default and another rate give a
    collision property its interventions' θ, None gives none, each the CLI's model file to the byte."""
    cal = tmp_path / "cal"
    cli("simulate", "--scenario", REPO / "scenarios" / "red_light_queue.toml", "--runs", 60, "--seed", 17, "--out", cal)
    base = avguard.Model.load(data.model)
    assert "no_collision" in base.properties
    enforcement = {}
    for flag, rate in [("20%", 0.2), ("40%", 0.4), ("none", None)]:
        by_cli = tmp_path / f"cli-{flag}.bin"
        cli(
            "calibrate", "--model", data.model, "--target-false-alarms", "10%", "--debounce", "1",
            "--enforce-target-false-alarms", flag, "--out", by_cli, cal,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = base.calibrate(cal, target_false_alarms=0.1, debounce=[1], enforce_target_false_alarms=rate)
        assert model.to_bytes() == by_cli.read_bytes(), flag
        enforcement[flag] = {p["name"]: p["enforcement"] for p in model.info()["properties"]}
    # Only the collision property has one, at its own target; a looser target gives a θ no higher.
    for flag, target in [("20%", 0.2), ("40%", 0.4)]:
        assert {n for n, e in enforcement[flag].items() if e is not None} == {"no_collision"}
        assert enforcement[flag]["no_collision"]["target_false_alarm"] == pytest.approx(target)
    assert enforcement["40%"]["no_collision"]["theta"] <= enforcement["20%"]["no_collision"]["theta"]
    assert all(e is None for e in enforcement["none"].values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert base.calibrate(cal, enforce_target_false_alarms=None).to_bytes() != base.calibrate(cal).to_bytes()
    for bad in (0.0, 1.0, 20.0, float("nan")):
        with pytest.raises(ValueError):
            base.calibrate(cal, enforce_target_false_alarms=bad)


# `select::member_seed(0, 1)`: the fold seed of an ensemble's second chain under `--seed 0`.
SECOND_CHAIN_SEED = 0x9E3779B97F4A7C15


def test_an_ensemble_s_risk_is_the_mean_of_its_chains_learned_alone(data):
    """`ensemble=2` keeps a second chain per searched property, learned under another fold assignment with
    the first chain's smoothing. Its per-frame risk must be the mean of the risks of the two chains, each
    learned alone with its seed (at a given α, so that both searches smooth alike, and without the frame
    share or a forest, whose weights the first chain's folds would choose for both)."""
    logs = data.train_logs()
    options = {"laws": data.laws, "max_predicates": 4, "alpha": 0.3, "frame_share": "off", "forest": 0}
    ensemble = avguard.build_model(avguard.learn_counts(logs, ensemble=2, **options))
    first = avguard.build_model(avguard.learn_counts(logs, ensemble=1, **options))
    second = avguard.build_model(avguard.learn_counts(logs, ensemble=1, seed=SECOND_CHAIN_SEED, **options))
    members = {p["name"]: p["members"] for p in ensemble.info()["properties"]}
    assert any(members.values()), "no property was searched: nothing to average"
    n_differing = 0
    for path in data.test_logs():
        e, a, b = ensemble.risk(path), first.risk(path), second.risk(path)
        for prop in ensemble.properties:
            expected = (a[prop] + b[prop]) / 2 if members[prop] else a[prop]
            np.testing.assert_allclose(e[prop], expected, rtol=0, atol=1e-12, err_msg=f"{path.name} {prop}")
            n_differing += members[prop] != [] and not np.allclose(a[prop], b[prop])
    assert n_differing > 0, "the two chains agree everywhere: the mean was not tested"


def test_evaluate_gives_the_cli_s_evaluation_and_its_figures_as_frames(data, tmp_path):
    """avguard.evaluate runs the evaluation `avguard evaluate` runs: with the same options it writes the same
    evaluate.json and models, byte for byte, prints the same tables, and its frames hold the report's
    figures."""
    scenario = REPO / "scenarios" / "red_light_queue.toml"
    train, test = tmp_path / "train", tmp_path / "test"
    cli("simulate", "--scenario", scenario, "--runs", 40, "--seed", 23, "--out", train)
    cli("simulate", "--scenario", scenario, "--runs", 20, "--seed", 29, "--out", test)
    flags = ["--seed", "2", "--forest", "0", "--ensemble", "1", "--debounce", "1,2", "--thresholds", "0.4,0.6",
             "--calibration-fraction", "0.5", "--target-false-alarms", "30%"]
    by_cli = tmp_path / "cli"
    printed = cli("evaluate", "--laws", data.laws, "--train", train, "--test", test, *flags, "--out", by_cli).stdout
    by_py = tmp_path / "py"
    ev = avguard.evaluate(data.laws, train, [test], seed=2, forest=0, ensemble=1, debounce=(1, 2),
                          thresholds=[0.4, 0.6], calibration_fraction=0.5, target_false_alarms="30%", out=by_py)
    same_files(by_cli, by_py, ["evaluate.json", "model_fixed.bin", "model_auto.bin"])
    assert ev.report == json.loads((by_cli / "evaluate.json").read_text())
    assert printed.startswith(ev.text)
    for mode in ("fixed", "auto"):
        assert ev.models[mode].to_bytes() == (by_cli / f"model_{mode}.bin").read_bytes()

    summary = ev.summary()
    n_checked = 0
    for m in ev.report["models"]:
        for name, p in m["properties"].items():
            rows = summary[(summary.model == m["mode"]) & (summary.property == name)].set_index("alarm")
            expected = {f"theta={k}": s for k, s in p["summary"].items()}
            expected |= {c: s for c, s in p["comparison"]["comparators"]}
            if p["comparison"]["calibrated"] is not None:
                expected["calibrated"] = p["comparison"]["calibrated"]
                assert rows.loc["calibrated", "theta"] == p["calibration"]["theta"]
            expected |= {f"rule<={b['budget_pct']:g}%": b["summary"] for b in p["budget_rules"]}
            expected |= {f"rss_tuned<={t['budget_pct']:g}%": t["summary"] for t in p["rss_tuned"] if t["summary"]}
            assert sorted(rows.index) == sorted(expected)
            for alarm, s in expected.items():
                for field in ("predicted_pct", "false_alarm_pct", "median_lead_s", "n_violating_runs", "n_safe_runs"):
                    got, want = rows.loc[alarm, field], s[field]
                    assert (pd.isna(got) and want is None) or got == want, (m["mode"], name, alarm, field)
                n_checked += 1
    assert (summary.alarm == "calibrated").any(), "no property was calibrated: the calibrated rows went untested"
    assert n_checked > 20

    dominance = ev.dominance()
    auto = next(m for m in ev.report["models"] if m["mode"] == "auto")
    for name, p in auto["properties"].items():
        for d in p["comparison"]["dominance"]:
            row = dominance[(dominance.property == name) & (dominance.comparator == d["comparator"])]
            assert len(row) == 1 and bool(row.dominates.iloc[0]) == d["dominates"]
            assert row.median_lead_s.iloc[0] == d["comparator_summary"]["median_lead_s"] or (
                d["comparator_summary"]["median_lead_s"] is None and pd.isna(row.median_lead_s.iloc[0]))
    assert set(dominance.comparator) >= {"baseline", "rss", "reactive_rule"}


def test_evaluate_refuses_what_the_cli_refuses_with_its_message(data, tmp_path):
    """Options the command refuses raise AvguardError with the command's message; --repeats is refused."""
    done = cli("evaluate", "--laws", data.laws, "--train", data.train, "--test", data.test,
               "--calibration-fraction", "2", check=False)
    assert done.returncode != 0
    with pytest.raises(avguard.AvguardError) as failed:
        avguard.evaluate(data.laws, data.train, data.test, calibration_fraction=2)
    assert str(failed.value) in done.stderr
    with pytest.raises(avguard.AvguardError, match="unexpected argument '--no-such-option'"):
        avguard.evaluate(data.laws, data.train, data.test, no_such_option=1)
    with pytest.raises(avguard.AvguardError, match="--repeats 2"):
        avguard.evaluate(data.laws, data.train, data.test, repeats=2)
    with pytest.raises(avguard.AvguardError, match="no_such_folder"):
        avguard.evaluate(data.laws, tmp_path / "no_such_folder", data.test)
