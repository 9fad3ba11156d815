#!/usr/bin/python3
"""The infer-shapes pass and --input-shape, end to end through build/ppqfmt (or $PPQFMT).

Models are built here with onnx.helper; every expected shape is worked out from the operators'
formulas in this file (a strided Conv's output size, a Concat's sum), or measured by onnxruntime
on inputs of two different sizes (the written dims, with symbols bound from the actual shapes,
must give the actual shapes). Checks:
  written     every node output of the main graph and of an If branch gets value_info; graph
              inputs and outputs are untouched (their ValueInfoProtos byte for byte);
  shapes      the written dims hold on two input sizes under onnxruntime;
  expression  a dim computed from a symbol is written as its expression (2*seq) and read back
              as the same: formatting the output again gives the same bytes;
  conflict    a value_info that contradicts the graph is rewritten and named in a warning, its
              doc_string kept;
  unknown-op  an op with no rule leaves its outputs (and what they feed) untyped, and is named;
  input-shape --input-shape fixes dims (Conv output 1x8x112x112 for 224x224), binds a symbol in
              every graph input, keeps the outputs' declarations; each error exits 1 with one
              line naming the input and writes no file.
Last line: `test_infer_shapes: N passed, M failed`.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import testlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.path.abspath(os.environ.get("PPQFMT", os.path.join(ROOT, "build", "ppqfmt")))
TMP = tempfile.mkdtemp(prefix="test_infer_shapes_")


def run(args):
    p = subprocess.run([PPQFMT] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def save(model, name):
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(TMP, name)
    onnx.save(model, path)
    return path


def fmt(path, *extra):
    out = path.replace(".onnx", ".fmt.onnx")
    rc, err = run([path, "-o", out] + list(extra))
    if rc:
        raise AssertionError("ppqfmt exit %d: %s" % (rc, err))
    return out, err


def declared(model):
    """{name: [dim_value or dim_param or None]} over every graph's inputs, value_info, outputs."""
    out = {}
    for chain in testlib.scoped_graphs(model):
        g = chain[-1][1]
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            tt = vi.type.tensor_type
            out[vi.name] = (tt.elem_type, [d.dim_value if d.HasField("dim_value") else
                                           d.dim_param or None for d in tt.shape.dim])
    return out


def dynamic_model():
    """x[batch,3,H,W] -> Conv(3x3, stride 2, pad 1) -> Relu -> GlobalAveragePool -> Flatten
    -> Mul(mask[batch,1]) -> y[batch,8]; plus Concat(x, x) on axis 2 -> z[batch,3,2*H,W]."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["r"], "relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], "gap"),
             helper.make_node("Flatten", ["g"], ["f"], "flatten"),
             helper.make_node("Mul", ["f", "mask"], ["y"], "mul"),
             helper.make_node("Concat", ["x", "x"], ["xx"], "concat", axis=2),
             helper.make_node("Sigmoid", ["xx"], ["z"], "sig")]
    g = helper.make_graph(nodes, "dyn", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "H", "W"]),
        helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [None] * 4)], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def if_model():
    """An If whose branches compute from an outer value: body values get value_info there."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t1"], "t_relu"),
                                helper.make_node("Neg", ["t1"], ["t_out"], "t_neg")], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [None, None])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e_out"], "e_abs")], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [None, None])])
    g = helper.make_graph([helper.make_node("If", ["cond"], ["y"], "if", then_branch=then_g,
                                            else_branch=else_g)], "ifm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n"]),
                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_written():
    src = save(dynamic_model(), "dyn.onnx")
    out, _ = fmt(src)
    a, b = onnx.load(src).graph, onnx.load(out).graph
    missing = [o for n in b.node for o in n.output
               if o not in {v.name for v in b.value_info} | {v.name for v in b.output}]
    if missing:
        return "no value_info for %s" % missing
    for kind in ("input", "output"):
        if [v.SerializeToString() for v in getattr(a, kind)] != \
                [v.SerializeToString() for v in getattr(b, kind)]:
            return "graph %ss changed" % kind
    d = declared(onnx.load(out))
    if d["c"][1][:2] != ["batch", 8] or d["g"][1] != ["batch", 8, 1, 1] or d["f"][1] != ["batch", 8]:
        return "dims of c/g/f: %s %s %s" % (d["c"], d["g"], d["f"])
    return None


def check_if_body():
    out, _ = fmt(save(if_model(), "if.onnx"))
    d = declared(onnx.load(out))
    want = {"t1": [2, "n"], "e_out": [None, None]}  # a branch output keeps its declaration
    got = {k: d.get(k, (0, None))[1] for k in want}
    return None if got == want else "body value_info %s, expected %s" % (got, want)


def value(expr, env):
    return eval(expr.replace("/", "//"), {"__builtins__": {}}, dict(env))  # noqa: S307


def bind(dims, shape, env):
    """Checks dims (ints, symbols, expressions) against an actual shape, binding symbols: a
    symbol alone takes the actual size; an expression with one unbound symbol (unk_conv_0+1)
    binds it to the size that makes the expression true, if any."""
    for d, s in zip(dims, shape):
        if d is None:  # declared unknown (a graph output's own declaration)
            continue
        if isinstance(d, int):
            if d != s:
                return "dim %d, actual %d" % (d, s)
            continue
        free = [n for n in re.findall(r"[A-Za-z_]\w*", d) if n not in env]
        if len(free) == 1:
            fits = [v for v in range(4 * s + 8) if value(d, dict(env, **{free[0]: v})) == s]
            if not fits:
                return "%s cannot be %d" % (d, s)
            env[free[0]] = fits[0]
        if value(d, env) != s:
            return "%s = %d, actual %d" % (d, value(d, env), s)
    return None


def check_shapes():
    rng = np.random.default_rng(1)
    return shapes_hold(fmt(os.path.join(TMP, "dyn.onnx"))[0],
                       [{"x": rng.standard_normal((b, 3, h, w)).astype(np.float32),
                         "mask": rng.standard_normal((b, 1)).astype(np.float32)}
                        for b, h, w in ((1, 9, 16), (3, 20, 7))])


def sampling_model():
    """Multinomial(x [B, 5], sample_size 3, int64) -> m -> Neg; MaxRoiPool(feat [1, C, H, W],
    rois [R, 5], pooled_shape [2, 3]) -> p -> Relu."""
    nodes = [helper.make_node("Multinomial", ["x"], ["m"], "multinomial", sample_size=3,
                              dtype=TensorProto.INT64),
             helper.make_node("MaxRoiPool", ["feat", "rois"], ["p"], "roipool",
                              pooled_shape=[2, 3]),
             helper.make_node("Neg", ["m"], ["m_out"], "neg"),   # m, p: values, not outputs,
             helper.make_node("Relu", ["p"], ["p_out"], "relu")]  # whose value_info is written
    g = helper.make_graph(nodes, "sampling",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 5]),
                           helper.make_tensor_value_info("feat", TensorProto.FLOAT,
                                                         [1, "C", "H", "W"]),
                           helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["R", 5])],
                          [helper.make_tensor_value_info("m_out", TensorProto.INT64, [None, None]),
                           helper.make_tensor_value_info("p_out", TensorProto.FLOAT, [None] * 4)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_sampling():
    """Multinomial and MaxRoiPool: the written dims hold under onnxruntime on two sizes."""
    out, _ = fmt(save(sampling_model(), "sampling.onnx"))
    d = declared(onnx.load(out))
    if d["m"] != (TensorProto.INT64, ["B", 3]) or d["p"][1] != ["R", "C", 2, 3]:
        return "declared m %s, p %s" % (d["m"], d["p"])
    rng = np.random.default_rng(2)
    feeds = []
    for b, c, h, w, r in ((2, 3, 8, 9, 4), (5, 1, 12, 6, 1)):
        rois = np.concatenate([np.zeros((r, 1)), rng.uniform(0, min(h, w) - 1, (r, 4))], 1)
        rois[:, 3:] = np.maximum(rois[:, 3:], rois[:, 1:3])   # x2 >= x1, y2 >= y1
        feeds.append({"x": rng.standard_normal((b, 5)).astype(np.float32),
                      "feat": rng.standard_normal((1, c, h, w)).astype(np.float32),
                      "rois": rois.astype(np.float32)})
    return shapes_hold(out, feeds)


def ceil_pool_model():
    """MaxPool with ceil_mode over a [1, 1, n] value, then Relu: a, k 1 s 2 on n = 4 (the
    window ceil adds would start past the input: onnxruntime drops it, onnx 1.12's
    inference keeps it); b, k 2 s 2 on n = 5 (no window dropped); c, k 3 s 2 on a symbolic L
    (none can be dropped: pad_end + s - 1 < k); d, k 1 s 2 on L (one may be)."""
    pools = {"a": (1, "x4"), "b": (2, "x5"), "c": (3, "xl"), "d": (1, "xl")}
    nodes = []
    for name, (k, src) in pools.items():
        nodes += [helper.make_node("MaxPool", [src], ["p" + name], "pool_" + name,
                                   kernel_shape=[k], strides=[2], ceil_mode=1),
                  helper.make_node("Relu", ["p" + name], ["y" + name], "relu_" + name)]
    f = TensorProto.FLOAT
    g = helper.make_graph(nodes, "ceil",
                          [helper.make_tensor_value_info("x4", f, [1, 1, 4]),
                           helper.make_tensor_value_info("x5", f, [1, 1, 5]),
                           helper.make_tensor_value_info("xl", f, [1, 1, "L"])],
                          [helper.make_tensor_value_info("y" + n, f, [None] * 3) for n in pools])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_ceil_pool():
    """ceil_mode: a dim that onnxruntime and onnx 1.12 agree on is written (b: 3); where
    they differ, or may for some L, it is a symbol (a, d; c too, ceil division of a symbol
    being no expression); the output passes the full checker and the dims hold under
    onnxruntime for L = 7 and 8 (a written 3 fails there: onnxruntime computes 2)."""
    out, _ = fmt(save(ceil_pool_model(), "ceil.onnx"))
    onnx.checker.check_model(onnx.load(out), full_check=True)
    d = {k: declared(onnx.load(out))["p" + k][1][2] for k in "abcd"}
    if d["b"] != 3 or not all(isinstance(d[k], str) for k in "acd"):
        return "dims %s" % d
    rng = np.random.default_rng(3)
    return shapes_hold(out, [{"x4": rng.standard_normal((1, 1, 4)).astype(np.float32),
                              "x5": rng.standard_normal((1, 1, 5)).astype(np.float32),
                              "xl": rng.standard_normal((1, 1, n)).astype(np.float32)}
                             for n in (7, 8)])


def convt_same_model():
    """ConvTranspose with auto_pad SAME_UPPER, stride 2, over x [1, 1, 9], then Relu: a,
    kernel 1 (padding cannot take the kernel's shortfall away: 17, not 18); b, kernel 3 (18);
    c, kernel 2 with output_padding 1 (onnxruntime 18, onnx 1.12's inference 19)."""
    convs = {"a": (1, 0), "b": (3, 0), "c": (2, 1)}
    nodes, inits = [], []
    for name, (k, opad) in convs.items():
        attrs = dict(strides=[2], auto_pad="SAME_UPPER")
        if opad:
            attrs["output_padding"] = [opad]
        nodes += [helper.make_node("ConvTranspose", ["x", "w" + name], ["c" + name], **attrs),
                  helper.make_node("Relu", ["c" + name], ["y" + name])]
        inits.append(numpy_helper.from_array(np.full([1, 1, k], 0.5, np.float32), "w" + name))
    f = TensorProto.FLOAT
    g = helper.make_graph(nodes, "convt", [helper.make_tensor_value_info("x", f, [1, 1, 9])],
                          [helper.make_tensor_value_info("y" + n, f, [None] * 3) for n in convs],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_convt_same():
    """ConvTranspose SAME: the written dims are onnxruntime's (a: 17, b: 18), a symbol where
    onnx 1.12's inference differs from it (c); the full checker passes; the dims hold."""
    out, _ = fmt(save(convt_same_model(), "convt.onnx"))
    onnx.checker.check_model(onnx.load(out), full_check=True)
    d = {k: declared(onnx.load(out))["c" + k][1][2] for k in "abc"}
    if d["a"] != 17 or d["b"] != 18 or not isinstance(d["c"], str):
        return "dims %s" % d
    x = np.random.default_rng(4).standard_normal((1, 1, 9)).astype(np.float32)
    return shapes_hold(out, [{"x": x}])


def reshape_rest_model():
    """x [L, B, 2, 4] -> Pad 1 on axis 0 -> [L+1, B, 2, 4] -> Reshape [0, 0, -1] -> r -> Relu."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], "pad"),
             helper.make_node("Reshape", ["p", "target"], ["r"], "reshape"),
             helper.make_node("Relu", ["r"], ["y"], "relu")]
    f = TensorProto.FLOAT
    g = helper.make_graph(nodes, "rest", [helper.make_tensor_value_info("x", f, ["L", "B", 2, 4])],
                          [helper.make_tensor_value_info("y", f, [None] * 3)],
                          [i64("pads", [1, 0, 0, 0, 0, 0, 0, 0]), i64("target", [0, 0, -1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_reshape_rest():
    """Reshape's -1 where the other dims are copies of a sum (L+1) and a symbol: the shared
    dims cancel, so it is 8, where the products' quotient is no monomial division."""
    out, _ = fmt(save(reshape_rest_model(), "rest.onnx"))
    d = declared(onnx.load(out))["r"][1]
    if d != ["L+1", "B", 8]:
        return "Reshape output %s, expected [L+1, B, 8]" % d
    rng = np.random.default_rng(5)
    return shapes_hold(out, [{"x": rng.standard_normal((n, b, 2, 4)).astype(np.float32)}
                             for n, b in ((3, 2), (5, 1))])


def shapes_hold(out, feeds):
    """None when the dims out declares for every node output of its main graph hold, symbols
    bound, under onnxruntime on each of feeds (every node output made a graph output)."""
    m = onnx.load(out)
    names = [o for n in m.graph.node for o in n.output]
    m.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names
                          if n not in {o.name for o in m.graph.output})
    probe = out.replace(".onnx", ".all.onnx")
    onnx.save(m, probe)
    d = declared(onnx.load(out))
    oc = testlib.ortcheck()
    for res in oc.run_models([{"model": probe, "inputs": f} for f in feeds]):
        if isinstance(res, str):
            return "onnxruntime: " + res
        env = {}
        for n in names:
            if len(d[n][1]) != res[n].ndim:
                return "%s: rank %d, actual %d" % (n, len(d[n][1]), res[n].ndim)
            err = bind(d[n][1], res[n].shape, env)
            if err:
                return "%s: %s" % (n, err)
    return None


def check_expression():
    out, _ = fmt(os.path.join(TMP, "dyn.onnx"))
    xx = declared(onnx.load(out))["xx"][1]
    if xx != ["batch", 3, "2*H", "W"]:
        return "Concat output %s, expected [batch,3,2*H,W]" % xx
    again = out.replace(".onnx", ".again.onnx")
    rc, err = run([out, "-o", again])
    with open(out, "rb") as f1, open(again, "rb") as f2:
        return None if rc == 0 and f1.read() == f2.read() else "second run changed the model"


def check_conflict():
    m = dynamic_model()
    vi = helper.make_tensor_value_info("g", TensorProto.FLOAT, [5, 5])
    vi.doc_string = "kept"
    m.graph.value_info.append(vi)
    path = os.path.join(TMP, "conflict.onnx")
    onnx.save(m, path)  # stale value_info: onnx's checker refuses this input
    out, err = fmt(path)
    onnx.checker.check_model(onnx.load(out), full_check=True)
    g = [v for v in onnx.load(out).graph.value_info if v.name == "g"]
    if "g" not in err or "declared shape" not in err:
        return "no warning naming g: %r" % err
    if len(g) != 1 or g[0].doc_string != "kept":
        return "g's entry: %s" % g
    dims = [x.dim_value or x.dim_param for x in g[0].type.tensor_type.shape.dim]
    return None if dims == ["batch", 8, 1, 1] else "g rewritten as %s" % dims


def check_unknown_op():
    g = helper.make_graph([helper.make_node("Mystery", ["x"], ["u"], "m", domain="my.ops"),
                           helper.make_node("Relu", ["u"], ["r"], "relu"),
                           helper.make_node("Relu", ["x"], ["k"], "relu2"),
                           helper.make_node("Add", ["r", "k"], ["y"], "add")], "u",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.ops", 1)])
    path = os.path.join(TMP, "unknown.onnx")
    onnx.save(m, path)
    out, err = fmt(path)
    d = declared(onnx.load(out))
    if "my.ops:Mystery" not in err:
        return "no warning naming my.ops:Mystery: %r" % err
    if "u" in d or "r" in d or d.get("k", (0, None))[1] != [2, 3]:
        return "declared: %s" % d
    return None


def input_shape(args, name="dyn.onnx"):
    out = os.path.join(TMP, "is_%d.onnx" % abs(hash(tuple(args))))
    rc, err = run([os.path.join(TMP, name), "-o", out] + args)
    return rc, err, out


def check_input_shape_fixed():
    rc, err, out = input_shape(["--input-shape", "x=1,3,224,224"])
    if rc:
        return "exit %d: %s" % (rc, err)
    d = declared(onnx.load(out))
    size = (224 + 2 * 1 - 3) // 2 + 1  # Conv output: floor((H + pads - kernel) / stride) + 1
    # the graph output y, declared [batch, 8], says what inference proves once the input is
    # fixed (it kept "batch" before: a GPT export's output kept its MatMul573_dim_0)
    want = {"x": [1, 3, 224, 224], "mask": [1, 1], "c": [1, 8, size, size], "xx": [1, 3, 448, 224],
            "y": [1, 8]}
    got = {k: d[k][1] for k in want}
    return None if got == want else "declared %s, expected %s" % (got, want)


def check_input_shape_partial():
    rc, err, out = input_shape(["--input-shape", "x=batch:2,3,?,-1"])
    if rc:
        return "exit %d: %s" % (rc, err)
    d = declared(onnx.load(out))
    return None if d["x"][1] == [2, 3, "H", "W"] and d["mask"][1] == [2, 1] and \
        d["y"][1] == [2, 8] else str(d)


def check_input_shape_passes_none():
    """With every pass off the input's declaration is still rewritten (no byte copy)."""
    rc, err, out = input_shape(["--passes=none", "--input-shape", "x=1,3,8,8"])
    if rc:
        return "exit %d: %s" % (rc, err)
    d = declared(onnx.load(out))
    return None if d["x"][1] == [1, 3, 8, 8] and "c" not in d else str(d)


def check_input_shape_errors():
    cases = [(["--input-shape", "x=1,3,224"], "'x'.*rank 4"),
             (["--input-shape", "nope=1"], "no input 'nope'"),
             (["--input-shape", "1,3,224,224"], "2 inputs"),
             (["--input-shape", "x=2,3,-1,-1", "--input-shape", "mask=3,1"], "'batch'.*2.*3"),
             (["--input-shape", "x=1,4,1,1"], "'x' dim 1 is 3"),
             (["--input-shape", "x=seq:1,3,1,1"], "'batch', not 'seq'"),
             (["--input-shape", "x=a,b"], "'a' is not a size"),
             (["--input-shape", "x=1,3,1,1", "--input-shape", "x=1,3,1,1"], "'x' is given twice")]
    for args, pattern in cases:
        rc, err, out = input_shape(args)
        lines = err.strip().splitlines()
        if rc != 1 or len(lines) != 1 or not re.search(pattern, lines[0]) or os.path.exists(out):
            return "%s: exit %d, stderr %r, output %s" % (args, rc, err, os.path.exists(out))
    return None


def sequence_model():
    """x[2,3] -> SequenceConstruct(x, x) -> s (declared a sequence in value_info) -> SequenceAt
    -> e -> Relu -> y; SplitToSequence(x) -> parts -> ConcatFromSequence -> c."""
    pos = numpy_helper.from_array(np.array(1, dtype=np.int64), "pos")
    nodes = [helper.make_node("SequenceConstruct", ["x", "x"], ["s"], "construct"),
             helper.make_node("SequenceAt", ["s", "pos"], ["e"], "at"),
             helper.make_node("Relu", ["e"], ["y"], "relu"),
             helper.make_node("SplitToSequence", ["x"], ["parts"], "split", axis=1),
             helper.make_node("ConcatFromSequence", ["parts"], ["c"], "cat", axis=0)]
    seq_vi = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph(nodes, "seq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None]),
                           helper.make_tensor_value_info("c", TensorProto.FLOAT, [None, None])], [pos],
                          value_info=[seq_vi])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def check_sequences():
    """Tensors taken out of a sequence are typed; a sequence value never gets a tensor
    value_info, and its own declaration is kept byte for byte."""
    src = save(sequence_model(), "seq.onnx")
    out, _ = fmt(src)
    m = onnx.load(out)
    onnx.checker.check_model(m, full_check=True)
    kinds = {v.name: v.type.WhichOneof("value") for v in m.graph.value_info}
    if kinds.get("s") != "sequence_type" or "parts" in kinds:
        return "value_info kinds %s" % kinds
    if [v.SerializeToString() for v in m.graph.value_info if v.name == "s"] != \
            [v.SerializeToString() for v in onnx.load(src).graph.value_info]:
        return "the sequence's declaration changed"
    d = declared(m)
    return None if d.get("e") == (TensorProto.FLOAT, [2, 3]) else "e declared %s" % (d.get("e"),)


def main():
    t = testlib.Tally("test_infer_shapes")
    t.check("written", check_written)
    t.check("if-body", check_if_body)
    t.check("sequences", check_sequences)
    t.check("shapes", check_shapes)
    t.check("sampling", check_sampling)
    t.check("ceil-pool", check_ceil_pool)
    t.check("convt-same", check_convt_same)
    t.check("reshape-rest", check_reshape_rest)
    t.check("expression", check_expression)
    t.check("conflict", check_conflict)
    t.check("unknown-op", check_unknown_op)
    t.check("input-shape-fixed", check_input_shape_fixed)
    t.check("input-shape-partial", check_input_shape_partial)
    t.check("input-shape-passes-none", check_input_shape_passes_none)
    t.check("input-shape-errors", check_input_shape_errors)
    return t.summary()


if __name__ == "__main__":
    sys.exit(main())
