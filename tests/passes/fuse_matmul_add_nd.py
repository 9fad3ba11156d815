"""fuse-matmul-add-nd: the same for rank > 2 x: Reshape -> Gemm -> Reshape (static shape)
(formatter/fuse_matmul_add.c).

Its test models (builders registered with @model; testdata/fuse_matmul_add_nd/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np

from passes.build import (matmul_add, Models, rand)
from passes.common import (find_scoped, made_by, NADD, NMM, node_param, same_array, unchanged)

PASS = "fuse-matmul-add-nd"

MODELS = Models("fuse_matmul_add_nd", "fusemmnd", output_types=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/fuse_matmul_add_nd/)
# ---------------------------------------------------------------------------

@model("rank3")
def _(r):
    """X [2,3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect with
    fuse-matmul-add-nd: Reshape(X, [-1,4]) -> Gemm(W, B) -> Reshape([2,3,5])
    writing Y; by default (off): kept."""
    return matmul_add("fusemmnd_rank3", (2, 3, 4), rand(r, 4, 5), rand(r, 5))


@model("symbolic_batch")
def _(r):
    """X ['N',3,2,4] (one unknown dim) -> MatMul(W [4,5]) -> Add(B [1,5]).
    Expect with fuse-matmul-add-nd: Reshape [-1,4] -> Gemm -> Reshape
    [-1,3,2,5]."""
    return matmul_add("fusemmnd_symbolic_batch", ("N", 3, 2, 4), rand(r, 4, 5), rand(r, 1, 5))


@model("two_unknown")
def _(r):
    """X ['N','T',4] (two unknown dims) -> MatMul(W [4,5]) -> Add(B [5]).
    Expect: kept (the output shape cannot be written)."""
    return matmul_add("fusemmnd_two_unknown", ("N", "T", 4), rand(r, 4, 5), rand(r, 5))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def gemm_nd(mm, add, shape):
    """MatMul `mm` + Add `add` became Reshape(x, [-1, K]) -> Gemm(W, b) ->
    Reshape(shape) writing add's output; W and b hold the input's values."""
    def fn(inp, out):
        ichain, mn = find_scoped(inp, mm)
        _, an = find_scoped(inp, add)
        w = node_param(ichain, mn, 1)
        b = node_param(ichain, an, list(an.input).index(
            [x for x in an.input if x != mn.output[0]][0]))
        chain, r2 = made_by(out, an.output[0])
        _, g = made_by(out, r2.input[0])
        _, r1 = made_by(out, g.input[0])
        ops = [r1.op_type, g.op_type, r2.op_type, r1.input[0]]
        if ops != ["Reshape", "Gemm", "Reshape", mn.input[0]]:
            return "%s is made by %s" % (an.output[0], ops)
        errs = [e for e in (
            same_array(node_param(chain, r1, 1), np.array([-1, w.shape[0]], np.int64)),
            same_array(node_param(chain, r2, 1), np.array(shape, np.int64)),
            same_array(node_param(chain, g, 1), w), same_array(node_param(chain, g, 2), b)) if e]
        return "; ".join(errs) or None
    return ("%s+%s became Reshape-Gemm-Reshape" % (mm, add), fn)


SPECS = {
    "rank3": dict(default=[unchanged("mm0", "add0")],
                           single=[NMM, NADD, gemm_nd("mm0", "add0", [2, 3, 5])]),
    "symbolic_batch": dict(default=[unchanged("mm0", "add0")],
                                    single=[NMM, NADD, gemm_nd("mm0", "add0", [-1, 3, 2, 5])]),
    "two_unknown": dict(both=[unchanged("mm0", "add0")]),
}
