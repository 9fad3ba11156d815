"""pipeline: models that exercise several passes at once (default pipeline only),
and testdata/sample.onnx (for `make run`).

Their builders (testdata/pipeline/<case>.onnx) and what each must look like after
formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper

from passes.build import (bn, bn_inits, const, finish, fvi, graph, Models, node, rand, raw_tensor,
                          vi)
from passes.common import (fed_by_param, folded, init_count, init_removed, kept, NADD, NBN, NC, NI,
                           node_input, node_output, ONCE, op_count, removed)

PASS = None  # the default pipeline only

MODELS = Models("pipeline")
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/pipeline/)
# ---------------------------------------------------------------------------

@model("mixed_loop_body")
def _(r):
    """Loop (2 iterations) whose body holds a Constant (the BN epsilon-free
    shift added at the end), an Identity, and Conv -> BN whose weight W comes
    from the outer scope and is also used by the main graph's conv_out.
    Expect (default pipeline): no Constant, Identity or BN anywhere; the two
    Convs read separate copies of W (the first use in file order, the body's,
    which sits at the Loop node, keeps the name); outputs unchanged."""
    w = raw_tensor("W", rand(r, 3, 3, 3, 3))
    c = r.uniform(0.5, 1.5, 3).astype(np.float32)
    bn_init = [raw_tensor("bs", c), raw_tensor("bb", rand(r, 3)), raw_tensor("bm", rand(r, 3)),
               raw_tensor("bv", r.uniform(0.5, 2, 3).astype(np.float32))]
    body = graph([node("Identity", ["v_in"], ["t"], "body_id"),
                  node("Conv", ["t", "W"], ["c"], "body_conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("BatchNormalization", ["c", "bs", "bb", "bm", "bv"], ["b"], "body_bn"),
                  const("body_const", "k", value=raw_tensor("kv", np.full((1, 3, 1, 1), 0.25,
                                                                       np.float32))),
                  node("Add", ["b", "k"], ["v_out"], "body_add"),
                  node("Identity", ["cond_in"], ["cond_out"], "body_id_cond")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []),
                  fvi("v_in", [1, 3, 5, 5])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [1, 3, 5, 5])],
                 inits=bn_init)
    m_trip = raw_tensor("M", np.array(2, np.int64))
    c_init = raw_tensor("cond_init", np.array(True))
    return finish(graph(
        [helper.make_node("Loop", ["M", "cond_init", "X"], ["L"], name="loop0", body=body),
         node("Conv", ["L", "W"], ["Y"], "conv_out", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "mixed_loop_body", [fvi("X", [1, 3, 5, 5])], [fvi("Y", [1, 3, 5, 5])],
        inits=[w, m_trip, c_init]))


# ---------------------------------------------------------------------------
# mixed: several rules in one model (default pipeline only)
# ---------------------------------------------------------------------------

@model("mixed_conv_add_bn_shared")
def _(r):
    """X -> conv0(W) -> add0(A [1,4,1,1]) -> bn0 -> relu0 -> conv1(W, B1) ->
    bn1 -> Y; conv0 and conv1 share W.
    Expect (default passes): no Add, no BN; 2 Conv + 1 Relu; conv0 writes
    b0 with W folded with A then bn0; conv1 writes Y with W, B1 folded with
    bn1; no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    b1 = raw_tensor("B1", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c0", "A"], ["a0"], "add0"),
         bn("a0", "b0", "bn0", "bn0"),
         node("Relu", ["b0"], ["r"], "relu0"),
         node("Conv", ["r", "W", "B1"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c1", "Y", "bn1", "bn1")],
        "mixed_conv_add_bn_shared", [fvi("X", [1, 4, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, a, b1] + bn_inits(r, "bn0", 4) + bn_inits(r, "bn1", 4)))


# ---------------------------------------------------------------------------
# sample.onnx: for `make run`
# ---------------------------------------------------------------------------

@model("sample", path="sample.onnx")
def _(r):
    """Small realistic model: Conv (W, B from Constant nodes) -> Identity ->
    Relu -> Y, a dead Sigmoid branch off the Conv and an unused initializer.
    Expect with the default passes: no Constant, no Identity, no dead_sig,
    no unused_scale; W and B initializers; output Y unchanged."""
    w = raw_tensor("w_value", rand(r, 8, 3, 3, 3))
    b = raw_tensor("b_value", rand(r, 8))
    unused = raw_tensor("unused_scale", rand(r, 8))
    return finish(graph(
        [const("const_w", "W", value=w),
         const("const_b", "B", value=b),
         node("Conv", ["X", "W", "B"], ["conv_out"], "conv0",
              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Identity", ["conv_out"], ["id_out"], "id0"),
         node("Sigmoid", ["conv_out"], ["dead_out"], "dead_sig"),
         node("Relu", ["id_out"], ["Y"], "relu0")],
        "sample", [fvi("X", [1, 3, 16, 16])], [fvi("Y", [1, 8, 16, 16])],
        inits=[unused]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    "sample": dict(default=[
        NC, NI, removed("dead_sig", "id0"), kept("conv0", "relu0"),
        init_removed("unused_scale"), fed_by_param("conv0", 1, "const_w"),
        fed_by_param("conv0", 2, "const_b"), node_input("relu0", 0, "conv_out")],
        report_json=True),

    # -- several rules in one model (default pipeline only) --------------------
    "mixed_loop_body": dict(default=[
        NC, NBN, NADD, op_count("Identity", 1), kept("loop0", "body_conv", "conv_out",
                                                   "body_id_cond"),
        removed("body_id", "body_bn", "body_const", "body_add"), ONCE]),
    "mixed_conv_add_bn_shared": dict(default=[
        NBN, NADD, op_count("Conv", 2), op_count("Relu", 1),
        node_output("conv0", 0, "b0"), node_input("relu0", 0, "b0"),
        node_output("conv1", 0, "Y"), folded("conv0", add="add0", bn="bn0"),
        folded("conv1", bn="bn1"), ONCE, init_count(4)]),
}
