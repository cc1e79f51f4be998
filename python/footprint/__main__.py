"""``python3 -m footprint ARGS``: the footprint command line, run in this process."""

import sys

from . import _footprint


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return _footprint._cli(["footprint", *argv])


if __name__ == "__main__":
    sys.exit(main())
