"""The pytest plugin: a limit fails a test that leaks 100 MB and passes it without the leak; a
predicted peak fails without running the test."""

import os
import pathlib
import subprocess
import sys

import footprint

# The folder this footprint was imported from, for the inner pytest (which runs elsewhere).
PACKAGE_ROOT = pathlib.Path(footprint.__file__).resolve().parents[1]

TESTS = '''
import numpy as np
import pytest

leaked = []

@pytest.mark.footprint_limit("64 MiB")
def test_with_leak():
    leaked.append(np.ones(100 * 1000 * 1000, dtype=np.uint8))

@pytest.mark.footprint_limit("64 MiB")
def test_without_leak():
    np.ones(1000 * 1000, dtype=np.uint8).sum()

@pytest.mark.footprint_predict(MODEL, dims={"N": 8}, max_peak="1 MiB")
def test_predicted_too_big():
    raise AssertionError("not run: the prediction fails first")

@pytest.mark.footprint_predict(MODEL, dims={"N": 8}, max_peak="64 MiB")
def test_predicted_small_enough():
    pass
'''


def run_pytest(tmp_path, model):
    (tmp_path / "test_marked.py").write_text(TESTS.replace("MODEL", repr(str(model))))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "footprint.pytest_plugin", str(tmp_path / "test_marked.py")],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT)))


def test_limits_and_predictions(tmp_path, mobilenet):
    r = run_pytest(tmp_path, mobilenet)
    out = r.stdout
    assert "2 failed, 2 passed" in out, out + r.stderr
    assert "FAILED" in out and "test_with_leak" in out and "test_predicted_too_big" in out
    assert "above the limit 67,108,864 B" in out
    assert "100,000,096 B" in out.split("largest Python allocations")[1]  # the leaked array
    peak = footprint.analyze(mobilenet, dims={"N": 8}).total_peak
    assert f"predicted to peak at {peak:,} B" in out


def test_sizes():
    from footprint.pytest_plugin import parse_bytes
    assert parse_bytes("64 MiB") == 64 * 1024 * 1024
    assert parse_bytes("1.5 kB") == 1500
    assert parse_bytes(10) == 10
