"""Ray scaling: logs/s of `avguard.ray.score` on a local cluster with 1 and 2 worker nodes, beside the CLI's
`avguard score` with 1 and 2 threads on the same logs, in the same run (`cargo xtask bench-ray`).

The cluster is a head node without task slots (`--num-cpus 0`: GCS and the driver only) plus K worker
nodes of one slot each, all on 127.0.0.1 inside the private network and PID namespaces xtask starts. Each
Ray measurement follows a warm-up call (worker processes started and the module imported), so it shows the
steady rate; the CLI is measured before and after the Ray runs; every run writes a fresh folder (no cached
results) and its score.json must equal the CLI's byte for byte. The machine is shared, so the best of the
repeats is reported.

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


def namespace_cpu_s() -> float:
    """CPU seconds (user + system) used so far by this PID namespace: the live processes (this driver,
    Ray's daemons and workers; we are the namespace's init, so every orphan is ours) plus the finished
    children this process waited for (the CLI runs)."""
    tick = os.sysconf("SC_CLK_TCK")
    live = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit() and entry != str(os.getpid()):
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            live += int(fields[11]) + int(fields[12])  # utime, stime
    own = os.times()
    return live / tick + own.user + own.system + own.children_user + own.children_system


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=240, help="logs scored per measurement")
    parser.add_argument("--batch-size", type=int, default=8, help="logs per Ray task")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each measurement")
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

    runs = iter(range(1000))
    rates = {}

    cpu_ms = {}

    def measure(name, score):
        """Times `score(out)` into a fresh folder (no cached results); keeps the best of the repeats, in
        logs/s of wall time and in CPU time per log over every process of the namespace."""
        out = work / f"out-{next(runs)}"
        cpu = namespace_cpu_s()
        start = time.perf_counter()
        score(out)
        rate = args.logs / (time.perf_counter() - start)
        cpu_per_log_ms = 1000 * (namespace_cpu_s() - cpu) / args.logs
        assert (out / "score.json").read_bytes() == expected, f"{name}: score.json differs from the CLI's"
        rates[name] = max(rates.get(name, 0.0), rate)
        cpu_ms[name] = min(cpu_ms.get(name, float("inf")), cpu_per_log_ms)

    def cli(threads):
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        return lambda out: run(avguard_bin, "score", "--model", model, "--out", out, logs, env=env)

    # Untimed: the logs are read once into the page cache, and the reference score.json made.
    run(avguard_bin, "score", "--model", model, "--out", work / "reference", logs)
    expected = (work / "reference" / "score.json").read_bytes()
    for _ in range(args.repeats):
        for threads in (1, 2):
            measure(f"avguard score, {threads} thread{'s' if threads > 1 else ''}", cli(threads))
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
            for _ in range(args.repeats):
                measure(
                    f"avguard.ray.score, {nodes} worker node{'s' if nodes > 1 else ''}",
                    lambda out: avguard.ray.score(logs, model, out, batch_size=args.batch_size),
                )
            ray_module.shutdown()
        finally:
            ray("stop", "--force")
    for _ in range(args.repeats):
        for threads in (1, 2):
            measure(f"avguard score, {threads} thread{'s' if threads > 1 else ''}", cli(threads))

    load = os.getloadavg()
    print(f"\n{args.logs} logs of {scenario.name}, Ray batch size {args.batch_size}; "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores")
    base = rates["avguard score, 1 thread"]
    base_cpu = cpu_ms["avguard score, 1 thread"]
    print(f"best of {2 * args.repeats} runs (CLI, before and after Ray) or {args.repeats} (Ray):")
    print(f"{'':36} {'logs/s':>8} {'vs CLI 1 thread':>16} {'CPU ms/log':>11} {'vs CLI':>7}")
    for name, rate in rates.items():
        cpu = cpu_ms[name]
        print(f"{name:36} {rate:8.1f} {rate / base:15.2f}x {cpu:11.2f} {cpu / base_cpu:6.2f}x")
    print("score.json identical to the CLI's in every Ray run")


if __name__ == "__main__":
    main()
