#!/usr/bin/python3
"""make_bad_inputs.py OUTDIR - write hostile ONNX inputs for tests/test_bad_inputs.py.

Every case is a file (or a folder holding model.onnx and its external data)
under OUTDIR, listed in OUTDIR/cases.json with what ppqfmt must do with it:

  name     the case
  path     the model, relative to OUTDIR
  expect   the allowed exit codes (README: 0 ok, 1 usage, 2 bad model, ...)
  stderr   a regular expression the "ppqfmt: ..." error line must match
           (it names what is wrong: the node or tensor)
  check    extra checks on a successful output: "ssa" (every value written
           once, then the checker), "checker" (onnx full check),
           "idempotent" (the checker, then formatting the output again gives
           the same bytes), "bn-kept" (a BatchNormalization is still there,
           with a warning), "constant-kept" (the Constant is still there and
           a warning names both of its value attributes)
  xfail    why the case is expected to fail for now (null: must pass)
  args     extra ppqfmt options (for example --print)
  timeout  seconds allowed (default: the test's own, 60), for cases that
           catch super-linear passes
  note     what the case is about

Most models are hand-encoded at the protobuf wire level (small helpers
below), so that they can be broken in ways the onnx library refuses to
write. Deterministic: the same OUTDIR contents every run.
"""
import json
import os
import random
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# ---------------------------------------------------------------- wire helpers
VARINT, I64, LEN, I32 = 0, 1, 2, 5


def varint(n):
    n &= (1 << 64) - 1  # negative int64 values take ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def ld(num, payload):
    """A length-delimited field."""
    if isinstance(payload, str):
        payload = payload.encode()
    return key(num, LEN) + varint(len(payload)) + payload


def vf(num, n):
    """A varint field."""
    return key(num, VARINT) + varint(n)


# ModelProto / GraphProto / NodeProto / AttributeProto / TensorProto field numbers
M_IR, M_PRODUCER, M_GRAPH, M_OPSET = 1, 2, 7, 8
G_NODE, G_NAME, G_INIT, G_INPUT, G_OUTPUT, G_VI = 1, 2, 5, 11, 12, 13
N_IN, N_OUT, N_NAME, N_TYPE, N_ATTR = 1, 2, 3, 4, 5
A_NAME, A_I, A_T, A_G, A_INTS, A_TYPE = 1, 3, 5, 6, 8, 20
AT_INT, AT_TENSOR, AT_GRAPH, AT_INTS = 2, 4, 5, 7
T_DIMS, T_DTYPE, T_FLOAT, T_INT64, T_NAME, T_RAW, T_STRING, T_EXT, T_LOC = 1, 2, 4, 7, 8, 9, 6, 13, 14


def opset(version=13, domain=""):
    return ld(M_OPSET, (ld(1, domain) if domain else b"") + vf(2, version))


def model(graph, ir=8, ops=13):
    return vf(M_IR, ir) + ld(M_PRODUCER, "make_bad_inputs") + ld(M_GRAPH, graph) + opset(ops)


def node(op, inputs, outputs, name="", attrs=()):
    b = b"".join(ld(N_IN, i) for i in inputs) + b"".join(ld(N_OUT, o) for o in outputs)
    if name:
        b += ld(N_NAME, name)
    b += ld(N_TYPE, op)
    return b + b"".join(ld(N_ATTR, a) for a in attrs)


def value_info(name, elem=TensorProto.FLOAT, dims=None):
    """ValueInfoProto {name, type {tensor_type {elem_type, shape}}}."""
    tt = vf(1, elem)
    if dims is not None:
        tt += ld(2, b"".join(ld(1, vf(1, d)) for d in dims))
    return ld(1, name) + ld(2, ld(1, tt))


def tensor(name, dtype, dims, raw=None, floats=None, extra=b""):
    b = b"".join(vf(T_DIMS, d) for d in dims) + vf(T_DTYPE, dtype)
    if floats is not None:
        b += ld(T_FLOAT, struct.pack("<%df" % len(floats), *floats))
    b += ld(T_NAME, name)
    if raw is not None:
        b += ld(T_RAW, raw)
    return b + extra


def graph(nodes, inputs, outputs, inits=(), name="g", vis=()):
    return (b"".join(ld(G_NODE, n) for n in nodes) + ld(G_NAME, name)
            + b"".join(ld(G_INIT, t) for t in inits)
            + b"".join(ld(G_INPUT, i) for i in inputs)
            + b"".join(ld(G_OUTPUT, o) for o in outputs)
            + b"".join(ld(G_VI, v) for v in vis))


def relu_model_with_init(init, n=2):
    """y = Add(x, c) where c is the given initializer (named c), x and y of n elements."""
    return model(graph([node("Add", ["x", "c"], ["y"], "add")],
                       [value_info("x", dims=[n])], [value_info("y", dims=[n])], inits=[init]))


# ---------------------------------------------------------------- the valid base model
def base_model():
    """Conv -> BatchNormalization -> Relu, with a Constant and an Identity: a
    little of everything the passes touch, with initializers big enough that
    truncation points land in tensor data too."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv_w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv_b")
    bn = [numpy_helper.from_array(a.astype(np.float32), n) for a, n in [
        (rng.uniform(0.5, 1.5, 4), "bn_scale"), (rng.standard_normal(4), "bn_bias"),
        (rng.standard_normal(4), "bn_mean"), (rng.uniform(0.5, 1.5, 4), "bn_var")]]
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], "conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["n"], "bn", epsilon=1e-5),
        helper.make_node("Constant", [], ["k"], "const",
                         value=numpy_helper.from_array(np.float32([0.5]), "k")),
        helper.make_node("Mul", ["n", "k"], ["m"], "mul"),
        helper.make_node("Identity", ["m"], ["i"], "id"),
        helper.make_node("Relu", ["i"], ["y"], "relu"),
    ]
    g = helper.make_graph(nodes, "base",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [w, b] + bn)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="base")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def graph_field_span(data):
    """(start of the graph field's payload, its end) in a serialized ModelProto."""
    p = 0
    while p < len(data):
        tag, p = read_varint(data, p)
        num, wt = tag >> 3, tag & 7
        if wt == VARINT:
            _, p = read_varint(data, p)
        elif wt == LEN:
            n, p = read_varint(data, p)
            if num == M_GRAPH:
                return p, p + n
            p += n
        elif wt == I64:
            p += 8
        elif wt == I32:
            p += 4
    raise ValueError("no graph field")


def read_varint(data, p):
    x = s = 0
    while True:
        b = data[p]
        p += 1
        x |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return x, p


# ---------------------------------------------------------------- nested subgraphs
def nested_if(depth):
    """`depth` graphs nested in each other (the main graph counts as one):
    an If whose then_branch holds an If ... down to an Identity."""
    inner = graph([node("Identity", ["x"], ["r0"], "leaf")], [], [value_info("r0")], name="g%d" % depth)
    for level in range(depth - 1, 0, -1):
        out = "r%d" % (depth - level)
        branch = ld(A_NAME, "then_branch") + vf(A_TYPE, AT_GRAPH) + ld(A_G, inner)
        other = ld(A_NAME, "else_branch") + vf(A_TYPE, AT_GRAPH) + ld(
            A_G, graph([node("Identity", ["x"], [out + "e"], "e%d" % level)], [], [value_info(out + "e")],
                       name="e%d" % level))
        inner = graph([node("If", ["cond"], [out], "if%d" % level, attrs=[branch, other])],
                      [], [value_info(out)], name="g%d" % level)
    # `inner` is now the main graph's body: give it the inputs
    top = inner + ld(G_INPUT, value_info("cond", TensorProto.BOOL, [])) + ld(G_INPUT, value_info("x", dims=[1]))
    return model(top)


def nested_type(depth):
    """A graph input whose TypeProto is sequence(sequence(...(tensor))) `depth` deep:
    protobuf-c unpacks ValueInfoProto recursively."""
    t = ld(1, vf(1, TensorProto.FLOAT))  # TypeProto.tensor_type
    for _ in range(depth):
        t = ld(4, ld(1, t))  # TypeProto.sequence_type { elem_type = t }
    vi = ld(1, "x") + ld(2, t)
    return model(graph([node("Identity", ["x"], ["y"], "id")], [vi], [value_info("y")]))


# ---------------------------------------------------------------- external data
def external_tensor(name, location, offset=None, length=None, dims=(4,)):
    entries = ld(T_EXT, ld(1, "location") + ld(2, location))
    if offset is not None:
        entries += ld(T_EXT, ld(1, "offset") + ld(2, str(offset)))
    if length is not None:
        entries += ld(T_EXT, ld(1, "length") + ld(2, str(length)))
    return (b"".join(vf(T_DIMS, d) for d in dims) + vf(T_DTYPE, TensorProto.FLOAT)
            + ld(T_NAME, name) + entries + vf(T_LOC, 1))


def external_model(location, offset=None, length=None):
    return relu_model_with_init(external_tensor("c", location, offset, length, dims=(2,)))


# ---------------------------------------------------------------- the cases
class Cases:
    def __init__(self, out):
        self.out = out
        self.list = []

    def add(self, name, data, expect=(2,), stderr=None, check=None, xfail=None, note="",
            folder=False, args=(), timeout=None):
        rel = os.path.join(name, "model.onnx") if folder else name + ".onnx"
        path = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        self.list.append({"name": name, "path": rel, "expect": list(expect), "stderr": stderr,
                          "check": check, "xfail": xfail, "note": note, "args": list(args),
                          "timeout": timeout})
        return os.path.dirname(path)


def make(out):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    c = Cases(out)
    rng = random.Random(6)
    base = base_model().SerializeToString()
    gstart, gend = graph_field_span(base)

    # --- not a model at all
    c.add("empty", b"", stderr=r"empty", note="empty file")
    c.add("random_bytes", bytes(rng.getrandbits(8) for _ in range(4096)), note="4 KiB of random bytes")
    c.add("random_text", b"this is not an onnx model\n" * 10, note="text")
    c.add("one_byte", b"\x08", note="a tag with no value")
    c.add("varint_11_bytes", b"\x08" + b"\xff" * 10 + b"\x01", note="a varint longer than 10 bytes")
    c.add("field_number_0", b"\x02\x00", note="field number 0")
    c.add("group_wire_type", key(7, 3) + key(7, 4), note="deprecated group wire types")
    c.add("no_graph", vf(M_IR, 8) + opset(), stderr=r"no graph", note="a ModelProto without a graph")

    # --- a valid model truncated at 30 points inside the graph field
    points = sorted({gstart - 1} | {gstart + (gend - gstart) * k // 30 for k in range(1, 30)} | {gend - 1})
    for p in points[:30]:
        c.add("truncated_%05d" % p, base[:p], note="the valid base model (%d bytes) cut at byte %d" % (len(base), p))

    # --- length prefixes larger than what is there
    c.add("len_prefix_model", vf(M_IR, 8) + key(M_GRAPH, LEN) + varint(1 << 20) + b"\x0a\x00",
          note="graph field declares 1 MiB, file has 2 bytes")
    c.add("len_prefix_huge", vf(M_IR, 8) + key(M_GRAPH, LEN) + varint((1 << 64) - 1) + b"\x0a\x00",
          note="graph field declares 2^64-1 bytes")
    c.add("len_prefix_nested", model(key(G_NODE, LEN) + varint(500) + b"\x0a\x01x"),
          note="a node declares 500 bytes inside a graph of 5")
    c.add("len_prefix_raw_data", relu_model_with_init(
        vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + key(T_RAW, LEN) + varint(1 << 30) + b"\0" * 8),
        note="raw_data declares 1 GiB")

    # --- wrong wire types for known fields
    good_graph = graph([node("Relu", ["x"], ["y"], "relu")], [value_info("x", dims=[2])], [value_info("y")])
    c.add("wt_graph_varint", vf(M_IR, 8) + vf(M_GRAPH, 5) + opset(),
          note="ModelProto.graph as a varint")
    c.add("wt_node_varint", model(vf(G_NODE, 1) + good_graph), stderr=r"graph|node|malformed",
          note="GraphProto.node as a varint")
    c.add("wt_initializer_fixed32", model(key(G_INIT, I32) + b"\0\0\0\0" + good_graph),
          stderr=r"initializer|malformed", note="GraphProto.initializer as fixed32")
    c.add("wt_input_varint", model(vf(G_INPUT, 3) + good_graph), stderr=r"input|malformed",
          note="GraphProto.input as a varint")
    c.add("wt_output_fixed64", model(key(G_OUTPUT, I64) + b"\0" * 8 + good_graph),
          stderr=r"output|malformed", note="GraphProto.output as fixed64")
    c.add("wt_value_info_varint", model(vf(G_VI, 3) + good_graph), stderr=r"value_info|malformed",
          note="GraphProto.value_info as a varint")
    c.add("wt_op_type_varint", model(graph([ld(N_IN, "x") + ld(N_OUT, "y") + ld(N_NAME, "relu") + vf(N_TYPE, 7)],
                                           [value_info("x", dims=[2])], [value_info("y")])),
          stderr=r"relu", note="NodeProto.op_type as a varint: the node has no type")
    c.add("wt_node_input_varint", model(graph([vf(N_IN, 1) + ld(N_OUT, "y") + ld(N_NAME, "relu") + ld(N_TYPE, "Relu")],
                                              [value_info("x", dims=[2])], [value_info("y")])),
          stderr=r"relu", note="NodeProto.input as a varint")
    c.add("wt_tensor_dtype_len", relu_model_with_init(
        vf(T_DIMS, 2) + ld(T_DTYPE, b"\x01") + ld(T_NAME, "c") + ld(T_RAW, b"\0" * 8)),
        stderr=r"'c'", note="TensorProto.data_type as bytes")
    c.add("wt_tensor_dims_fixed32", relu_model_with_init(
        key(T_DIMS, I32) + b"\x02\0\0\0" + vf(T_DTYPE, 1) + ld(T_NAME, "c") + ld(T_RAW, b"\0" * 8)),
        stderr=r"'c'", note="TensorProto.dims as fixed32")
    c.add("wt_tensor_raw_varint", relu_model_with_init(
        vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + vf(T_RAW, 5)),
        stderr=r"'c'", note="TensorProto.raw_data as a varint")
    c.add("wt_attr_ints_fixed64", model(graph(
        [node("Transpose", ["x"], ["y"], "tr", attrs=[ld(A_NAME, "perm") + vf(A_TYPE, AT_INTS) + key(A_INTS, I64) + b"\0" * 8])],
        [value_info("x", dims=[2, 3])], [value_info("y")])), stderr=r"tr|perm",
        note="AttributeProto.ints as fixed64")
    c.add("wt_opset_varint", vf(M_IR, 8) + ld(M_GRAPH, good_graph) + vf(M_OPSET, 13),
          stderr=r"opset", note="ModelProto.opset_import as a varint")

    c.add("wt_ir_version_len", ld(M_IR, b"\x08") + ld(M_GRAPH, good_graph) + opset(),
          stderr=r"not an ONNX model", note="ModelProto.ir_version as bytes")
    c.add("wt_graph_name_varint", model(good_graph + vf(G_NAME, 1)), stderr=r"graph",
          note="GraphProto.name as a varint (after the real name)")
    c.add("wt_attr_type_len", model(graph(
        [node("Transpose", ["x"], ["y"], "tr", attrs=[ld(A_NAME, "perm") + ld(A_TYPE, b"\x07") + vf(A_INTS, 1) + vf(A_INTS, 0)])],
        [value_info("x", dims=[2, 3])], [value_info("y")])), stderr=r"tr.*perm",
        note="AttributeProto.type as bytes")
    c.add("wt_tensor_float_data_varint", relu_model_with_init(
        vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + vf(T_FLOAT, 1) + vf(T_FLOAT, 2)),
        stderr=r"'c'", note="TensorProto.float_data as varints")
    c.add("ir2_no_opset_import", vf(M_IR, 2) + ld(M_GRAPH, graph(
        [node("Relu", ["x"], ["y"], "relu")], [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        expect=(0,), note="IR 2 without opset_import: the operator set is implied (as onnx.checker)")
    c.add("node_no_op_type", model(graph([ld(N_IN, "x") + ld(N_OUT, "y") + ld(N_NAME, "relu")],
                                         [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
          stderr=r"relu", note="a node without op_type")
    c.add("no_opset_import", vf(M_IR, 8) + ld(M_GRAPH, good_graph), stderr=r"opset",
        note="a model without opset_import")
    c.add("tensor_dtype_undefined", relu_model_with_init(tensor("c", 0, [2], raw=b"\0" * 8)),
          stderr=r"'c'", note="an initializer of data_type 0 (UNDEFINED)")
    c.add("tensor_dtype_unknown", relu_model_with_init(tensor("c", 999, [2], raw=b"\0" * 8)),
          expect=(0, 2), stderr=r"'c'",
          note="an initializer of data_type 999 (a newer ONNX's dtype? kept or refused, both fine)")
    c.add("cast_to_unknown", model(graph(
        [node("Cast", ["x"], ["y"], "cast", attrs=[ld(A_NAME, "to") + vf(A_TYPE, AT_INT) + vf(A_I, 999)])],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        stderr=r"cast", note="Cast to dtype 999 (the loader refuses an unknown 'to')")

    # a Constant in an If branch writing the name of an outer initializer (onnx's
    # checker: not SSA); a later outer name, or a sibling branch's, is no conflict
    def if_writing(name, outer_after=False):
        def branch(attr, out, nodes):
            read = name if nodes or not outer_after else "x"
            return ld(A_NAME, attr) + vf(A_TYPE, AT_GRAPH) + ld(A_G, graph(
                nodes + [node("Add", [read, "x"], [out], attr + "_add")], [], [value_info(out, dims=[2])],
                name=attr))
        const = node("Constant", [], [name], "shadow", attrs=[
            ld(A_NAME, "value") + vf(A_TYPE, AT_TENSOR) + ld(A_T, tensor("", TensorProto.FLOAT, [2], floats=[5.0, 6.0]))])
        nodes = [node("If", ["c"], ["y"], "if", attrs=[branch("then_branch", "t", [const]),
                                                        branch("else_branch", "e", [])])]
        inits = [] if outer_after else [tensor(name, TensorProto.FLOAT, [2], floats=[1.0, 2.0])]
        if outer_after:  # the outer graph writes the name after the If
            nodes.append(node("Neg", ["y"], [name], "later"))
        return model(graph(nodes, [value_info("c", TensorProto.BOOL, []), value_info("x", dims=[2])],
                           [value_info("y", dims=[2])] + ([value_info(name, dims=[2])] if outer_after else []),
                           inits=inits))
    c.add("if_constant_shadows_outer", if_writing("w"), stderr=r"'shadow'.*'w'",
          note="a Constant in an If branch writes an outer initializer's name (not SSA): refused")
    c.add("if_constant_names_later_outer", if_writing("w", outer_after=True), expect=(0,),
          note="an If branch writes a name the outer graph writes only after the If: valid")

    # torch 1.13's LayerNorm(elementwise_affine=False) at opset 17: no scale
    for suffix, inputs, args in (("", ["x", "", "b"], ()), ("_copy", ["x", "", "b"], ("--passes=none",)),
                                 ("_one_input", ["x"], ())):
        c.add("layernorm_empty_scale" + suffix, model(graph(
            [node("LayerNormalization", inputs, ["y"], "ln")],
            [value_info("x", dims=[2, 4])], [value_info("y", dims=[2, 4])],
            inits=[tensor("b", TensorProto.FLOAT, [4], raw=b"\0" * 16)]), ops=17),
            stderr=r"'ln'.*scale", args=args,
            note="LayerNormalization without a scale (%s): refused, not written on" % (args or "default"))

    # --- attributes whose value fields disagree with their declared type
    c.add("attr_ints_with_graph", model(graph(
        [node("Transpose", ["x"], ["y"], "tr", attrs=[
            ld(A_NAME, "perm") + vf(A_TYPE, AT_INTS) + vf(A_INTS, 1) + vf(A_INTS, 0) + vf(A_INTS, 0)
            + ld(A_G, graph([], [], [], name="sub"))])],
        [value_info("x", dims=[2, 3])], [value_info("y", dims=[3, 2])])),
        expect=(0, 2), stderr=r"tr|perm", note="an INTS attribute (3 ints) that also holds a graph (kept as unknown bytes, or refused)")
    c.add("attr_ints_with_tensor", model(graph(
        [node("Transpose", ["x"], ["y"], "tr", attrs=[
            ld(A_NAME, "perm") + vf(A_TYPE, AT_INTS) + vf(A_INTS, 1) + vf(A_INTS, 0) + vf(A_INTS, 0)
            + ld(A_T, tensor("t", 1, [1], raw=b"\0" * 4))])],
        [value_info("x", dims=[2, 3])], [value_info("y", dims=[3, 2])])),
        expect=(0, 2), stderr=r"tr|perm", note="an INTS attribute (3 ints) that also holds a tensor (kept as unknown bytes, or refused)")
    c.add("attr_tensor_without_tensor", model(graph(
        [node("Constant", [], ["k"], "const", attrs=[ld(A_NAME, "value") + vf(A_TYPE, AT_TENSOR)]),
         node("Add", ["x", "k"], ["y"], "add")],
        [value_info("x", dims=[1])], [value_info("y", dims=[1])])),
        stderr=r"const|value", args=["--print"],
        note="a TENSOR attribute without a tensor, run with --print")
    c.add("attr_graph_without_graph", model(graph(
        [node("If", ["c"], ["y"], "if", attrs=[ld(A_NAME, "then_branch") + vf(A_TYPE, AT_GRAPH),
                                               ld(A_NAME, "else_branch") + vf(A_TYPE, AT_GRAPH)])],
        [value_info("c", TensorProto.BOOL, [])], [value_info("y", dims=[1])])),
        stderr=r"if|branch", args=["--print"], note="If whose GRAPH attributes hold no graph, run with --print")

    # --- unnamed legacy nodes without outputs (the upgrade names new parameters after them)
    def no_outputs(op, inputs, attrs, ops):
        n = b"".join(ld(N_IN, i) for i in inputs) + ld(N_TYPE, op) + b"".join(ld(N_ATTR, a) for a in attrs)
        return model(graph([n, node("Relu", ["x"], ["y"], "relu")],
                           [value_info("x", dims=[1, 1, 2, 2])], [value_info("y", dims=[1, 1, 2, 2])]), ops=ops)

    def float_attr(name, v):
        return ld(A_NAME, name) + vf(A_TYPE, 1) + key(2, I32) + struct.pack("<f", v)
    c.add("clip6_unnamed_no_outputs", no_outputs("Clip", ["x"], [float_attr("min", 0.0), float_attr("max", 6.0)], 6),
          expect=(0, 2), stderr=r"clip", note="an unnamed Clip-6 without outputs in an opset-6 model")
    c.add("upsample9_unnamed_no_outputs", no_outputs("Upsample", ["x", "x"], [], 9),
          expect=(0, 2), stderr=r"upsample", note="an unnamed Upsample-9 without outputs in an opset-9 model")
    c.add("pad2_unnamed_no_outputs", no_outputs("Pad", ["x"], [
        ld(A_NAME, "mode") + vf(A_TYPE, 3) + ld(4, b""),
        ld(A_NAME, "pads") + vf(A_TYPE, AT_INTS) + b"".join(vf(A_INTS, v) for v in [0, 0, 3, 1, 0, 0, 4, 2])], 7),
        expect=(0, 2), stderr=r"pad", note="an unnamed Pad-2 (empty mode) without outputs in an opset-7 model")

    # --- legacy nodes the opset upgrade rewrites, with missing inputs or odd dtypes
    def legacy(nodes, ops, xelem=TensorProto.FLOAT):
        return model(graph(nodes + [node("Relu", ["x"], ["y"], "relu")], [value_info("x", xelem, dims=[1, 1, 2, 2])],
                           [value_info("y", dims=[1, 1, 2, 2])]), ops=ops)
    pads = ld(A_NAME, "pads") + vf(A_TYPE, AT_INTS) + b"".join(vf(A_INTS, v) for v in [0, 0, 1, 1, 0, 0, 1, 1])
    c.add("clip6_no_inputs", legacy([node("Clip", [], ["c"], "clip")], 6), expect=(0, 2), stderr=r"clip",
          note="a Clip without inputs (and no min/max) in an opset-6 model")
    c.add("pad2_value_no_inputs", legacy([node("Pad", [], ["p"], "pad", attrs=[pads, float_attr("value", 1.0)])], 7),
          expect=(0, 2), stderr=r"pad", note="a Pad-2 with pads and value but no inputs")
    c.add("pad2_value_unknown_dtype", legacy([node("Pad", ["x"], ["p"], "pad", attrs=[pads, float_attr("value", 1.0)])],
                                             7, xelem=99),
          expect=(0, 2), stderr=r"pad|'x'", note="Pad-2 with a value on an input of element type 99")
    c.add("pad2_value_string", legacy([node("Pad", ["x"], ["p"], "pad", attrs=[pads, float_attr("value", 1.0)])],
                                      7, xelem=TensorProto.STRING),
          expect=(0, 2), stderr=r"pad|'x'", note="Pad-2 with a (float) value on a string input")

    for label, v in [("nan", float("nan")), ("1e35", 1e35)]:
        c.add("pad2_value_%s_int32" % label, model(graph(
            [node("Pad", ["x"], ["y"], "pad", attrs=[pads, float_attr("value", v)])],
            [value_info("x", TensorProto.INT32, dims=[1, 1, 2, 2])],
            [value_info("y", TensorProto.INT32, dims=[1, 1, 4, 4])]), ops=7),
            expect=(0, 2), stderr=r"pad", note="Pad-2 value %s on an int32 input (float to int conversion)" % label)

    # --- sizes
    c.add("dims_overflow", relu_model_with_init(tensor("c", TensorProto.FLOAT, [1 << 40, 1 << 40], raw=b"\0" * 8)),
          stderr=r"'c'", note="dims 2^40 x 2^40: the product overflows int64")
    c.add("dims_overflow_2_63", relu_model_with_init(tensor("c", TensorProto.FLOAT, [1 << 32, 1 << 31], raw=b"\0" * 8)),
          stderr=r"'c'", note="dims 2^32 x 2^31 = 2^63: one past INT64_MAX")
    c.add("dims_bytes_overflow", relu_model_with_init(tensor("c", TensorProto.FLOAT, [1 << 62], raw=b"\0" * 8)),
          stderr=r"'c'", note="2^62 floats: numel fits int64, the byte count overflows 64 bits")
    c.add("dims_huge_typed", relu_model_with_init(tensor("c", TensorProto.FLOAT, [1 << 40], floats=[1.0, 2.0])),
          stderr=r"'c'", note="dims declare 2^40 floats, float_data holds 2 (no 4 TiB allocation)")
    c.add("dims_complex_overflow", relu_model_with_init(tensor("c", TensorProto.COMPLEX64, [1 << 62], floats=[1.0, 2.0])),
          stderr=r"'c'", note="2^62 complex64 values: numel x 2 floats overflows int64 (signed overflow)")
    c.add("dims_huge_strings", relu_model_with_init(
        b"".join(vf(T_DIMS, d) for d in [1 << 40]) + vf(T_DTYPE, TensorProto.STRING) + ld(T_NAME, "c")
        + ld(T_STRING, "a") + ld(T_STRING, "b")),
        stderr=r"'c'", note="a string tensor declaring 2^40 elements with 2 strings")
    c.add("dims_too_many", relu_model_with_init(tensor("c", TensorProto.FLOAT, [1] * 100000, raw=b"\0" * 4)),
          stderr=r"'c'", note="100000 dims of 1")
    c.add("dims_negative", relu_model_with_init(tensor("c", TensorProto.FLOAT, [-1, 2], raw=b"\0" * 8)),
          stderr=r"'c'", note="a dimension of -1")
    c.add("dims_int64_min", relu_model_with_init(tensor("c", TensorProto.FLOAT, [-(1 << 63), 2], raw=b"\0" * 8)),
          stderr=r"'c'", note="a dimension of INT64_MIN")
    c.add("raw_short", relu_model_with_init(tensor("c", TensorProto.FLOAT, [2], raw=b"\0" * 7)),
          stderr=r"'c'", note="raw_data 7 bytes, dims say 8")
    c.add("raw_long", relu_model_with_init(tensor("c", TensorProto.FLOAT, [2], raw=b"\0" * 9)),
          stderr=r"'c'", note="raw_data 9 bytes, dims say 8")
    c.add("raw_empty", relu_model_with_init(tensor("c", TensorProto.FLOAT, [2], raw=b"")),
          stderr=r"'c'", note="raw_data present and empty, dims say 8 bytes")
    c.add("typed_short", relu_model_with_init(tensor("c", TensorProto.FLOAT, [3], floats=[1.0, 2.0])),
          stderr=r"'c'", note="float_data 2 values, dims say 3")
    c.add("typed_packed_truncated", relu_model_with_init(
        vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + ld(T_FLOAT, b"\0" * 7)),
        stderr=r"'c'", note="packed float_data of 7 bytes")
    c.add("huge_repeated_count", relu_model_with_init(
        vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + ld(T_RAW, b"\0" * 8)
        + b"".join(vf(T_INT64, 1) for _ in range(100000))),
        expect=(0, 2), stderr=r"'c'",
        note="a float tensor followed by 100000 unpacked int64_data entries (ignored field for the dtype)")
    c.add("many_dims_value_info", model(graph([node("Relu", ["x"], ["y"], "relu")],
                                              [value_info("x", dims=[1] * 50000)], [value_info("y")])),
          expect=(0, 2), note="a graph input declaring 50000 dims: memory bounded by the file size")

    # --- graph structure
    c.add("cycle", model(graph([node("Relu", ["b"], ["a"], "A"), node("Relu", ["a"], ["b"], "B")],
                               [value_info("x", dims=[2])], [value_info("a")])),
          stderr=r"\b(A|B)\b", note="two nodes feeding each other")
    c.add("self_loop", model(graph([node("Add", ["x", "a"], ["a"], "selfadd")],
                                   [value_info("x", dims=[2])], [value_info("a")])),
          expect=(2,), stderr=r"selfadd", note="a node reading its own output")
    c.add("dangling_input", model(graph([node("Relu", ["ghost"], ["y"], "relu")],
                                        [value_info("x", dims=[2])], [value_info("y")])),
          stderr=r"ghost", note="a node input nothing produces")
    c.add("dangling_output", model(graph([node("Relu", ["x"], ["y"], "relu")],
                                         [value_info("x", dims=[2])], [value_info("nothing")])),
          stderr=r"nothing", note="a graph output nothing produces")
    c.add("two_writers", model(graph(
        [node("Relu", ["x"], ["t"], "r1"), node("Neg", ["t"], ["t"], "r2"), node("Abs", ["t"], ["y"], "r3")],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        expect=(0,), check="ssa", note="two nodes write 't' (in-place style): de-inplace renames, exit 0")
    c.add("output_is_input_name", model(graph([node("Relu", ["x"], ["x"], "r")],
                                              [value_info("x", dims=[2])], [value_info("x")])),
          stderr=r"'x'", note="a node writes the name of a graph input")
    c.add("duplicate_input", model(graph([node("Relu", ["x"], ["y"], "relu")],
                                         [value_info("x", dims=[2]), value_info("x", dims=[2])], [value_info("y")])),
          stderr=r"'x'", note="a graph input listed twice")
    c.add("duplicate_initializer", model(graph(
        [node("Add", ["x", "c"], ["y"], "add")], [value_info("x", dims=[2])], [value_info("y")],
        inits=[tensor("c", 1, [2], raw=b"\0" * 8), tensor("c", 1, [2], raw=b"\0" * 8)])),
        stderr=r"'c'", note="an initializer defined twice")
    c.add("nul_in_name", model(graph([node("Relu", ["x"], ["y\0z"], "relu")],
                                     [value_info("x", dims=[2])], [value_info("y\0z")])),
          stderr=r"NUL", note="a value name with a NUL byte")

    # --- size of the graph: every pass must stay about linear (20 s is ~20x slack)
    n = 100000
    c.add("fanout_param_100k", model(graph(
        [node("Add", ["x", "c"], ["a%d" % i], "n%d" % i) for i in range(n)]
        + [node("Sum", ["a%d" % i for i in range(n)], ["y"], "sum")],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])], inits=[tensor("c", 1, [2], raw=b"\0" * 8)])),
        expect=(0,), timeout=20,
        note="one initializer read by 100000 nodes: split-params makes 99999 copies c_1..c_99999")
    c.add("inplace_chain_100k", model(graph(
        [node("Relu", ["t" if i else "x"], ["t"], "n%d" % i) for i in range(n)] + [node("Neg", ["t"], ["y"], "neg")],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        expect=(0,), timeout=20, check="ssa",
        note="100000 nodes writing 't' in place: de-inplace renames 99999 of them")
    c.add("identity_chain_100k", model(graph(
        [node("Identity", ["x" if i == 0 else "v%d" % (i - 1)], ["v%d" % i], "n%d" % i) for i in range(n)]
        + [node("Relu", ["v%d" % (n - 1)], ["y"], "relu")],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        expect=(0,), timeout=20, note="a chain of 100000 Identity nodes")
    c.add("dead_chain_100k", model(graph(
        [node("Relu", ["x" if i == 0 else "d%d" % (i - 1)], ["d%d" % i], "n%d" % i) for i in range(n)]
        + [node("Neg", ["x"], ["y"], "neg")],
        [value_info("x", dims=[2])], [value_info("y", dims=[2])])),
        expect=(0,), timeout=20, note="a chain of 100000 dead nodes for isolated")

    # --- a valid model: a dead If whose then_branch outputs an outer value
    then_g = helper.make_graph([], "then", [], [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], "eid")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["a"], "neg"),
         helper.make_node("If", ["cond"], ["dead"], "deadif", then_branch=then_g, else_branch=else_g),
         helper.make_node("Relu", ["x"], ["y"], "relu")], "main",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    c.add("dead_if_outer_output", m.SerializeToString(), expect=(0,), check="idempotent",
          note="valid: a dead If whose then_branch returns the outer value 'a' of a dead Neg "
               "(isolated must remove both, leave a valid model, and be idempotent)")

    # --- a valid model: IR 3, opset 10, a Constant inside an If and a Slice (input form)
    then_g = helper.make_graph([helper.make_node("Constant", [], ["k"], "const",
                                                 value=numpy_helper.from_array(np.float32([1.0]), "kv")),
                                helper.make_node("Add", ["x", "k"], ["t"], "add")], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], "neg")], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["r"], "if", then_branch=then_g, else_branch=else_g),
         helper.make_node("Slice", ["r", "starts", "ends"], ["y"], "slice")], "main",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []), helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("ends", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.int64([0]), "starts"), numpy_helper.from_array(np.int64([1]), "ends")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)])
    m.ir_version = 3
    onnx.checker.check_model(m)
    c.add("ir3_constant_in_if_slice10", m.SerializeToString(), expect=(0,), check="idempotent",
          note="valid (IR 3, opset 10): constant cannot fold inside the If under IR 3; the slice pass then "
               "raises the model to opset 11 / IR 6; the result must be a fixed point")

    # --- BN whose channel count disagrees with the conv weights
    w = tensor("w", 1, [4, 3, 1, 1], raw=struct.pack("<12f", *[1.0] * 12))
    bnp = [tensor(n, 1, [5], raw=struct.pack("<5f", *v)) for n, v in
           [("s", [1.0] * 5), ("bb", [0.0] * 5), ("mu", [0.0] * 5), ("var", [1.0] * 5)]]
    c.add("bn_channels_mismatch", model(graph(
        [node("Conv", ["x", "w"], ["c"], "conv"), node("BatchNormalization", ["c", "s", "bb", "mu", "var"], ["y"], "bn")],
        [value_info("x", dims=[1, 3, 2, 2])], [value_info("y")], inits=[w] + bnp)),
        expect=(0, 2), stderr=r"bn|conv", check="bn-kept",
        note="Conv with 4 output channels feeding a BN with 5: fuse-bn must not fold it")
    bnp4 = [tensor(n, 1, [4], raw=struct.pack("<4f", *v)) for n, v in
            [("s", [1.0] * 4), ("bb", [0.0] * 4), ("mu", [0.0] * 4)]] + [tensor("var", 1, [3], raw=struct.pack("<3f", 1, 1, 1))]
    c.add("bn_param_lengths_differ", model(graph(
        [node("Conv", ["x", "w"], ["c"], "conv"), node("BatchNormalization", ["c", "s", "bb", "mu", "var"], ["y"], "bn")],
        [value_info("x", dims=[1, 3, 2, 2])], [value_info("y")], inits=[w] + bnp4)),
        expect=(0, 2), stderr=r"bn|var", check="bn-kept",
        note="BN scale/bias/mean have 4 values, var has 3")
    c.add("bn_alone_mismatch", model(graph(
        [node("BatchNormalization", ["x", "s", "bb", "mu", "var"], ["y"], "bn")],
        [value_info("x", dims=[1, 3, 2, 2])], [value_info("y")], inits=bnp)),
        expect=(0, 2), stderr=r"bn", check="bn-kept",
        note="an isolated BN with 5 parameters on a 3-channel input: bn-to-conv must not build a bad Conv")

    # --- invalid for onnx.checker too: refused at load, naming the node (a pass
    # would otherwise rewrite them into another invalid model with exit 0)
    then_only = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], "then_relu")], "then", [],
                                  [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    g = helper.make_graph([helper.make_node("If", ["cond"], ["y"], "if_no_else", then_branch=then_only)],
                          "main", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                   helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    c.add("if_without_else", m.SerializeToString(), stderr=r"if_no_else.*else_branch",
          note="an If with only a then_branch (checker: required attribute missing)")
    g = helper.make_graph([helper.make_node("Pad", ["x"], ["y"], "pad_odd", pads=[1, 1, 1], mode="constant")],
                          "main", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 4
    c.add("pad2_odd_pads", m.SerializeToString(), stderr=r"pad_odd.*pads.*3",
          note="Pad-2 whose pads has 3 values (a begin and an end per axis make an even count); "
               "the pad pass would write a Pad-11 with the same bad pads")
    for name, xdt, wdt in (("conv_int_weight", TensorProto.FLOAT, np.int64),
                           ("conv_int_input", TensorProto.INT32, np.float32)):
        g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name)], "main",
                              [helper.make_tensor_value_info("x", xdt, [1, 1, 2, 2])],
                              [helper.make_tensor_value_info("y", xdt, [1, 2, 2, 2])],
                              [numpy_helper.from_array(np.ones((2, 1, 1, 1), wdt), "w")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        c.add(name, m.SerializeToString(), stderr=name + r".*int(64|32)",
              note="a Conv with an integer %s (Conv computes in floating point only)"
                   % name.rsplit("_", 1)[1])
    # --- sparse initializers (graph field 15) that cannot be kept as they are
    idx = ld(2, tensor("sp_idx", TensorProto.INT64, [2], raw=struct.pack("<2q", 0, 3)))
    add_sp = [node("Add", ["x", "sp"], ["y"], "add")], [value_info("x", dims=[4])], [value_info("y", dims=[4])]
    folder = c.add("sparse_external_values", model(graph(*add_sp) + ld(15, ld(
        1, external_tensor("sp", "sp.bin", dims=(2,))) + idx + vf(3, 4))),
        stderr=r"sp.*external", folder=True,
        note="a sparse initializer whose values are external data: refused, naming it")
    with open(os.path.join(folder, "sp.bin"), "wb") as f:
        f.write(struct.pack("<2f", 1.0, 2.0))
    c.add("sparse_without_values", model(graph(*add_sp) + ld(15, idx + vf(3, 4))),
          stderr=r"sparse.*values", note="a SparseTensorProto without its values")

    # --- invalid, passed through untouched with a warning that says what is wrong
    const = helper.make_node("Constant", [], ["k"], "const_two", value_float=1.0)
    const.attribute.extend([helper.make_attribute("value_int", 2)])
    g = helper.make_graph([const, helper.make_node("Add", ["x", "k"], ["y"], "add")], "main",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    c.add("constant_two_values", m.SerializeToString(), expect=(0,), check="constant-kept",
          note="a Constant with value_float and value_int: kept, and the warning names both")

    # --- nesting
    c.add("nested_if_64", nested_if(64), expect=(0,), note="64 graphs nested (63 Ifs): the loader's limit")
    c.add("nested_if_65", nested_if(65), stderr=r"nested|deep", note="65 graphs nested: one past the limit")
    c.add("nested_if_2000", nested_if(2000), stderr=r"nested|deep", note="2000 graphs nested")
    c.add("nested_type_100000", nested_type(100000), stderr=r"input|x|deep|nested",
          note="a graph input type nested 100000 sequence levels deep (recursive protobuf-c unpack)")

    # --- external data (each case in its own folder beside an 'outside' folder)
    outside = os.path.join(out, "outside")
    os.makedirs(outside, exist_ok=True)
    with open(os.path.join(outside, "weights.bin"), "wb") as f:
        f.write(b"\0" * 4096)
    d = c.add("ext_ok", external_model("weights.bin", 0, 8), expect=(0,), check="checker", folder=True,
              note="control: valid external data inside the folder")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(struct.pack("<2f", 1.0, 2.0))
    d = c.add("ext_big_ok", relu_model_with_init(external_tensor("c", "weights.bin", 0, 8192, dims=(2048,)), 2048),
              expect=(0,), folder=True, note="control: 8 KiB of external data (test_bad_inputs also writes it "
                                            "under a 4 KiB file size limit)")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\1" * 8192)
    c.add("ext_absolute", external_model(os.path.join(os.path.abspath(outside), "weights.bin"), 0, 8),
          stderr=r"'c'", folder=True, note="external data with an absolute path")
    c.add("ext_dotdot", external_model("../outside/weights.bin", 0, 8), stderr=r"'c'", folder=True,
          note="external data location with '..'")
    c.add("ext_dotdot_inner", external_model("sub/../../outside/weights.bin", 0, 8), stderr=r"'c'", folder=True,
          note="external data location with '..' in the middle")
    d = c.add("ext_symlink", external_model("weights.bin", 0, 8), stderr=r"'c'", folder=True,
              note="external data file is a symlink to a file outside the folder")
    os.symlink("../outside/weights.bin", os.path.join(d, "weights.bin"))
    d = c.add("ext_symlink_dir", external_model("sub/weights.bin", 0, 8), stderr=r"'c'", folder=True,
              note="external data under a folder that is a symlink out of the model's folder")
    os.symlink("../outside", os.path.join(d, "sub"))
    c.add("ext_missing", external_model("nope.bin", 0, 8), stderr=r"'c'", folder=True,
          note="external data file does not exist")
    d = c.add("ext_past_end", external_model("weights.bin", 4, 8), stderr=r"'c'", folder=True,
              note="offset 4 + length 8 in an 8-byte file")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 8)
    d = c.add("ext_offset_huge", external_model("weights.bin", (1 << 64) - 8, 8), stderr=r"'c'", folder=True,
              note="offset 2^64-8: offset + length wraps around")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 8)
    d = c.add("ext_length_mismatch", external_model("weights.bin", 0, 4), stderr=r"'c'", folder=True,
              note="length 4 for a tensor of 2 floats (8 bytes)")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 8)
    d = c.add("ext_is_dir", external_model("adir", 0, 8), stderr=r"'c'", folder=True,
              note="external data location names a folder")
    os.makedirs(os.path.join(d, "adir"))
    c.add("ext_dev_zero", external_model("/dev/zero", 0, 8), stderr=r"'c'", folder=True,
          note="external data from /dev/zero (absolute, a device)")
    d = c.add("ext_fifo", external_model("weights.bin", 0, 8), stderr=r"'c'", folder=True, timeout=10,
              note="external data file is a FIFO nobody writes to (open() must not block)")
    os.mkfifo(os.path.join(d, "weights.bin"))
    n = (1 << 62) + 1  # n * 4 bytes wraps around to 4
    d = c.add("ext_numel_wraps", relu_model_with_init(external_tensor("c", "weights.bin", 0, 4, dims=(n,))),
              stderr=r"'c'", folder=True,
              note="2^62+1 floats in a 4-byte range: dims x 4 wraps around 2^64 to 4")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 4)
    d = c.add("ext_numel_wraps_no_length", relu_model_with_init(external_tensor("c", "weights.bin", 0, None, dims=(n,))),
              stderr=r"'c'", folder=True, note="the same without a length entry (the whole 4-byte file)")
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(b"\0" * 4)
    c.add("ext_no_location", relu_model_with_init(vf(T_DIMS, 2) + vf(T_DTYPE, 1) + ld(T_NAME, "c") + vf(T_LOC, 1)),
          stderr=r"'c'", folder=True, note="data_location EXTERNAL without a location entry")

    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(c.list, f, indent=1)
    return c.list


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_bad_inputs.py OUTDIR")
    cases = make(sys.argv[1])
    print("wrote %d hostile models into %s" % (len(cases), sys.argv[1]))


if __name__ == "__main__":
    main()
