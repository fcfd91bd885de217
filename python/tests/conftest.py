"""Shared fixtures of the Python package's tests (run by `cargo xtask test`, see python/README section of
the project README): simulated logs and a model made with the `avguard` CLI itself, so every test can
compare the package with the CLI on the same inputs; and a two-node Ray cluster on loopback.

Environment: AVGUARD_BIN names the CLI binary built from the same sources (xtask sets it). The Ray
cluster is started only inside a private network namespace that has nothing but loopback (xtask runs
pytest under `unshare --net`); anywhere else the Ray tests fail rather than reach another address or stop another user's Ray.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def avguard_bin() -> str:
    path = os.environ.get("AVGUARD_BIN")
    if not path or not Path(path).is_file():
        pytest.fail("AVGUARD_BIN must name the avguard binary built from this checkout (cargo xtask test sets it)")
    return path


def cli(*args, check=True) -> subprocess.CompletedProcess:
    """Runs the avguard CLI; with `check`, fails the test (showing stderr) unless it exits with 0."""
    done = subprocess.run([avguard_bin(), *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        pytest.fail(f"avguard {' '.join(map(str, args))} failed ({done.returncode}):\n{done.stderr}")
    return done


class Data:
    """Logs and a model, all made by the CLI."""

    def __init__(self, root: Path):
        self.root = root
        self.laws = REPO / "laws" / "specs"
        scenario = REPO / "scenarios" / "red_light_queue.toml"
        self.train = root / "train"
        self.test = root / "test"
        cli("simulate", "--scenario", scenario, "--runs", 16, "--seed", 5, "--out", self.train)
        cli("simulate", "--scenario", scenario, "--runs", 6, "--seed", 91, "--out", self.test)
        self.model = root / "model.bin"
        cli("learn", "--laws", self.laws, "--out", self.model, self.train)
        # A log that is not HDF5: it must fail alone.
        self.mixed = root / "mixed"
        shutil.copytree(self.test, self.mixed)
        self.bad = self.mixed / "zz_corrupt.h5"
        self.bad.write_bytes(b"not an HDF5 file\n" * 10)

    def test_logs(self):
        return sorted(self.test.glob("*.h5"))

    def train_logs(self):
        return sorted(self.train.glob("*.h5"))


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> Data:
    return Data(tmp_path_factory.mktemp("avguard-data"))


class LateLogs:
    """Priority-road runs as simulated (`orig`) and with every road user reported 0.3 s late (`late`,
    `avguard perturb --perception-delay 0.3`), and the model `avguard learn --abstraction fixed` makes of
    the late ones (`cli_model`), with its stderr (`cli_stderr`); the same for road users 0.3 ± 0.2 s late
    (`jittered`, `jittered_model`, `jittered_stderr`) and for road users whose speeds and headings are
    noisy (`noisy`, `noisy_model`, `noisy_stderr`: `--obstacle-noise 0,0.3,0.03`)."""

    def __init__(self, root: Path, laws: Path):
        self.orig, self.late = root / "orig", root / "late"
        cli("simulate", "--scenario", REPO / "scenarios" / "priority_road.toml", "--runs", 40, "--seed", 9,
            "--out", self.orig)
        cli("perturb", "--perception-delay", 0.3, "--out", self.late, self.orig)
        self.cli_model = root / "cli.bin"
        done = cli("learn", "--laws", laws, "--out", self.cli_model, "--abstraction", "fixed", self.late)
        self.cli_stderr = done.stderr
        # Road users reported 0.1-0.5 s late, an age that varies from frame to frame (session 38).
        self.jittered = root / "jittered"
        cli("perturb", "--perception-delay", 0.3, "--perception-jitter", 0.2, "--out", self.jittered,
            self.orig)
        self.jittered_model = root / "jittered.bin"
        done = cli("learn", "--laws", laws, "--out", self.jittered_model, "--abstraction", "fixed",
                   self.jittered)
        self.jittered_stderr = done.stderr
        # Noisy velocities (session 39).
        self.noisy = root / "noisy"
        cli("perturb", "--obstacle-noise", "0,0.3,0.03", "--out", self.noisy, self.orig)
        self.noisy_model = root / "noisy.bin"
        done = cli("learn", "--laws", laws, "--out", self.noisy_model, "--abstraction", "fixed", self.noisy)
        self.noisy_stderr = done.stderr


@pytest.fixture(scope="session")
def late_logs(data, tmp_path_factory) -> LateLogs:
    return LateLogs(tmp_path_factory.mktemp("avguard-late"), data.laws)


def same_files(left: Path, right: Path, names) -> None:
    """Asserts the named files of two output folders are byte for byte the same."""
    for name in names:
        a, b = (left / name).read_bytes(), (right / name).read_bytes()
        assert a == b, f"{name} differs between {left} and {right}"


def network_interfaces():
    """The interfaces of this process's network namespace (asked of the kernel; /sys may show the host's)."""
    import socket

    return sorted(name for _, name in socket.if_nameindex())


def ray_cmd(*args):
    ray = Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """A real Ray cluster of two nodes (`ray start --head`, then `ray start --address`) on 127.0.0.1,
    stopped afterwards. Yields its address."""
    interfaces = network_interfaces()
    if interfaces != ["lo"] or os.environ.get("AVGUARD_PRIVATE_NAMESPACES") != "1":
        # `ray stop` stops every Ray process it can see: only in our own PID namespace is that ours alone.
        pytest.fail(
            "the Ray cluster test runs only in private network and PID namespaces with nothing but "
            "loopback (cargo xtask test runs pytest under `unshare --net --pid` and says so in "
            f"AVGUARD_PRIVATE_NAMESPACES=1); this one has network interfaces {interfaces}"
        )
    temp = tmp_path_factory.mktemp("ray")
    port = "6380"
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats"]
    head = ray_cmd("start", "--head", "--port", port, "--include-dashboard", "false",
                   "--temp-dir", str(temp), *common)
    assert head.returncode == 0, f"ray start --head failed:\n{head.stdout}\n{head.stderr}"
    try:
        worker = ray_cmd("start", "--address", address, *common)
        assert worker.returncode == 0, f"ray start --address failed:\n{worker.stdout}\n{worker.stderr}"
        import ray

        ray.init(address=address, log_to_driver=False, configure_logging=False)
        deadline = time.monotonic() + 60
        while True:
            alive = [n for n in ray.nodes() if n["Alive"]]
            if len(alive) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert [n["NodeManagerAddress"] for n in alive] == ["127.0.0.1", "127.0.0.1"], alive
        yield address
    finally:
        try:
            import ray

            ray.shutdown()
        finally:
            ray_cmd("stop", "--force")


def score_json(folder: Path) -> dict:
    return json.loads((folder / "score.json").read_text())
