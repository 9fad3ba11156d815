"""split-params: give every use of a shared initializer its own copy
(formatter/split_params.c).

Its test models (builders registered with @model; testdata/split_params/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import numpy_helper

from passes.build import (finish, fvi, graph, if_node, Models, node, rand, raw_tensor,
                          sparse_dense, sparse_tensor, vi)
from passes.common import (folded, graph_input_kept, init_count, init_kept, initializer, kept,
                           need_node, no_op, node_input, ONCE, op_count, param_uses, same_array,
                           sparse_inits, sparse_kept, unchanged)

PASS = "split-params"

MODELS = Models("split_params", "splitparams")
model = MODELS.model


# ---------------------------------------------------------------------------
# split-params: a parameter with more than one use gets one copy per use
# ---------------------------------------------------------------------------

@model("two_convs")
def _(r):
    """conv0 and conv1 both read W and B (X -> conv0 -> relu0 -> conv1 -> Y).
    Expect: conv0 keeps W and B; conv1 reads distinct copies (same dtype,
    dims, values); 4 initializers, none used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Relu", ["c0"], ["r"], "relu0"),
         node("Conv", ["r", "W", "B"], ["Y"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "splitparams_two_convs", [fvi("X", [1, 4, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b]))


@model("same_node")
def _(r):
    """Y = Mul(Sum(X, s, s), s): sum0 reads s twice, mul0 once (3 uses).
    Expect: sum0 input 1 keeps s; sum0 input 2 and mul0 input 1 read
    distinct copies; 3 initializers, none used twice."""
    s = raw_tensor("s", rand(r, 2, 3))
    return finish(graph(
        [node("Sum", ["X", "s", "s"], ["a"], "sum0"),
         node("Mul", ["a", "s"], ["Y"], "mul0")],
        "splitparams_same_node", [fvi("X", [2, 3])], [fvi("Y", [2, 3])], inits=[s]))


@model("main_and_if")
def _(r):
    """Main-graph initializer W is read by conv0 (main graph, first) and by
    then_conv inside the If then branch (outer-scope use).
    Expect: conv0 keeps W; then_conv reads a distinct copy in scope (in the
    branch or the main graph); no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    then_g = graph([node("Conv", ["c", "W"], ["then_out"], "then_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                   "then_branch", [], [fvi("then_out", [1, 4, 6, 6])])
    else_g = graph([node("Relu", ["c"], ["else_out"], "else_relu")],
                   "else_branch", [], [fvi("else_out", [1, 4, 6, 6])])
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         if_node("if0", "cond", ["Y"], then_g, else_g)],
        "splitparams_main_and_if", [vi("cond", TP.BOOL, []), fvi("X", [1, 4, 6, 6])],
        [fvi("Y", [1, 4, 6, 6])], inits=[w]))


@model("if_branches")
def _(r):
    """Main-graph initializer K is read only inside the If: by then_add and
    by else_mul (two subgraph uses).
    Expect: the two uses read distinct initializers equal to K, one of them
    still called K."""
    k = raw_tensor("K", rand(r, 2, 3))
    then_g = graph([node("Add", ["X", "K"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Mul", ["X", "K"], ["else_out"], "else_mul")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "splitparams_if_branches", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])], inits=[k]))


@model("initializer_input")
def _(r):
    """Old IR style (ir 3, opset 9): initializer W_in is also a graph input
    (a user may override it), read by add0 and mul0.
    Expect: not split (a copy would ignore an overriding feed): both still
    read W_in, 1 initializer; a warning naming W_in."""
    w = raw_tensor("W_in", rand(r, 2, 3))
    return finish(graph(
        [node("Add", ["X", "W_in"], ["a"], "add0"),
         node("Mul", ["a", "W_in"], ["Y"], "mul0")],
        "splitparams_initializer_input", [fvi("X", [2, 3]), fvi("W_in", [2, 3])],
        [fvi("Y", [2, 3])], inits=[w]), opset=9, ir=3)


@model("sparse", full_check=False)
def _(r):
    """Sparse initializers: S [2,3] read by add0 (X + S) and mul0 (a * S);
    U read by nothing.
    Expect: S split like a dense initializer, the copy sparse too (same
    values, indices and dims, under a new name): every use reads its own
    sparse initializer; S itself keeps its bytes.  Default: U removed by
    isolated."""
    return finish(graph(
        [node("Add", ["X", "S"], ["a"], "add0"), node("Mul", ["a", "S"], ["Y"], "mul0")],
        "splitparams_sparse", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        sparse=[sparse_tensor("S", sparse_dense(r, 2, 3)),
                sparse_tensor("U", sparse_dense(r, 4))]))


@model("single_uses")
def _(r):
    """Every initializer (W, B, M) has exactly one use.
    Expect: nothing changes: 3 initializers with their names and values."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    m = raw_tensor("M", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Mul", ["c", "M"], ["Y"], "mul0")],
        "splitparams_single_uses", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, m]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def sparse_values(t):
    """The dense numpy value of a SparseTensorProto (linear or [NNZ, rank]
    indices), computed here from its parts."""
    dense = np.zeros(int(np.prod(t.dims)), numpy_helper.to_array(t.values).dtype)
    idx = numpy_helper.to_array(t.indices).astype(np.int64)
    if idx.ndim == 2:
        idx = np.ravel_multi_index(idx.T, list(t.dims))
    dense[idx] = numpy_helper.to_array(t.values)
    return dense.reshape(list(t.dims))


def sparse_removed(name):
    def fn(inp, out):
        return "sparse initializer %s still there" % name \
            if name in sparse_inits(out.graph) else None
    return ("sparse initializer %s removed" % name, fn)


def sparse_split(name, keeper):
    """Every node input that read main-graph sparse initializer `name` reads
    its own sparse initializer holding the same dense value; keeper (node,
    input index) still reads `name`."""
    def fn(inp, out):
        exp = sparse_values(sparse_inits(inp.graph)[name])
        got = sparse_inits(out.graph)
        readers = [(n.name, i) for n in inp.graph.node for i, x in enumerate(n.input)
                   if x == name]
        seen, errs = set(), []
        for node_name, i in readers:
            _, n = need_node(out, node_name)
            x = n.input[i]
            if x not in got:
                errs.append("%s input %d reads %s, not a sparse initializer" % (node_name, i, x))
                continue
            err = same_array(sparse_values(got[x]), exp)
            if err:
                errs.append("%s input %d (%s): %s" % (node_name, i, x, err))
            if x in seen:
                errs.append("%s shared" % x)
            seen.add(x)
        _, k = need_node(out, keeper[0])
        if k.input[keeper[1]] != name:
            errs.append("%s input %d reads %s, expected %s" % (keeper + (k.input[keeper[1]], name)))
        return "; ".join(errs) or None
    return ("each use of sparse %s has its own sparse copy" % name, fn)


def split_copies(name, keeper=None):
    """Each use (node, input index) of the main-graph initializer `name` in
    the input reads, in the output, its own initializer (in scope) with the
    same dtype, dims and values; one of them is still called `name`: the
    use `keeper` = (node, index) when given."""
    def fn(inp, out):
        exp = numpy_helper.to_array(initializer(inp.graph, name))
        uses = [u for u, k, _ in param_uses(inp) if k == ("main", name)]
        if len(uses) < 2:
            return "test bug: %s has %d uses in the input" % (name, len(uses))
        got = {u: (k, t) for u, k, t in param_uses(out)}
        errs, keys = [], []
        for u in uses:
            if u not in got:
                errs.append("%s input %d does not read an initializer" % u)
                continue
            k, t = got[u]
            err = same_array(numpy_helper.to_array(t), exp)
            if err:
                errs.append("%s input %d reads %s: %s" % (u[0], u[1], k[1], err))
            keys.append(k)
        if len(set(keys)) != len(keys):
            errs.append("uses share initializers: %s" % [k[1] for k in keys])
        if keeper is not None:
            if keeper in got and got[keeper][0] != ("main", name):
                errs.append("%s input %d reads %s, expected %s (the first use keeps the name)"
                            % (keeper[0], keeper[1], got[keeper][0][1], name))
        elif ("main", name) not in keys:
            errs.append("no use reads %s any more" % name)
        return "; ".join(errs) or None
    return ("each use of %s has its own copy" % name, fn)


@model("qdq_shared_scale")
def _(r):
    """X -> QuantizeLinear(s, z) -> DequantizeLinear(s, z) -> Relu -> Y: the pair reads one
    scale and one zero point on purpose. Expect: both kept shared (2 initializers)."""
    inits = [raw_tensor("s", np.array(0.05, np.float32)), raw_tensor("z", np.array(0, np.uint8))]
    return finish(graph(
        [node("QuantizeLinear", ["X", "s", "z"], ["q"], "q0"),
         node("DequantizeLinear", ["q", "s", "z"], ["d"], "dq0"),
         node("Relu", ["d"], ["Y"], "relu0")],
        "split_qdq_shared_scale", [fvi("X", [2, 3])], [fvi("Y", [2, 3])], inits=inits))


SPECS = {
    "qdq_shared_scale": dict(both=[init_count(2), init_kept("s"), init_kept("z")],
                             quiet="a Q/DQ pair's scale is shared on purpose"),
    # -- split-params ------------------------------------------------------
    "two_convs": dict(both=[
        op_count("Conv", 2), split_copies("W", ("conv0", 1)), split_copies("B", ("conv0", 2)),
        ONCE, init_count(4)]),
    "same_node": dict(both=[
        kept("sum0", "mul0"), split_copies("s", ("sum0", 1)), ONCE, init_count(3)]),
    "main_and_if": dict(both=[
        kept("conv0", "then_conv", "else_relu"), split_copies("W", ("conv0", 1)), ONCE,
        init_count(2)]),
    "if_branches": dict(both=[
        kept("then_add", "else_mul"), split_copies("K"), ONCE, init_count(2)]),
    "initializer_input": dict(
        both=[node_input("add0", 1, "W_in"), node_input("mul0", 1, "W_in"),
              graph_input_kept("W_in"), init_kept("W_in"), init_count(1)],
        warns=["W_in"]),
    "sparse": dict(
        both=[kept("add0", "mul0"), sparse_split("S", ("add0", 1)), init_count(0)],
        single=[sparse_kept("U")], default=[sparse_removed("U")],
        plain_checker="python3-onnx 1.12 types sparse initializers as sparse_tensor"),
    "single_uses": dict(single=[
        unchanged("conv0", "mul0"), init_kept("W"), init_kept("B"), init_kept("M"),
        init_count(3)], default=[no_op("Mul"), folded("conv0", mul="mul0")]),  # fuse-conv-scale,
}
