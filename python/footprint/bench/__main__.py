"""`python3 -m footprint.bench FILE... [options]` (also `python3 -m footprint bench-py ...`):
runs the benchmarks Python files define, with the options of `footprint bench`."""

import argparse
import json
import sys

from .. import _footprint
from ..errors import FootprintError, UsageError
from ._collect import collect
from ._runner import run


def _parser():
    p = argparse.ArgumentParser(
        prog="python3 -m footprint.bench",
        description="Run the benchmarks Python files define (footprint.bench): time and memory "
                    "per case; records keep parameter representations only.")
    p.add_argument("files", nargs="+", metavar="FILE", help="Python files or folders")
    p.add_argument("--tags", default="", help="Run only benchmarks with one of these tags (a,b)")
    p.add_argument("--repeat", type=int, default=5, help="Timed runs per case (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="Untimed runs before them (default 1)")
    p.add_argument("--out", help="Write records here (JSONL appends)")
    p.add_argument("--format", default="jsonl", choices=["jsonl", "gbench"],
                   help="Format of --out: jsonl (default) or gbench")
    p.add_argument("--db", help="Also save the run in this SQLite file")
    p.add_argument("--no-evict", action="store_true", help="Keep every memo until the end")
    p.add_argument("--case-rss", action="store_true",
                   help="Reset the RSS high-water mark before each case")
    p.add_argument("--memo-budget", type=int, help="Bound the bytes of live memos (LRU)")
    p.add_argument("--no-memory", action="store_true",
                   help="Measure time only (no tracemalloc, no heap sampling)")
    p.add_argument("--json", action="store_true", help="Print the run as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="Print nothing but errors")
    return p


def _row(r, width):
    hb = _footprint._human_bytes
    if r.error:
        return f"{r.name:<{width}} FAILED: {r.error}"
    w = r.wall
    predicted = hb(r.predicted_peak_bytes) if r.predicted_peak_bytes else "-"
    return (f"{r.name:<{width}} {w.median:>10.3f} {w.min:>10.3f} {w.stddev:>8.3f} "
            f"{hb(r.peak_heap_bytes):>11} {hb(r.peak_rss_bytes):>11} {predicted:>11}")


def _run(args):
    benchmarks = collect(*args.files, tags=[t for t in args.tags.split(",") if t])
    table = not args.json and not args.quiet
    if table:
        print(f"{'benchmark':<40} {'median ms':>10} {'min ms':>10} {'stddev':>8} "
              f"{'peak heap':>11} {'peak RSS':>11} {'predicted':>11}", flush=True)
    result = run(benchmarks, repetitions=args.repeat, warmup=args.warmup,
                 memo_budget=args.memo_budget, evict=not args.no_evict,
                 case_rss=args.case_rss, memory=not args.no_memory, out=args.out,
                 format=args.format, db=args.db,
                 on_record=(lambda r: print(_row(r, 40), flush=True)) if table else None)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    elif table:
        hb = _footprint._human_bytes
        print(f"run peak RSS {hb(result.peak_rss_bytes)}; memos created "
              f"{result.memo_creations}, evicted {result.memo_evictions}"
              + (f"; records -> {args.out}" if args.out else ""))
    failed = [r for r in result.records if r.error]
    if failed:
        print(f"footprint: error: {failed[0].name}: {failed[0].error}", file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.repeat < 1 or args.warmup < 0:
        print("footprint: error: --repeat must be at least 1 and --warmup at least 0",
              file=sys.stderr)
        return 2
    try:
        return _run(args)
    except UsageError as e:
        print(f"footprint: error: {e}", file=sys.stderr)
        return 2
    except FootprintError as e:
        print(f"footprint: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
