"""``python3 -m footprint ARGS``: the footprint command line, run in this process.
``python3 -m footprint bench-py FILE...`` runs Python benchmarks (``python3 -m footprint.bench``)."""

import sys

from . import _footprint


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench-py"]:
        from .bench.__main__ import main as bench_main
        return bench_main(argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    return _footprint._cli(["footprint", *argv])


if __name__ == "__main__":
    sys.exit(main())
