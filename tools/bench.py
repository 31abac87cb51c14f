#!/usr/bin/env python3
"""mblint's benchmark: speed and memory on real and synthetic configs, beside
yamllint (what these repositories run in pre-commit today) and a yaml-cpp
parse-only floor (build/yaml_parse_floor: the cost of just reading the files).

  tools/bench.sh [--quick] [--yamllint-sample N] [--per-file-sample N] [--repeat N]

mblint runs with its default threads (one per CPU it may use: parsing ahead) and
with -j 1. Corpora: every YAML file of ../shared/corpus (MBLINT_SHARED_DIR), and a 10x
synthetic corpus made from it in a temp dir (each file copied 10 times with
its integers perturbed, so no two copies are identical). Modes: one process
for all files, and one process per file (the pre-commit case: latency per
file, median and p99). Peak memory is the largest maxrss of any process.
Not a test: numbers depend on the machine; docs/performance.md has a run.
"""
import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd, cwd=None):
    """Wall seconds, CPU seconds (user + sys) and peak RSS (MiB) of one process; output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(map(str, cmd[:3]))} ... exited {proc.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def peak_rss(cmd):
    """Peak RSS (MiB) of `cmd` measured by /usr/bin/time: wait4's maxrss of a
    child forked from Python also counts the Python pages it started with."""
    if not Path("/usr/bin/time").exists():
        return float("nan")
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return int(out.read().strip().splitlines()[-1]) / 1024


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def synthesize(files, out_dir: Path, copies: int):
    """`copies` perturbed copies of each file: integers shifted, keys kept."""
    rng = random.Random(20261129)
    made = []
    for i, path in enumerate(files):
        text = path.read_text(errors="surrogateescape")
        for c in range(copies):
            def shift(m):
                return str(int(m.group(0)) + rng.randint(0, 3) * (c + 1))
            perturbed = re.sub(r"(?<![\w.])\d{1,6}(?![\w.])", shift, text)
            target = out_dir / f"{i:05d}-{c}" / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(perturbed, errors="surrogateescape")
            made.append(target)
    return made


def one_process(name, cmd_prefix, files, batch):
    """All files in one process (in `batch`-file chunks only if the argument list would overflow)."""
    total, cpu = 0.0, 0.0
    for start in range(0, len(files), batch):
        seconds, cpu_seconds, _ = run(cmd_prefix + [str(f) for f in files[start:start + batch]])
        total += seconds
        cpu += cpu_seconds
    return {"tool": name, "mode": "one process", "files": len(files), "seconds": total, "cpu": cpu,
            "files_per_s": len(files) / cpu}


def with_peak(row, cmd_prefix, files, batch):
    row["peak_mib"] = max(peak_rss(cmd_prefix + [str(f) for f in files[start:start + batch]])
                          for start in range(0, len(files), batch))
    return row


def one_process_repeated(tools, files, batch, repeat):
    """Each tool over all files in one process, `repeat` rounds with the tools taking turns (so that
    a neighbour's build slows both alike); per tool the round with the median CPU time counts."""
    rounds = [[one_process(name, cmd, files, batch) for name, cmd in tools] for _ in range(max(1, repeat))]
    rows = []
    for i, (name, cmd) in enumerate(tools):
        runs = sorted((r[i] for r in rounds), key=lambda row: row["cpu"])
        row = with_peak(runs[len(runs) // 2], cmd, files, batch)
        row["round_cpus"] = [r[i]["cpu"] for r in rounds]  # in round order, for per-round ratios
        row["round_walls"] = [r[i]["seconds"] for r in rounds]
        rows.append(row)
    return rows


def per_file(name, cmd_prefix, files):
    times, cpus = [], []
    for f in files:
        seconds, cpu, _ = run(cmd_prefix + [str(f)])
        times.append(seconds)
        cpus.append(cpu)
    largest = sorted(files, key=lambda f: f.stat().st_size)[-10:]  # peak memory: the 10 largest files
    peak = max(peak_rss(cmd_prefix + [str(f)]) for f in largest)
    return {"tool": name, "mode": "process per file", "files": len(files), "seconds": sum(times),
            "cpu": sum(cpus), "files_per_s": len(files) / sum(cpus),
            "median_ms": statistics.median(cpus) * 1e3, "p99_ms": percentile(cpus, 99) * 1e3,
            "wall_median_ms": statistics.median(times) * 1e3, "peak_mib": peak}


def table(rows):
    print(f"| {'corpus':<10} | {'tool':<14} | {'mode':<16} | {'files':>6} | {'CPU s':>7} | {'wall s':>7} | "
          f"{'files/s':>8} | {'median ms':>9} | {'p99 ms':>7} | {'wall med ms':>11} | {'peak MiB':>8} |")
    print("|" + "|".join("-" * (w + 2) for w in (10, 14, 16, 6, 7, 7, 8, 9, 7, 11, 8)) + "|")
    for r in rows:
        median = f"{r['median_ms']:.2f}" if "median_ms" in r else "-"
        p99 = f"{r['p99_ms']:.2f}" if "p99_ms" in r else "-"
        wall_median = f"{r['wall_median_ms']:.2f}" if "wall_median_ms" in r else "-"
        print(f"| {r['corpus']:<10} | {r['tool']:<14} | {r['mode']:<16} | {r['files']:>6} | {r['cpu']:>7.2f} | "
              f"{r['seconds']:>7.2f} | {r['files_per_s']:>8.0f} | {median:>9} | {p99:>7} | {wall_median:>11} | "
              f"{r['peak_mib']:>8.1f} |")
    print("\nfiles/s, median and p99 are CPU time (user + sys) of the processes: on a shared machine wall time")
    print("measures the neighbours; on an idle one the two agree to within the process start (wall med ms).")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"), help="build dir with mblint and yaml_parse_floor")
    parser.add_argument("--per-file-sample", type=int, default=0,
                        help="process-per-file runs on this many files of each corpus (0: all)")
    parser.add_argument("--yamllint-sample", type=int, default=300,
                        help="files of each corpus yamllint is run on per file (it takes ~0.1 s a file)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs of mblint, the floor (and on the real corpus yamllint) over a whole corpus "
                             "in one process, taking turns; the median counts")
    parser.add_argument("--quick", action="store_true", help="small samples, no synthetic corpus")
    args = parser.parse_args()

    build = Path(args.build)
    mblint, floor = build / "mblint", build / "yaml_parse_floor"
    for binary in (mblint, floor):
        if not binary.exists():
            sys.exit(f"bench: {binary} missing: cmake --build {build} --target mblint yaml_parse_floor")
    shared = Path(os.environ.get("MBLINT_SHARED_DIR", ROOT.parent / "shared"))
    corpus = sorted(p for p in (shared / "corpus").rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml"))
    if not corpus:
        sys.exit(f"bench: no YAML files under {shared / 'corpus'} (set MBLINT_SHARED_DIR)")
    yamllint = shutil.which("yamllint")
    if not yamllint:
        print("bench: yamllint not found (apt-get install yamllint): its rows are skipped\n")

    if args.quick:
        args.per_file_sample = args.per_file_sample or 100
        args.yamllint_sample = min(args.yamllint_sample, 50)
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="mblint-bench-"))
    try:
        corpora = {"corpus": corpus}
        if not args.quick:
            corpora["synthetic"] = synthesize(corpus, tmp, 10)
        tiny = tmp / "one.yaml"
        tiny.write_text("model:\n  tensor_model_parallel_size: 2\n")

        rows = []
        mblint_cmd = [str(mblint), "check", "--format", "json"]
        for label, files in corpora.items():
            sample = files if not args.per_file_sample else rng.sample(files, min(args.per_file_sample, len(files)))
            yl_sample = rng.sample(files, min(args.yamllint_sample, len(files)))
            tools = [("mblint check", mblint_cmd), ("yaml-cpp floor", [str(floor)])]
            # One process for all files also with one thread (check -j 1: no parsing ahead), and
            # the whole real corpus in one yamllint process, all taking turns (yamllint takes
            # ~13 s a run) so that a busy neighbour slows them alike.
            repeated = tools + [("mblint -j 1", mblint_cmd + ["-j", "1"])]
            repeated += [("yamllint", [yamllint])] if yamllint and label == "corpus" else []
            for row in one_process_repeated(repeated, files, 4000, args.repeat):
                rows.append({"corpus": label, **row})
            for tool, cmd in tools:
                rows.append({"corpus": label, **per_file(tool, cmd, sample)})
            if yamllint:
                rows.append({"corpus": label, **per_file("yamllint", [yamllint], yl_sample)})
            print(f"[{label}: {len(files)} files done]", file=sys.stderr)

        startup = [run([str(mblint), "check", str(tiny)])[1] for _ in range(50)]
        print(f"mblint {subprocess.run([str(mblint), 'version'], capture_output=True, text=True).stdout.strip()}")
        print(f"{os.cpu_count()} cores; corpus {shared / 'corpus'}\n")
        table(rows)
        print(f"\nstartup `mblint check one.yaml` (2-line file, 50 runs), CPU: median "
              f"{statistics.median(startup) * 1e3:.2f} ms, p99 {percentile(startup, 99) * 1e3:.2f} ms")

        def find(corpus_label, tool, mode):
            return next((r for r in rows if r["corpus"] == corpus_label and r["tool"] == tool and r["mode"] == mode),
                        None)
        print("\ntargets (CPU time is the work done, user + sys of all threads; wall time is the wait):")

        def per_round(a, b, key):
            # The best (least disturbed) round of each, as timeit reports: on a shared machine
            # the slower rounds measure the neighbours.
            ratios = sorted(x / y for x, y in zip(a[key], b[key]))
            return (f"per round {ratios[0]:.2f}-{ratios[-1]:.2f}x, median {statistics.median(ratios):.2f}x; "
                    f"best rounds {min(a[key]) / min(b[key]):.2f}x")
        for label in corpora:
            f = find(label, "yaml-cpp floor", "one process")
            for tool in ("mblint check", "mblint -j 1"):
                m = find(label, tool, "one process")
                print(f"  {label}: {tool} one process {m['cpu']:.2f} s vs floor {f['cpu']:.2f} s CPU = "
                      f"{m['cpu'] / f['cpu']:.2f}x the floor (target <= 1.5x); {per_round(m, f, 'round_cpus')}")
            mp, yp = find(label, "mblint check", "process per file"), find(label, "yamllint", "process per file")
            if yp:
                print(f"  {label}: per file median {mp['median_ms']:.2f} ms vs yamllint {yp['median_ms']:.2f} ms CPU = "
                      f"{yp['median_ms'] / mp['median_ms']:.0f}x faster (target >= 20x); wall "
                      f"{yp['wall_median_ms'] / mp['wall_median_ms']:.0f}x")
        y1 = find("corpus", "yamllint", "one process")
        if y1:
            for tool in ("mblint check", "mblint -j 1"):
                m1 = find("corpus", tool, "one process")
                print(f"  corpus: {tool} one process {m1['cpu']:.2f} s vs yamllint {y1['cpu']:.2f} s CPU = "
                      f"{y1['cpu'] / m1['cpu']:.1f}x faster (target >= 20x); {per_round(y1, m1, 'round_cpus')}")
            m1 = find("corpus", "mblint check", "one process")
            m_wall, y_wall = statistics.median(m1["round_walls"]), statistics.median(y1["round_walls"])
            print(f"  corpus: mblint check one process {m_wall:.2f} s vs yamllint {y_wall:.2f} s wall (medians) = "
                  f"{y_wall / m_wall:.1f}x faster (target >= 20x); {per_round(y1, m1, 'round_walls')}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
