"""avguard.ray on a real two-node Ray cluster (see conftest.ray_cluster): the CLI's bytes, failures alone."""

import pytest

import avguard
import avguard.ray
from conftest import cli, same_files, score_json

OUTPUTS = ["score.json", "report.md", "report.html", "states.json"]


@pytest.mark.parametrize("batch_size", [1, 3])
def test_ray_score_writes_the_cli_s_bytes_and_a_bad_log_fails_alone(data, ray_cluster, tmp_path, batch_size):
    cli_out, ray_out = tmp_path / "cli", tmp_path / "ray"
    assert cli("score", "--model", data.model, "--out", cli_out, data.mixed, check=False).returncode == 1
    with pytest.raises(avguard.LogErrors) as raised:
        avguard.ray.score(data.mixed, data.model, ray_out, address=ray_cluster, batch_size=batch_size)
    same_files(cli_out, ray_out, OUTPUTS)
    listed = score_json(cli_out)["errors"]
    assert raised.value.errors == [(e["file"], e["error"]) for e in listed]
    assert [name for name, _ in raised.value.errors] == [str(data.bad)]


def test_ray_score_of_good_logs_returns_the_runs(data, ray_cluster, tmp_path):
    table = avguard.ray.score(data.test, avguard.Model.load(data.model), tmp_path / "ray", address=ray_cluster)
    assert len(table) == len(data.test_logs()) * len(avguard.Model.load(data.model).properties)
    cli("score", "--model", data.model, "--out", tmp_path / "cli", data.test)
    same_files(tmp_path / "cli", tmp_path / "ray", OUTPUTS)


def test_ray_learn_writes_the_cli_s_model_and_skips_a_bad_log(data, ray_cluster, tmp_path):
    logs = [*data.train_logs(), data.bad]
    done = cli("learn", "--laws", data.laws, "--out", tmp_path / "cli.bin", *logs)
    assert f"skipped {data.bad}" in done.stderr
    with pytest.warns(UserWarning, match=f"skipped {data.bad}"):
        model = avguard.ray.learn(logs, data.laws, tmp_path / "ray.bin", address=ray_cluster, batch_size=5)
    assert (tmp_path / "ray.bin").read_bytes() == (tmp_path / "cli.bin").read_bytes() == model.to_bytes()


def test_ray_learn_records_late_logs_again_as_the_cli_does(late_logs, data, ray_cluster, tmp_path):
    """The road users' lag is read off the collisions of all the shards together, and the logs are
    recorded again with it: the CLI's model, not the refusal of counts made in one pass."""
    with pytest.warns(UserWarning, match="road users seem to be reported late"):
        model = avguard.ray.learn(late_logs.late, data.laws, tmp_path / "ray.bin", address=ray_cluster,
                                  batch_size=7, abstraction="fixed")
    assert (tmp_path / "ray.bin").read_bytes() == late_logs.cli_model.read_bytes() == model.to_bytes()
    assert model.info()["perception_latency_s"] > 0
