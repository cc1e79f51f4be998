"""Where the tests find the build's CLI, the example models and the shared models.

ctest sets FOOTPRINT_CLI, FOOTPRINT_EXAMPLES and FOOTPRINT_SHARED; run by hand from the
repository root, the release build's paths are the defaults:

    PYTHONPATH=build/release/python python3 -m pytest -q python/tests
"""

import json
import os
import pathlib
import subprocess

import pytest

# The markers docs/PYTHON.md's examples use (footprint_limit, footprint_predict).
pytest_plugins = ["footprint.pytest_plugin"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "release"


def _path(var, default):
    return pathlib.Path(os.environ.get(var, default))


CLI = _path("FOOTPRINT_CLI", BUILD / "bin" / "footprint")
EXAMPLES = _path("FOOTPRINT_EXAMPLES", BUILD / "examples")
SHARED = _path("FOOTPRINT_SHARED", ROOT.parent / "shared")


def cli_json(command, target, *options):
    """The footprint binary's --json output of `footprint COMMAND TARGET OPTIONS... --json`
    (the target first: --dim takes every value that follows it)."""
    out = subprocess.run([str(CLI), command, str(target), *map(str, options), "--json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="session")
def tiny_cnn():
    path = EXAMPLES / "tiny_cnn.onnx"
    if not path.exists():
        pytest.skip(f"{path} is missing: build the example_model target")
    return path


@pytest.fixture(scope="session")
def mobilenet():
    path = EXAMPLES / "mobilenet_v2" / "model.onnx"
    if not path.exists():
        pytest.skip(f"{path} is missing: build the example_model target")
    return path


def shared_models():
    """The light shared models (model.onnx with input_0.pb), or none when the folder is absent."""
    light = SHARED / "models" / "light"
    if not light.is_dir():
        return []
    return sorted(p for p in light.iterdir() if (p / "model.onnx").exists())


def other_shared_models():
    """The random-weight and real shared models (each with input_*.pb for every graph input)."""
    return sorted(p for kind in ("random", "real") if (SHARED / "models" / kind).is_dir()
                  for p in (SHARED / "models" / kind).iterdir() if (p / "model.onnx").exists())


def require_shared(models):
    if not models:
        pytest.skip(f"no shared models under {SHARED / 'models' / 'light'} "
                    "(set FOOTPRINT_SHARED to the shared folder)")
