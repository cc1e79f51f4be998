"""footprint.report: the page `footprint report` writes, and its summary."""

import json
import subprocess

import footprint
from conftest import CLI


def cli_report(target, out, *options):
    r = subprocess.run([str(CLI), "report", str(target), "-o", str(out), *options, "--json"],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def test_a_models_page_is_the_clis(mobilenet, tmp_path):
    got = footprint.report(footprint.load(mobilenet), tmp_path / "py.html", dims={"N": 8},
                           order="memory")
    expected = cli_report(mobilenet, tmp_path / "cli.html", "--dim", "N=8", "--order", "memory")
    for j in (got, expected):
        del j["output"]
    assert got == expected
    assert (tmp_path / "py.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    assert got["total_peak_bytes"] == footprint.analyze(mobilenet, dims={"N": 8},
                                                        order="memory").total_peak


def test_a_trace_page(tmp_path):
    trace = {"name": "t", "tensors": [{"name": "x", "bytes": 64, "kind": "input"},
                                      {"name": "y", "bytes": 128, "kind": "output"}],
             "ops": [{"name": "f", "op": "f", "inputs": ["x"], "outputs": ["y"]}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    got = footprint.report(path, tmp_path / "py.html")
    expected = cli_report(path, tmp_path / "cli.html")
    for j in (got, expected):
        del j["output"]
    assert got == expected and got["kind"] == "trace" and got["total_peak_bytes"] == 192
    assert footprint.report(trace, tmp_path / "d.html")["total_peak_bytes"] == 192
