"""Ray scaling: logs/s of `avguard.ray.score` on a local cluster with 1 and 2 worker nodes, beside the CLI's
`avguard score` with 1 and 2 threads on the same logs, in the same run (`cargo xtask bench-ray`).

The cluster is a head node without task slots (`--num-cpus 0`: GCS and the driver only) plus K worker
nodes of one slot each, all on 127.0.0.1 inside the private network and PID namespaces xtask starts. Each
Ray measurement follows a warm-up call (worker processes started and the module imported), so it shows the
steady rate; each output's score.json must equal the CLI's byte for byte.

Environment: AVGUARD_BIN (the release CLI), AVGUARD_PRIVATE_NAMESPACES=1.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(*args, env=None):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}")
    return done


def ray(*args):
    return run(Path(sys.executable).with_name("ray"), *args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=240, help="logs scored per measurement")
    parser.add_argument("--batch-size", type=int, default=8, help="logs per Ray task")
    args = parser.parse_args()
    if os.environ.get("AVGUARD_PRIVATE_NAMESPACES") != "1":
        sys.exit("run through `cargo xtask bench-ray` (a private network and PID namespace)")
    avguard_bin = os.environ["AVGUARD_BIN"]
    import avguard.ray

    work = Path(tempfile.mkdtemp(prefix="avguard-ray-bench-"))
    scenario = REPO / "scenarios" / "red_light_queue.toml"
    print(f"making {args.logs} logs and a model ...", flush=True)
    run(avguard_bin, "simulate", "--scenario", scenario, "--runs", 40, "--seed", 1, "--out", work / "train")
    run(avguard_bin, "simulate", "--scenario", scenario, "--runs", args.logs, "--seed", 2, "--out", work / "logs")
    model = work / "model.bin"
    run(avguard_bin, "learn", "--laws", REPO / "laws" / "specs", "--out", model, work / "train")
    logs = work / "logs"

    rates = []

    def cli(threads):
        out = work / f"cli-{threads}"
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        start = time.perf_counter()
        run(avguard_bin, "score", "--model", model, "--out", out, logs, env=env)
        took = time.perf_counter() - start
        rates.append((f"avguard score, {threads} thread{'s' if threads > 1 else ''}", args.logs / took))
        return (out / "score.json").read_bytes()

    expected = cli(1)
    assert cli(2) == expected
    for nodes in (1, 2):
        temp = work / f"ray-{nodes}"
        common = ["--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
        ray("start", "--head", "--port", "6390", "--num-cpus", "0", "--include-dashboard", "false",
            "--temp-dir", temp, *common)
        try:
            for _ in range(nodes):
                ray("start", "--address", "127.0.0.1:6390", "--num-cpus", "1", *common)
            import ray as ray_module

            ray_module.init(address="127.0.0.1:6390", log_to_driver=False, configure_logging=False)
            warm = sorted(logs.glob("*.h5"))[: 2 * nodes]
            avguard.ray.score(warm, model, work / f"warm-{nodes}", batch_size=1)
            out = work / f"ray-out-{nodes}"
            start = time.perf_counter()
            avguard.ray.score(logs, model, out, batch_size=args.batch_size)
            took = time.perf_counter() - start
            assert (out / "score.json").read_bytes() == expected, "Ray's score.json differs from the CLI's"
            rates.append((f"avguard.ray.score, {nodes} worker node{'s' if nodes > 1 else ''}", args.logs / took))
            ray_module.shutdown()
        finally:
            ray("stop", "--force")
    expected_again = cli(2)
    assert expected_again == expected

    load = os.getloadavg()
    print(f"\n{args.logs} logs of {scenario.name}, Ray batch size {args.batch_size}; "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores")
    base = rates[0][1]
    print(f"{'':40} {'logs/s':>8} {'vs CLI 1 thread':>16}")
    for name, rate in rates:
        print(f"{name:40} {rate:8.1f} {rate / base:15.2f}x")
    print("score.json identical to the CLI's in every Ray run")


if __name__ == "__main__":
    main()
