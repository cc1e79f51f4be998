"""footprint.load: zero-copy from a path or a bytes-like object; Model.info(); errors."""

import gc
import weakref

import numpy as np
import pytest

import footprint
from conftest import cli_json


def info_without_load(path):
    j = cli_json("info", path)
    del j["load"]  # the CLI's own load timing and heap figures
    return j


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "numpy"])
def test_bytes_like_sources_give_the_cli_info(tiny_cnn, kind):
    data = tiny_cnn.read_bytes()
    source = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
              "numpy": np.frombuffer(data, dtype=np.uint8)}[kind]
    model = footprint.load(source, name=str(tiny_cnn))
    assert not model.mapped
    assert model.nbytes == len(data)
    info, expected = model.info(), info_without_load(tiny_cnn)
    # The same model, its weights in the caller's bytes where the CLI maps the file.
    assert info.pop("weights") == {"borrowed_bytes": expected["weight_bytes"], "mapped_bytes": 0,
                                   "heap_bytes": 0}
    assert expected.pop("weights")["mapped_bytes"] == expected["weight_bytes"] > 0
    assert info == expected


def test_a_path_is_mapped_and_info_matches_the_cli(mobilenet):
    model = footprint.load(mobilenet)
    assert model.mapped
    info = model.info()
    assert info == info_without_load(mobilenet)
    assert info["weights"]["mapped_bytes"] > 6 * 1024 * 1024
    assert info["weights"]["heap_bytes"] == 0


def test_borrowed_weights_are_the_callers_bytes(tiny_cnn):
    model = footprint.load(tiny_cnn.read_bytes())
    w = model.info()["weights"]
    assert w["borrowed_bytes"] == model.info()["weight_bytes"] > 0
    assert w["mapped_bytes"] == 0 and w["heap_bytes"] == 0


def test_the_model_keeps_the_borrowed_object_alive(tiny_cnn):
    array = np.frombuffer(tiny_cnn.read_bytes(), dtype=np.uint8).copy()
    alive = weakref.ref(array)
    model = footprint.load(array)
    del array
    gc.collect()
    assert alive() is not None  # the model holds it
    assert model.info()["nodes"] == 6
    del model
    gc.collect()
    assert alive() is None  # and lets it go with itself


def test_a_borrowed_bytearray_cannot_be_resized(tiny_cnn):
    data = bytearray(tiny_cnn.read_bytes())
    model = footprint.load(data)
    with pytest.raises(BufferError):
        data.extend(b"x")
    del model
    data.extend(b"x")  # released with the model


def test_truncated_bytes_name_the_offset(tiny_cnn):
    data = tiny_cnn.read_bytes()[:1000]
    with pytest.raises(footprint.ModelError) as e:
        footprint.load(data, name="cut.onnx")
    assert isinstance(e.value, ValueError)
    assert e.value.path == "cut.onnx"
    assert e.value.offset is not None and 0 <= e.value.offset <= 1000
    assert str(e.value).startswith("cut.onnx: offset ")


def test_a_missing_file_is_a_model_error(tmp_path):
    with pytest.raises(footprint.ModelError) as e:
        footprint.load(tmp_path / "none.onnx")
    assert "none.onnx" in str(e.value)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError):
        footprint.load(12)
    with pytest.raises(TypeError):
        footprint.load(np.zeros(4, dtype=np.float32))
    with pytest.raises(TypeError):
        footprint.load(np.zeros(8, dtype=np.uint8)[::2])  # not contiguous


def test_errors_parse_path_offset_and_node():
    e = footprint.ModelError("m.onnx: offset 17: graph.node[0]: truncated")
    assert (e.path, e.offset, e.node) == ("m.onnx", 17, None)
    e = footprint.ModelError("node 'Conv_3' (Conv): input 1 missing")
    assert (e.path, e.offset, e.node) == (None, None, "Conv_3")
    assert footprint.ModelError("node #4 (Add): x").node == "#4"
