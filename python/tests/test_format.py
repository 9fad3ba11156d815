"""test_format.py - ppqfmt.format against the command line: the same bytes
and exit codes on every testdata model (from a path and from bytes), errors
as the exception classes of their codes, ModelProto in and out, external data
through paths, the report, and check= verdicts carrying the formatted model."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import REPO, SAMPLE, cli

MODELS = sorted(os.path.relpath(os.path.join(d, f), REPO)
                for d, _, fs in os.walk(os.path.join(REPO, "testdata"))
                for f in fs if f.endswith(".onnx"))


def uses_external(path):
    data = open(path, "rb").read()
    return b"external_data" in data or b"location" in data


@pytest.mark.parametrize("model", MODELS)
def test_same_as_cli(ppqfmt, tmp_path, model):
    path = os.path.join(REPO, model)
    rc, want = cli([path], str(tmp_path / "cli.onnx"))
    out = str(tmp_path / "py.onnx")
    try:
        got_path = open(ppqfmt.format(path, output=out), "rb").read()
        code = 0
    except ppqfmt.Error as e:
        code, got_path = e.code, None
    assert (code, got_path) == (rc, want)
    if rc == 0 and not uses_external(path):
        assert ppqfmt.format(open(path, "rb").read()) == want


@pytest.mark.parametrize("kwargs, cls, code, text", [
    ({"options": {"no-such-option": "1"}}, "UsageError", 1, "unknown option"),
    ({"target_opset": 99}, "UsageError", 1, "--target-opset=99"),
    ({"disable": ["fuse-bm"]}, "UsageError", 1, "did you mean 'fuse-bn'"),
])
def test_usage_errors(ppqfmt, tmp_path, kwargs, cls, code, text):
    with pytest.raises(ppqfmt.Error) as e:
        ppqfmt.format(SAMPLE, output=str(tmp_path / "x.onnx"), **kwargs)
    assert type(e.value).__name__ == cls and e.value.code == code and text in str(e.value)
    assert not os.path.exists(tmp_path / "x.onnx")


def test_input_error(ppqfmt):
    with pytest.raises(ppqfmt.InputError) as e:
        ppqfmt.format(b"not a model")
    assert e.value.code == 2 and e.value.message.startswith("model bytes:")


def test_output_error(ppqfmt, tmp_path):
    with pytest.raises(ppqfmt.OutputError) as e:
        ppqfmt.format(SAMPLE, output=str(tmp_path / "no-dir" / "x.onnx"))
    assert e.value.code == 3


def test_path_needs_output(ppqfmt):
    with pytest.raises(ppqfmt.UsageError) as e:
        ppqfmt.format(SAMPLE)
    assert e.value.code == 1


def test_wrong_kind(ppqfmt):
    with pytest.raises(TypeError):
        ppqfmt.format(12)


def test_model_proto(ppqfmt, tmp_path):
    rc, want = cli(["--target-opset=13", SAMPLE], str(tmp_path / "cli.onnx"))
    model = onnx.load(SAMPLE)
    got, report = ppqfmt.format(model, target_opset=13, report=True)
    assert rc == 0 and isinstance(got, onnx.ModelProto)
    assert got == onnx.load_from_string(want)
    onnx.checker.check_model(got, full_check=True)
    assert model == onnx.load(SAMPLE), "the ModelProto given is left as it was"
    assert isinstance(report, dict) and "passes" in report


def matmul_model():
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), w


def test_external_data(ppqfmt, tmp_path):
    model, w = matmul_model()
    (tmp_path / "src").mkdir(), (tmp_path / "out").mkdir()
    src = str(tmp_path / "src" / "m.onnx")
    onnx.save_model(model, src, save_as_external_data=True, location="m.bin", size_threshold=0)
    out = str(tmp_path / "out" / "m.onnx")
    assert ppqfmt.format(src, output=out) == out
    assert (tmp_path / "out" / "m.bin").exists(), "the data file is copied beside the output"
    assert np.array_equal(numpy_helper.to_array(onnx.load(out).graph.initializer[0]), w)
    out2 = str(tmp_path / "out" / "n.onnx")
    ppqfmt.format(src, output=out2, external_data="n.bin")
    assert os.path.getsize(tmp_path / "out" / "n.bin") >= w.nbytes
    assert np.array_equal(numpy_helper.to_array(onnx.load(out2).graph.initializer[0]), w)


def test_external_data_from_bytes_refused(ppqfmt, tmp_path):
    model, _ = matmul_model()
    src = str(tmp_path / "m.onnx")
    onnx.save_model(model, src, save_as_external_data=True, location="m.bin", size_threshold=0)
    with pytest.raises(ppqfmt.InputError):
        ppqfmt.format(open(src, "rb").read())


def test_check_equal(ppqfmt):
    got, report = ppqfmt.format(onnx.load(SAMPLE), check=2, report=True)
    assert isinstance(got, onnx.ModelProto)
    assert report["check"]["runs"] == 2 and report["check"]["verdict"] == "equal"


def test_check_mismatch_keeps_the_output(ppqfmt, tmp_path):
    """check-break (a test-only switch) changes the formatted model before the
    check: the verdict is a MismatchError carrying what was written."""
    out = str(tmp_path / "x.onnx")
    with pytest.raises(ppqfmt.MismatchError) as e:
        ppqfmt.format(SAMPLE, output=out, check=1, options={"check-break": True})
    assert e.value.code == 5 and isinstance(e.value, ppqfmt.CheckError)
    assert e.value.result == out and os.path.exists(out)
    assert e.value.report["check"]["verdict"] != "equal"
    with pytest.raises(ppqfmt.MismatchError) as e:
        ppqfmt.format(onnx.load(SAMPLE), check=True, options={"check-break": True})
    assert isinstance(e.value.result, onnx.ModelProto)


def test_check_without_kernel(ppqfmt):
    """A node the interpreter has no kernel for (Bernoulli draws random numbers, which no
    check can compare): code 6, never "equal"."""
    graph = helper.make_graph(
        [helper.make_node("Bernoulli", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    with pytest.raises(ppqfmt.UncheckedError) as e:
        ppqfmt.format(model.SerializeToString(), check=1)
    assert e.value.code == 6 and "Bernoulli" in e.value.message
    assert isinstance(e.value.result, bytes)
