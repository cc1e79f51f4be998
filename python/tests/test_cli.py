"""python3 -m footprint is the footprint command line."""

import json
import subprocess
import sys

import footprint
from conftest import cli_json


def run_module(*args):
    return subprocess.run([sys.executable, "-m", "footprint", *map(str, args)],
                          capture_output=True, text=True)


def test_module_prints_what_the_binary_prints(tiny_cnn):
    r = run_module("analyze", tiny_cnn, "--dim", "N=4", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == cli_json("analyze", tiny_cnn, "--dim", "N=4")


def test_exit_codes(tmp_path):
    assert run_module("--version").stdout.strip() == "footprint " + footprint.__version__
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\xff" * 10)
    r = run_module("info", bad)
    assert r.returncode == 1 and r.stderr.startswith("footprint: error: ")
    assert run_module("info", "--nope").returncode == 2
