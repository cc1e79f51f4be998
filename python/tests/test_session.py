"""footprint.Session: outputs equal `footprint run -o` bit for bit; stats as run --json."""

import subprocess

import numpy as np
import pytest

import footprint
from conftest import CLI, cli_json, other_shared_models, require_shared, shared_models


def cli_outputs(model, input_pb, tmp_path):
    out = tmp_path / "out"
    subprocess.run([str(CLI), "run", "--repeat", "1", "--warmup", "0", "--input",
                    f"{input_name(model)}={input_pb}", "-o", str(out), str(model)],
                   check=True, capture_output=True)
    return [footprint.read_tensor(p) for p in sorted(out.glob("output_*.pb"))]


def input_name(model):
    return footprint.load(model).info()["graph_inputs"][0]["name"]


def assert_bitwise_equal(got, expected):
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_mobilenet_outputs_are_the_clis(mobilenet, tmp_path):
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    assert x.shape == (1, 3, 96, 96) and x.dtype == np.float32
    session = footprint.Session(mobilenet)
    out = session.run({"x": x})
    assert list(out) == ["logits"]
    [expected] = cli_outputs(mobilenet, mobilenet.parent / "input_0.pb", tmp_path)
    assert_bitwise_equal(out["logits"], expected)


def test_profile_times_every_step_of_the_last_run(mobilenet):
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    plain = footprint.Session(mobilenet)
    plain.run({"x": x})
    assert "profile" not in plain.stats
    session = footprint.Session(mobilenet, profile=True)
    session.run({"x": x})
    stats = session.stats
    steps = stats["profile"]
    assert len(steps) == stats["steps"]
    assert all(s["name"] and s["op"] and s["ms"] >= 0 for s in steps)
    assert "footprint::NhwcConv" in {s["op"] for s in steps}
    # The steps are the run: their sum is within the run's wall time.
    assert sum(s["ms"] for s in steps) <= stats["measured"]["latency_ms"]


def test_fuse_false_runs_every_activation_apart_as_no_fuse_does(mobilenet):
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    fused = footprint.Session(mobilenet)
    apart = footprint.Session(mobilenet, fuse=False)
    y = fused.run({"x": x})["logits"]
    z = apart.run({"x": x})["logits"]
    assert len(fused.stats["fused"]) == 35 and apart.stats["fused"] == []  # its 35 ReLU6
    assert apart.stats["steps"] == fused.stats["steps"] - fused.stats["channels_last"]["layout_changes"] + 35
    np.testing.assert_allclose(y, z, rtol=1e-5, atol=1e-5)
    expected = cli_json("run", mobilenet, "--repeat", "1", "--no-fuse")
    assert apart.stats["predicted"]["arena_bytes"] == expected["predicted"]["arena_bytes"]
    assert apart.stats["measured"]["arena_bytes"] == apart.stats["predicted"]["arena_bytes"]


@pytest.mark.parametrize("name", [p.name for p in shared_models()] or ["none"])
def test_shared_models_match_the_cli_bit_for_bit(name, tmp_path):
    models = shared_models()
    require_shared(models)
    folder = next(p for p in models if p.name == name)
    model = footprint.load(folder / "model.onnx")
    x = footprint.read_tensor(folder / "input_0.pb")
    out = footprint.Session(model).run({input_name(folder / "model.onnx"): x})
    expected = cli_outputs(folder / "model.onnx", folder / "input_0.pb", tmp_path)
    assert len(out) == len(expected)
    for got, exp in zip(out.values(), expected):
        assert_bitwise_equal(got, exp)


@pytest.mark.parametrize("folder", other_shared_models() or [None],
                         ids=lambda p: f"{p.parent.name}/{p.name}" if p else "none")
def test_random_and_real_models_match_the_cli_with_every_input(folder, tmp_path):
    require_shared([folder] if folder else [])
    model = footprint.load(folder / "model.onnx")
    names = [i["name"] for i in model.info()["graph_inputs"]]
    files = [folder / f"input_{i}.pb" for i in range(len(names))]
    out = footprint.Session(model).run({n: footprint.read_tensor(f) for n, f in zip(names, files)})
    subprocess.run([str(CLI), "run", "--repeat", "1", "--warmup", "0", "--data-dir", str(folder),
                    "-o", str(tmp_path / "out"), str(folder / "model.onnx")], check=True,
                   capture_output=True)
    expected = [footprint.read_tensor(tmp_path / "out" / f"output_{i}.pb") for i in range(len(out))]
    assert len(out) == len(list((tmp_path / "out").glob("output_*.pb")))
    for got, exp in zip(out.values(), expected):
        assert_bitwise_equal(got, exp)


def test_stats_match_run_json(mobilenet):
    session = footprint.Session(mobilenet, dims={"N": 8})
    x = np.random.default_rng(1).standard_normal((8, 3, 96, 96), dtype=np.float32)
    session.run({"x": x})
    s = session.stats
    expected = cli_json("run", mobilenet, "--repeat", "1", "--dim", "N=8")
    for key in ("arena_bytes", "lower_bound_bytes", "outputs_bytes", "weights_bytes",
                "total_peak_bytes", "planner", "run_heap_bytes"):
        assert s["predicted"][key] == expected["predicted"][key], key
    assert s["measured"]["arena_bytes"] == s["predicted"]["arena_bytes"]
    # The buffers preparing declared (weight copies, constants, packed weights), as `run` and
    # `analyze` give them.
    for key in ("prepare_buffers_peak_bytes", "prepare_buffers_kept_bytes",
                "packed_weights_bytes"):
        assert s["measured"][key] == expected["measured"][key], key
    assert s["measured"]["prepare_buffers_peak_bytes"] > 0
    analyzed = cli_json("analyze", mobilenet, "--dim", "N=8")
    assert analyzed["prepare"]["peak_bytes"] == s["measured"]["prepare_buffers_peak_bytes"]
    assert s["dims"] == {"N": 8}
    # Heap figures need the counting allocator, which a Python process does not have.
    assert s["measured"]["peak_heap_bytes"] is None
    assert s["measured"]["peak_rss_bytes"] >= s["measured"]["rss_bytes"] > 0


def test_outputs_own_their_storage(mobilenet):
    session = footprint.Session(mobilenet)
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    first = session.run({"x": x})["logits"]
    kept = first.copy()
    second = session.run({"x": x + 1})["logits"]
    assert not np.shares_memory(first, second)
    assert first.tobytes() == kept.tobytes()  # a later run does not write into it
    del session
    assert first.tobytes() == kept.tobytes()  # nor does the session's end


def test_bad_inputs_are_errors_not_crashes(mobilenet):
    session = footprint.Session(mobilenet)
    with pytest.raises(footprint.ModelError) as e:
        session.run({"x": np.zeros((1, 3, 95, 96), dtype=np.float32)})
    assert e.value.path == str(mobilenet) and "input 'x'" in str(e.value)
    with pytest.raises(footprint.ModelError):
        session.run({"nope": np.zeros((1, 3, 96, 96), dtype=np.float32)})
    with pytest.raises(footprint.UsageError):
        session.run({"x": np.zeros((1, 3, 96, 96), dtype=np.complex64)})
    # The session still works afterwards.
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    assert session.run({"x": x})["logits"].shape == (1, 1000)


def test_tensor_files_round_trip(tmp_path):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    footprint.write_tensor(tmp_path / "a.pb", a, name="a")
    b = footprint.read_tensor(tmp_path / "a.pb")
    assert_bitwise_equal(b, a)


def test_contiguous_inputs_are_read_in_place(mobilenet):
    session = footprint.Session(mobilenet)
    x = footprint.read_tensor(mobilenet.parent / "input_0.pb")
    x.flags.writeable = False  # the session never writes into its inputs
    kept = x.copy()
    in_place = session.run({"x": x})["logits"]
    assert session.stats["measured"]["input_copied_bytes"] == 0
    assert x.tobytes() == kept.tobytes()
    # Not C-contiguous, or not in native byte order: copied, and the same result.
    for other in (np.asfortranarray(x), x.astype(">f4")):
        out = session.run({"x": other})["logits"]
        assert session.stats["measured"]["input_copied_bytes"] == x.nbytes
        assert_bitwise_equal(out, in_place)


def test_float16_activations_are_float32_carriers_unless_kept():
    """A float16 graph (float in, float out) between two convolutions: by default the
    activation between them is a float32 carrier, with the same output bits as --keep-16bit's
    graph, and analyze predicts the arena each way as the session obtains it."""
    rng = np.random.default_rng(3)
    b = footprint.GraphBuilder()
    x = b.input("x", "float32", [1, 4, 8, 8])
    h, = b.op("Cast", [x], {"to": 10})
    w1 = b.const((rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float16))
    w2 = b.const((rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float16))
    c1, = b.op("Conv", [h, w1], {"pads": [1, 1, 1, 1]})
    c2, = b.op("Conv", [c1, w2])
    y, = b.op("Cast", [c2], {"to": 1})
    b.output(y, "y")
    model = b.to_model()
    feed = {"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)}
    outputs, stats = {}, {}
    for keep in (False, True):
        s = footprint.Session(model, keep_16bit=keep)
        outputs[keep] = s.run(feed)["y"]
        stats[keep] = s.stats
        predicted = footprint.analyze(model, keep_16bit=keep).to_json()
        assert predicted["float32_carriers"] == stats[keep]["float32_carriers"]
        assert stats[keep]["measured"]["arena_bytes"] == stats[keep]["predicted"]["arena_bytes"]
    assert stats[False]["float32_carriers"]["values"] > 0
    assert stats[False]["float32_carriers"]["rounds_to"] == "float16"
    assert stats[True]["float32_carriers"]["values"] == 0
    assert outputs[False].tobytes() == outputs[True].tobytes()
    assert np.unique(outputs[False]).size > outputs[False].size // 2
