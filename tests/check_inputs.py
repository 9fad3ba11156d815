"""check_inputs.py - ppqfmt --check-inputs=DIR: real inputs instead of random ones.

Checks:
  - the inputs are really used: with the test-only --check-break (the
    formatted model's largest float weight W becomes W*(-1 or 2)+0.25, odd
    elements doubled), the JSON report's max abs error of Y = X @ W equals
    numpy's max |X @ (W' - W)| over the data sets' X, which differ from the
    random inputs (other shapes, values up to 100);
  - DIR's test_data_set_*/ folders each run (runs = their count), DIR alone
    is one set;
  - files match graph inputs by the TensorProto's name, else by position;
  - bad folders and files (missing, garbage, wrong type or shape, a name no
    input has, an empty folder) exit 2 with one stderr line naming the file;
    --check-inputs= is a usage error (1);
  - sequence and optional graph inputs and outputs: SequenceProto and
    OptionalProto files are read for the values declared so, outputs are
    compared element by element (a longer sequence, an empty optional where
    a present one is expected and the reverse exit 5), a tensor file,
    garbage or strings for a sequence input exit 2, and random inputs for a
    sequence input exit 6 naming it;
  - string tensors: read from the files, compared exactly (--check-expected
    with one changed string exits 5); a string graph input without data
    exits 6 naming it (--check draws no random strings);
  - int4 and float8 graph inputs: random ones (--check), read from files
    (--check-inputs), and an int4 output compared exactly with a hand-computed
    one (a wrong element caught);
  - the ONNX backend cases of Debian's libonnx-testdata with real data run
    on their own test_data_set_0 (a sample, the kernel oracle covers the rest).

Run: .deps/venv/bin/python tests/check_inputs.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import testlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
DEBIAN_NODE = "/usr/share/libonnx-testdata/data/node"
EXIT_USAGE, EXIT_INPUT, EXIT_MISMATCH, EXIT_CHECK = 1, 2, 5, 6
RESULTS = {"passed": 0, "failed": 0, "skipped": 0}


def check(name, fn):
    try:
        why = fn()
    except Exception as e:  # a crash of the test is a failure, named
        why = "%s: %s" % (type(e).__name__, e)
    if why is None:
        RESULTS["passed"] += 1
        print("ok %s" % name)
    elif why.startswith("SKIP"):
        RESULTS["skipped"] += 1
        print("skip %s: %s" % (name, why))
    else:
        RESULTS["failed"] += 1
        print("FAIL %s: %s" % (name, why))


def run(args):
    p = subprocess.run([PPQFMT] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr


def matmul_model(tmp):
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "mm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(w, "W")])
    path = os.path.join(tmp, "mm.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path, w


def broken(w):
    """The test-only --check-break's spoilt weight (api/check.c)."""
    flat = w.reshape(-1)
    k = np.arange(flat.size)
    return (flat * np.where(k % 2, 2.0, -1.0).astype(np.float32) + np.float32(0.25)).reshape(w.shape)


def t_inputs_used(tmp):
    model, w = matmul_model(tmp)
    rng = np.random.default_rng(5)
    xs = [rng.uniform(-100, 100, (n, 4)).astype(np.float32) for n in (2, 5, 7)]
    d = os.path.join(tmp, "sets")
    for i, x in enumerate(xs):
        testlib.write_data_set(os.path.join(d, "test_data_set_%d" % i), [("X", x)])
    code, err = run(["--dry-run", "--report=json", "--check-inputs=" + d, model])
    if code != 0:
        return "unbroken: exit %d: %s" % (code, err)
    c = json.loads(err)["check"]
    if c["runs"] != 3 or c["verdict"] != "equal":
        return "unbroken: check %r, want 3 runs, equal" % c
    code, err = run(["--dry-run", "--report=json", "--check-break", "--check-inputs=" + d, model])
    doc = err.rstrip("\n").rpartition("\n")[0]
    if code != EXIT_MISMATCH:
        return "broken: exit %d: %s" % (code, err)
    got = json.loads(doc)["check"]["outputs"][0]["max_abs_error"]
    dw = broken(w).astype(np.float64) - w.astype(np.float64)
    want = max(np.abs(x.astype(np.float64) @ dw).max() for x in xs)
    if abs(got - want) > 1e-4 * want:
        return "broken: max abs error %r, numpy says %r" % (got, want)
    return None


def t_one_set(tmp):
    model, _ = matmul_model(tmp)
    d = os.path.join(tmp, "one")
    testlib.write_data_set(d, [("X", np.ones((3, 4), np.float32))])
    code, err = run(["--dry-run", "--report=json", "--check-inputs=" + d, model])
    runs = json.loads(err)["check"]["runs"] if code == 0 else None
    return None if runs == 1 else "exit %d, runs %r: %s" % (code, runs, err[-300:])


def add_model(tmp):
    g = helper.make_graph(
        [helper.make_node("Sub", ["A", "B"], ["Y"])], "sub",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    path = os.path.join(tmp, "sub.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def t_by_name_then_position(tmp):
    model = add_model(tmp)
    a, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    named = os.path.join(tmp, "named")
    testlib.write_data_set(named, [("B", b), ("A", a)])  # file order opposite to the inputs'
    code, err = run(["--dry-run", "-q", "--check-inputs=" + named, model])
    if code != 0:
        return "by name: exit %d: %s" % (code, err)
    unnamed = os.path.join(tmp, "unnamed")
    testlib.write_data_set(unnamed, [("", a), ("", b)])
    code, err = run(["--dry-run", "-q", "--check-inputs=" + unnamed, model])
    if code != 0:
        return "by position: exit %d: %s" % (code, err)
    swapped = os.path.join(tmp, "swapped")
    testlib.write_data_set(swapped, [("", b), ("", a)])  # by position B's [3] goes to A [2,3]
    code, err = run(["--dry-run", "-q", "--check-inputs=" + swapped, model])
    if code != EXIT_INPUT or "input_0.pb" not in err or "'A'" not in err:
        return "by position, wrong shapes: exit %d: %s" % (code, err)
    return None


def bad_case(tmp, name, files, want_in_msg):
    """files: {file name: bytes}; the run must exit 2 with one line naming want_in_msg."""
    model = add_model(tmp)
    d = os.path.join(tmp, "bad_" + name)
    if files is not None:
        os.makedirs(d, exist_ok=True)
        for f, data in files.items():
            with open(os.path.join(d, f), "wb") as fh:
                fh.write(data)
    out = os.path.join(tmp, "bad_%s.onnx" % name)
    before = open(model, "rb").read()
    code, err = run(["--check-inputs=" + d, model, "-o", out])
    lines = err.strip().splitlines()
    if code != EXIT_INPUT or len(lines) != 1 or want_in_msg not in lines[0]:
        return "%s: exit %d, stderr %r (want exit 2, one line naming %r)" % (
            name, code, err, want_in_msg)
    if open(model, "rb").read() != before:
        return "%s: the input model changed" % name
    if os.path.exists(out):
        return "%s: exit 2 but the output file was written" % name
    return None


def t_inputs_of_the_input_model(tmp):
    """The data is for the input model: with --outputs keeping only Y1 = A*2, the formatted
    model has no input B, and B's file still belongs; with --input-shape fixing A's size,
    data of another size is refused, naming the file."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["A", "two"], ["Y1"]), helper.make_node("Neg", ["B"], ["Y2"])],
        "two_parts",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("B", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("Y1", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("Y2", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.array(2, np.float32), "two")])
    model = os.path.join(tmp, "two_parts.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    d = os.path.join(tmp, "two_parts")
    testlib.write_data_set(d, [("A", np.ones((2, 3), np.float32)), ("B", np.ones(3, np.float32))])
    code, err = run(["--dry-run", "-q", "--outputs=Y1", "--check-inputs=" + d, model])
    if code != 0:
        return "--outputs=Y1: exit %d: %s" % (code, err)
    code, err = run(["--dry-run", "-q", "--input-shape=A=4,3", "--check-inputs=" + d, model])
    if code != EXIT_INPUT or "input_0.pb" not in err or "'A'" not in err:
        return "--input-shape=A=4,3 with A 2x3: exit %d: %s" % (code, err)
    return None


def t_npy_files(tmp):
    """input_K.npy (numpy.save, versions 1 and 2) instead of input_K.pb: the --check-break
    error is numpy's, so the arrays were read; Fortran order, big-endian and a short file are
    refused, naming the file."""
    model, w = matmul_model(tmp)
    x = np.random.default_rng(9).uniform(-10, 10, (3, 4)).astype(np.float32)
    d = os.path.join(tmp, "npy")
    os.makedirs(d)
    np.save(os.path.join(d, "input_0.npy"), x)
    code, err = run(["--dry-run", "--report=json", "--check-break", "--check-inputs=" + d, model])
    if code != EXIT_MISMATCH:
        return "npy v1: exit %d: %s" % (code, err)
    got = json.loads(err.rstrip("\n").rpartition("\n")[0])["check"]["outputs"][0]["max_abs_error"]
    want = np.abs(x.astype(np.float64) @ (broken(w).astype(np.float64) - w)).max()
    if abs(got - want) > 1e-4 * want:
        return "npy v1: max abs error %r, numpy says %r" % (got, want)
    with open(os.path.join(d, "input_0.npy"), "wb") as f:
        np.lib.format.write_array(f, x, version=(2, 0))
    code, err = run(["--dry-run", "-q", "--check-inputs=" + d, model])
    if code != 0:
        return "npy v2: exit %d: %s" % (code, err)
    for name, arr, cut in (("fortran", np.asfortranarray(x), 0),
                           ("big-endian", x.astype(">f4"), 0), ("short", x, 4)):
        np.save(os.path.join(d, "input_0.npy"), arr)
        if cut:
            data = open(os.path.join(d, "input_0.npy"), "rb").read()[:-cut]
            open(os.path.join(d, "input_0.npy"), "wb").write(data)
        code, err = run(["--dry-run", "-q", "--check-inputs=" + d, model])
        if code != EXIT_INPUT or "input_0.npy" not in err or len(err.strip().splitlines()) != 1:
            return "npy %s: exit %d: %s" % (name, code, err)
    return None


def t_bad_files(tmp):
    a = numpy_helper.from_array(np.ones((2, 3), np.float32), "A").SerializeToString()
    b64 = numpy_helper.from_array(np.ones(3, np.int64), "B").SerializeToString()
    c = numpy_helper.from_array(np.ones(3, np.float32), "C").SerializeToString()
    cases = [
        ("missing", None, "cannot open the folder"),
        ("garbage", {"input_0.pb": b"\xff\xff\xff\xff\x0f garbage"}, "input_0.pb"),
        ("dtype", {"input_0.pb": a, "input_1.pb": b64}, "input_1.pb"),
        ("name", {"input_0.pb": a, "input_1.pb": c}, "'C'"),
        ("empty", {}, "no input_0.pb"),
        ("twice", {"input_0.pb": a, "input_1.pb": a}, "second value"),
        ("raw_short", {"input_0.pb": a[:-4]}, "input_0.pb"),
    ]
    for name, files, want in cases:
        why = bad_case(tmp, name, files, want)
        if why:
            return why
    code, err = run(["--dry-run", "--check-inputs=", add_model(tmp)])
    if code != EXIT_USAGE or len(err.strip().splitlines()) != 1:
        return "--check-inputs=: exit %d, %r" % (code, err)
    return None


def held_model(tmp):
    """s: seq(float[2]), o: optional(float[2]) -> c = s joined, s2 = s, o2 = o, e = empty."""
    f = TensorProto.FLOAT
    seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(f, [2]))
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(f, [2]))
    nodes = [helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0),
             helper.make_node("Identity", ["s"], ["s2"]),
             helper.make_node("Identity", ["o"], ["o2"]),
             helper.make_node("Optional", [], ["e"], type=helper.make_tensor_type_proto(f, [2]))]
    graph = helper.make_graph(
        nodes, "held", [helper.make_value_info("s", seq), helper.make_value_info("o", opt)],
        [helper.make_tensor_value_info("c", f, [4]), helper.make_value_info("s2", seq),
         helper.make_value_info("o2", opt), helper.make_value_info("e", opt)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(tmp, "held.onnx")
    onnx.save(model, path)
    return path


def write_protos(folder, protos):
    os.makedirs(folder, exist_ok=True)
    for name, p in protos:
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(p.SerializeToString())


def t_sequence_and_optional_values(tmp):
    model = held_model(tmp)
    a, b = np.array([1, 2], np.float32), np.array([3, -4], np.float32)
    ins = [("input_0.pb", numpy_helper.from_list([a, b], "s")),
           ("input_1.pb", numpy_helper.from_optional(a, "o"))]
    good = [("output_0.pb", numpy_helper.from_array(np.concatenate([a, b]), "c")),
            ("output_1.pb", numpy_helper.from_list([a, b], "s2")),
            ("output_2.pb", numpy_helper.from_optional(a, "o2")),
            ("output_3.pb", numpy_helper.from_optional(None, "e"))]
    d = os.path.join(tmp, "held_good")
    write_protos(d, ins + good)
    for extra in (["--check-expected"], []):
        code, err = run(["--dry-run", "--check-inputs=" + d] + extra + [model])
        if code != 0:
            return "good data %s: exit %d: %s" % (extra, code, err[-300:])
    wrong = [("a longer sequence", 1, numpy_helper.from_list([a, b, a], "s2"), "lengths differ"),
             ("an empty optional", 2, numpy_helper.from_optional(None, "o2"), "empty"),
             ("a present optional", 3, numpy_helper.from_optional(a, "e"), "empty"),
             ("another element", 1, numpy_helper.from_list([a, a], "s2"), "differs")]
    for what, k, proto, want in wrong:
        d = os.path.join(tmp, "held_wrong_%d_%s" % (k, want.split()[0]))
        outs = list(good)
        outs[k] = ("output_%d.pb" % k, proto)
        write_protos(d, ins + outs)
        code, err = run(["--dry-run", "--check-inputs=" + d, "--check-expected", model])
        if code != EXIT_MISMATCH or want not in err:
            return "expected %s: exit %d, %r" % (what, code, err)
    strings = numpy_helper.from_list([np.array(["x", "y"], dtype=object)], "s")
    for what, proto in (("a tensor file", numpy_helper.from_array(a, "s")),
                        ("garbage", b"\xff\xff\xff"), ("a sequence of strings", strings)):
        d = os.path.join(tmp, "held_bad_%s" % what.replace(" ", "_"))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as fh:
            fh.write(proto if isinstance(proto, bytes) else proto.SerializeToString())
        write_protos(d, [ins[1]])
        code, err = run(["--dry-run", "-q", "--check-inputs=" + d, model])
        if code != EXIT_INPUT or "input_0.pb" not in err or len(err.strip().splitlines()) != 1:
            return "%s for a sequence input: exit %d, %r" % (what, code, err)
    code, err = run(["--dry-run", "-q", "--check", model])
    if code != EXIT_CHECK or "'s'" not in err or "sequence" not in err:
        return "random inputs for a sequence input: exit %d, %r" % (code, err)
    return None


def t_strings(tmp):
    # no node: the graph output is its input (no kernel handles strings yet)
    g = helper.make_graph(
        [], "strings", [helper.make_tensor_value_info("S", TensorProto.STRING, [2, 2])],
        [helper.make_tensor_value_info("S", TensorProto.STRING, [2, 2])])
    model = os.path.join(tmp, "strings.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    s = np.array([["a", ""], ["\u00e9t\u00e9", "x y"]], dtype=object)
    other = s.copy()
    other[1, 1] = "x z"
    for name, want, code_want in (("same", s, 0), ("other", other, EXIT_MISMATCH)):
        d = os.path.join(tmp, "strings_" + name)
        testlib.write_data_set(d, [("S", s)], [("S", want)])
        code, err = run(["--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                         "--check-expected", model])
        if code != code_want or (code and "strings differ" not in err):
            return "%s: exit %d (want %d): %s" % (name, code, code_want, err)
    code, err = run(["--dry-run", "-q", "--check", model])
    if code != EXIT_CHECK or "'S'" not in err or len(err.strip().splitlines()) != 1:
        return "random strings: exit %d (want %d): %r" % (code, EXIT_CHECK, err)
    return None


def lowp_model(tmp):
    """X (int4) -> DequantizeLinear (scale 0.5, zero point -1) -> Y; F (float8e4m3fn) ->
    Cast(float) -> Z; G (float) -> Cast(int4) -> W: low-precision inputs and an output."""
    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["X", "s", "zp"], ["Y"]),
         helper.make_node("Cast", ["F"], ["Z"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["G"], ["W"], to=TensorProto.INT4)], "lowp",
        [helper.make_tensor_value_info("X", TensorProto.INT4, [5]),
         helper.make_tensor_value_info("F", TensorProto.FLOAT8E4M3FN, [3]),
         helper.make_tensor_value_info("G", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [5]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("W", TensorProto.INT4, [4])],
        [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("zp", TensorProto.INT4, [], [-1])])
    path = os.path.join(tmp, "lowp.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def write_numbered(folder, prefix, tensors):
    os.makedirs(folder, exist_ok=True)
    for k, t in enumerate(tensors):
        with open(os.path.join(folder, "%s_%d.pb" % (prefix, k)), "wb") as f:
            f.write(t.SerializeToString())


def t_low_precision_types(tmp):
    """int4 and float8 inputs drawn at random (--check) and read from files
    (--check-inputs), and an int4 output compared exactly: expected values by hand
    ((x + 1) * 0.5; float8 values that are exact; floats truncated into int4)."""
    model = lowp_model(tmp)
    code, err = run(["--dry-run", "--report=json", "--check=2", model])
    if code != 0 or json.loads(err)["check"]["verdict"] != "equal":
        return "random: exit %d: %s" % (code, err[-300:])
    d = os.path.join(tmp, "lowp")
    write_numbered(d, "input", [
        helper.make_tensor("X", TensorProto.INT4, [5], [-8, -1, 0, 3, 7]),
        helper.make_tensor("F", TensorProto.FLOAT8E4M3FN, [3], [0.5, -448, 3 * 2.0 ** -8]),
        numpy_helper.from_array(np.array([-8.7, 7.9, 0.3, -1.2], np.float32), "G")])
    for w, want in (([-8, 7, 0, -1], 0), ([-8, 7, 0, 1], EXIT_MISMATCH)):
        write_numbered(d, "output", [
            numpy_helper.from_array(np.array([-3.5, 0, 0.5, 2, 4], np.float32), "Y"),
            numpy_helper.from_array(np.array([0.5, -448, 3 * 2.0 ** -8], np.float32), "Z"),
            helper.make_tensor("W", TensorProto.INT4, [4], w)])
        code, err = run(["--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                         "--check-expected", model])
        if code != want:
            return "expected W %r: exit %d, want %d: %s" % (w, code, want, err[-300:])
    return None


def t_backend_cases(tmp):
    if not os.path.isdir(DEBIAN_NODE):
        return "SKIP no %s (apt-get install libonnx-testdata)" % DEBIAN_NODE
    ran = 0
    for case in ("test_add", "test_conv_with_strides_padding", "test_matmul_2d", "test_relu",
                 "test_gemm_default_single_elem_vector_bias", "test_transpose_default"):
        d = os.path.join(DEBIAN_NODE, case)
        if not os.path.isdir(d):
            continue
        sets = len([s for s in os.listdir(d) if s.startswith("test_data_set_")])
        code, err = run(["--dry-run", "--report=json", "--check-inputs=" + d,
                         os.path.join(d, "model.onnx")])
        if code != 0:
            return "%s: exit %d: %s" % (case, code, err[-300:])
        runs = json.loads(err)["check"]["runs"]
        if runs != sets:
            return "%s: %d runs, %d data sets" % (case, runs, sets)
        ran += 1
    return None if ran else "SKIP none of the cases is in %s" % DEBIAN_NODE


def main():
    tmp = tempfile.mkdtemp(prefix="ppqfmt-check-inputs-")
    try:
        for name, fn in [(n[2:].replace("_", "-"), f) for n, f in globals().items()
                         if n.startswith("t_") and callable(f)]:
            check(name, lambda fn=fn: fn(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("check_inputs: %d passed, %d failed, %d skipped"
          % (RESULTS["passed"], RESULTS["failed"], RESULTS["skipped"]))
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
