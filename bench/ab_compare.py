#!/usr/bin/env python3
"""Two builds of footprint side by side, for changes that must not change behaviour (refactors).

    bench/ab_compare.py OLD_BINARY NEW_BINARY [--reps 3] [--repeat 10] [--models GLOB ...]
        [--zoo] [--planners greedy-size best-fit auto] [--plan-reps 1] [--no-plans]
    [--doc docs/BENCHMARKS.md --heading "## ..."]

Runtime: every model folder of ../shared/models/{light,random,real} (model.onnx, input_*.pb,
output_*.pb), and with --zoo every model of the PyTorch-exported zoo (tests/zoo/zoo.sh, labelled
zoo/NAME), through `footprint run --data-dir --json`, the two binaries interleaved (A B A B ...)
in fresh processes so that load on a shared machine hits both alike. Figures that must be equal
(predicted and planned arena, predicted peak, output match) are compared exactly; latency is the
median over the processes' medians, with the ratio new/old.

Planner: every instance of ../shared/benchmarks/minimalloc with each heuristic and `auto`
through `footprint plan --json`: arena bytes (must be equal) and solve time (median).

With --doc, the tables replace (or add) the section --heading of that markdown file.
"""
import argparse
import glob
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def model_figures(binary, folder, repeat):
    j = run_json([binary, "run", os.path.join(folder, "model.onnx"), "--data-dir", folder,
                  "--json", "--repeat", str(repeat)])
    return {
        "latency": j["latency_ms"]["median"],
        "exact": {
            "match": j.get("match"),
            "planned_arena": j["measured"]["arena_bytes"],
            "predicted_arena": j["predicted"]["arena_bytes"],
            "predicted_peak": j["predicted"]["total_peak_bytes"],
            "lower_bound": j["predicted"]["lower_bound_bytes"],
        },
    }


def plan_figures(binary, csv, algo):
    j = run_json([binary, "plan", "--json", "--algo", algo, csv])
    return {"arena": j["arena_bytes"], "ms": j.get("solve_ms", 0.0)}


def label(folder):
    shared_models = os.path.realpath(os.path.join(ROOT, "..", "shared", "models"))
    real = os.path.realpath(folder)
    if real.startswith(shared_models + os.sep):
        return os.path.relpath(real, shared_models)
    return "zoo/" + os.path.basename(real)


def zoo_folders():
    # The zoo's folder, made and cached on first use; its failures are left to the caller to see
    # (a model footprint cannot run shows as an error row).
    out = subprocess.run([os.path.join(ROOT, "tests", "zoo", "zoo.sh")], capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()[-1]
    return sorted(d for d in glob.glob(os.path.join(out, "*"))
                  if os.path.exists(os.path.join(d, "model.onnx"))
                  and os.path.exists(os.path.join(d, "input_0.pb")))


def compare_models(old, new, folders, reps, repeat, skipped):
    rows = []
    for folder in folders:
        name = label(folder)
        lat = {"old": [], "new": []}
        exact = {"old": None, "new": None}
        try:
            model_figures(new, folder, 1)
        except RuntimeError as e:  # a model the new build cannot run (the old one neither, then)
            skipped.append((name, str(e).splitlines()[-1][-200:]))
            print(f"[ab_compare] {name}: skipped, {skipped[-1][1]}", file=sys.stderr)
            continue
        for _ in range(reps):
            for side, binary in (("old", old), ("new", new)):
                f = model_figures(binary, folder, repeat)
                lat[side].append(f["latency"])
                if exact[side] is None:
                    exact[side] = f["exact"]
                elif exact[side] != f["exact"]:
                    exact[side] = dict(exact[side], unstable=True)
        mo, mn = statistics.median(lat["old"]), statistics.median(lat["new"])
        rows.append((name, mo, mn, mn / mo if mo > 0 else 0.0, exact["old"] == exact["new"],
                     exact["new"]))
        print(f"[ab_compare] {name}: {mo:.2f} -> {mn:.2f} ms, same figures: "
              f"{exact['old'] == exact['new']}", file=sys.stderr)
    return rows


def compare_plans(old, new, instances, algos, reps):
    rows = []
    for csv in instances:
        for algo in algos:
            ms = {"old": [], "new": []}
            arena = {"old": None, "new": None}
            for _ in range(reps):
                for side, binary in (("old", old), ("new", new)):
                    f = plan_figures(binary, csv, algo)
                    ms[side].append(f["ms"])
                    arena[side] = f["arena"]
            rows.append((os.path.basename(csv).split(".")[0], algo, arena["old"], arena["new"],
                         statistics.median(ms["old"]), statistics.median(ms["new"])))
    return rows


def geomean(xs):
    xs = [x for x in xs if x > 0]
    if not xs:
        return 0.0
    p = 1.0
    for x in xs:
        p *= x
    return p ** (1.0 / len(xs))


def section(args, model_rows, plan_rows, load_start, load_end, skipped=()):
    out = [args.heading, ""]
    out.append(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
               f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores, load "
               f"average {load_start} at the start, {load_end} at the end), one thread.")
    out.append("")
    out.append("Produced by:")
    out.append("")
    out.append("```sh")
    out.append(shlex.join(["bench/ab_compare.py"] + sys.argv[1:]))
    out.append("```")
    out.append("")
    out.append(f"`old` is `{args.old_label}`, `new` is `{args.new_label}`. Each model ran "
               f"{args.reps} times per binary, interleaved, in fresh processes (`footprint run "
               f"--data-dir DIR --json --repeat {args.repeat}`); latency is the median of the "
               "processes' medians. \"same\" means the output check, the planned and predicted "
               "arena, the predicted peak and the lower bound are equal to the byte.")
    out.append("")
    out.append("| model | old ms | new ms | new/old | same | outputs match | arena |")
    out.append("| --- | ---: | ---: | ---: | --- | --- | ---: |")
    for name, mo, mn, r, same, ex in model_rows:
        out.append(f"| {name} | {mo:.2f} | {mn:.2f} | {r:.3f} | {'yes' if same else 'NO'} | "
                   f"{ex['match']} | {ex['planned_arena']} |")
    out.append("")
    for name, why in skipped:
        out.append(f"Not compared: {name} (the new build cannot run it: `{why}`).")
        out.append("")
    ratios = [r[3] for r in model_rows]
    out.append(f"Latency ratio new/old, geometric mean: {geomean(ratios):.3f}; single models from "
               f"{min(ratios):.2f} to {max(ratios):.2f}. The binaries ran interleaved, so load "
               "hits both alike; with the load average above the core count, read single "
               "ratios as noise.")
    if plan_rows:
        out.append("")
        out.append(f"Planner: `footprint plan --json --algo ALGO` (validated plans) on every "
                   f"instance of `../shared/benchmarks/minimalloc`, {args.plan_reps} process(es) "
                   "per instance, planner and binary; solve times are medians. Arenas must be "
                   "equal (the script exits 1 otherwise); `auto` runs to its time budget where it "
                   "proves no optimum.")
        out.append("")
        out.append("| instance | planner | old arena | new arena | old ms | new ms |")
        out.append("| --- | --- | ---: | ---: | ---: | ---: |")
        for inst, algo, ao, an, mso, msn in plan_rows:
            flag = "" if ao == an else " (DIFFERS)"
            out.append(f"| {inst} | {algo} | {ao} | {an}{flag} | {mso:.1f} | {msn:.1f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--old-label", default="old")
    ap.add_argument("--new-label", default="new")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--models", nargs="*",
                    default=["light/*", "random/*", "real/*"])
    ap.add_argument("--zoo", action="store_true",
                    help="also every model of the PyTorch-exported zoo (tests/zoo/zoo.sh)")
    ap.add_argument("--planners", nargs="*", default=["greedy-size", "best-fit", "auto"])
    ap.add_argument("--plan-reps", type=int, default=1,
                    help="processes per instance, planner and binary (plans are deterministic "
                         "but for `auto`'s time budget; solve times are medians)")
    ap.add_argument("--no-plans", action="store_true")
    ap.add_argument("--doc")
    ap.add_argument("--heading", default="## Before and after: a refactor")
    args = ap.parse_args()
    shared = os.path.join(ROOT, "..", "shared")
    folders = []
    for pattern in args.models:
        folders += sorted(d for d in glob.glob(os.path.join(shared, "models", pattern))
                          if os.path.exists(os.path.join(d, "model.onnx")))
    if args.zoo:
        folders += zoo_folders()
    if not folders:
        print("ab_compare: no model folders under ../shared/models", file=sys.stderr)
        return 1
    load_start = " ".join(open("/proc/loadavg").read().split()[:3])
    skipped = []
    model_rows = compare_models(args.old, args.new, folders, args.reps, args.repeat, skipped)
    plan_rows = []
    if not args.no_plans:
        instances = sorted(glob.glob(os.path.join(shared, "benchmarks", "minimalloc", "*.csv")))
        plan_rows = compare_plans(args.old, args.new, instances, args.planners, args.plan_reps)
    load_end = " ".join(open("/proc/loadavg").read().split()[:3])
    text = section(args, model_rows, plan_rows, load_start, load_end, skipped)
    if args.doc:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "write_section.py"),
                        args.doc, args.heading], input=text, text=True, check=True)
    print(text)
    differs = any(not r[4] for r in model_rows) or any(r[2] != r[3] for r in plan_rows)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
