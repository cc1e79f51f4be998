"""docs/PYTHON.md's Python examples run, in order, in one namespace (as a reader would paste
them), with the build's example folder for build/release/examples."""

import contextlib
import io
import re

import pytest

from conftest import EXAMPLES, ROOT

DOC = ROOT / "docs" / "PYTHON.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_examples_run(mobilenet):
    blocks = python_blocks()
    assert len(blocks) >= 5
    namespace = {}
    for i, block in enumerate(blocks):
        code = block.replace("build/release/examples", str(EXAMPLES))
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                exec(compile(code, f"{DOC}:block{i}", "exec"), namespace)
            except Exception as e:  # noqa: BLE001: the block's number helps find it
                pytest.fail(f"docs/PYTHON.md python block {i} failed: {e!r}")
