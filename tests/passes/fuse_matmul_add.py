"""fuse-matmul-add: MatMul(rank-2 x, constant W) + Add(constant b) to Gemm
(formatter/fuse_matmul_add.c).

Its test models (builders registered with @model; testdata/fuse_matmul_add/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, fvi, graph, if_node, matmul_add, Models, node, rand, raw_tensor,
                          vi)
from passes.common import (attr, find_scoped, made_by, NADD, NMM, node_param, op_count, same_array,
                           unchanged)

PASS = "fuse-matmul-add"

MODELS = Models("fuse_matmul_add", "fusemm", output_types=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/fuse_matmul_add/)
# ---------------------------------------------------------------------------

@model("rank2")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect: mm0 and add0 become
    one Gemm(X, W, B) writing Y (alpha, beta 1, no transposes)."""
    return matmul_add("fusemm_rank2", (3, 4), rand(r, 4, 5), rand(r, 5))


@model("row_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [1,5], m) (B first).
    Expect: Gemm(X, W, B)."""
    return matmul_add("fusemm_row_bias", (3, 4), rand(r, 4, 5), rand(r, 1, 5), add_first=True)


@model("scalar_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B scalar). Expect: Gemm(X, W, B)."""
    return matmul_add("fusemm_scalar_bias", (3, 4), rand(r, 4, 5), np.array(0.25, np.float32))


@model("rank3")
def _(r):
    """X [2,3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect: kept (Gemm is 2-D)."""
    return matmul_add("fusemm_rank3", (2, 3, 4), rand(r, 4, 5), rand(r, 5))


@model("full_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [3,5]): not one value per column.
    Expect: kept."""
    return matmul_add("fusemm_full_bias", (3, 4), rand(r, 4, 5), rand(r, 3, 5))


@model("weight_input")
def _(r):
    """MatMul(X, W) with W a graph input (not constant) -> Add(B).
    Expect: kept."""
    return matmul_add("fusemm_weight_input", (3, 4), rand(r, 4, 5), rand(r, 5), w_input=True)


@model("two_consumers")
def _(r):
    """MatMul output m read by Add and by Relu -> Z. Expect: kept."""
    return matmul_add("fusemm_two_consumers", (3, 4), rand(r, 4, 5), rand(r, 5), extra=True)


@model("in_if")
def _(r):
    """Inside the If then branch: MatMul(X, W) -> Add(Bt) (W from the main
    graph). Expect: then_mm and then_add become a Gemm writing then_out."""
    then_g = graph([node("MatMul", ["X", "W"], ["tm"], "then_mm"),
                    node("Add", ["tm", "Bt"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", None)],
                   inits=[raw_tensor("Bt", rand(r, 5))])
    else_g = graph([node("MatMul", ["X", "W"], ["else_out"], "else_mm")],
                   "else_branch", [], [fvi("else_out", None)])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusemm_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [3, 4])], [fvi("Y", None)],
        inits=[raw_tensor("W", rand(r, 4, 5))]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def gemm_of(mm, add):
    """MatMul `mm` and Add `add` became one Gemm(x, W, b) writing add's
    output (alpha, beta 1, no transposes), in the same graph."""
    def fn(inp, out):
        _, mn = find_scoped(inp, mm)
        _, an = find_scoped(inp, add)
        ichain = find_scoped(inp, mm)[0]
        w = node_param(ichain, mn, 1)
        b = node_param(ichain, an, [x for x in an.input].index(
            [x for x in an.input if x != mn.output[0]][0]))
        chain, g = made_by(out, an.output[0])
        exp = ["Gemm", mn.input[0], 3, 1.0, 1.0, 0, 0]
        got = [g.op_type, g.input[0], len(g.input), attr(g, "alpha", 1.0), attr(g, "beta", 1.0),
               attr(g, "transA", 0), attr(g, "transB", 0)]
        if got != exp:
            return "%s is written by %s, expected %s" % (an.output[0], got, exp)
        err = same_array(node_param(chain, g, 1), w) or same_array(node_param(chain, g, 2), b)
        if err:
            return "Gemm W or C: %s" % err
        where = find_scoped(inp, mm)[0][-1][0]
        return None if chain[-1][0] == where else "the Gemm is in %s, not %s" % (
            chain[-1][0], where)
    return ("%s+%s became a Gemm" % (mm, add), fn)


SPECS = {
    # -- fuse-matmul-add -----------------------------------------------------
    "rank2": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "row_bias": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "scalar_bias": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "rank3": dict(both=[unchanged("mm0", "add0")]),
    "full_bias": dict(both=[unchanged("mm0", "add0")]),
    "weight_input": dict(both=[unchanged("mm0", "add0")]),
    "two_consumers": dict(both=[unchanged("mm0", "add0", "relu0")]),
    "in_if": dict(both=[op_count("MatMul", 1), gemm_of("then_mm", "then_add"),
                               unchanged("else_mm")]),
}
