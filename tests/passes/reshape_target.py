"""reshape-target: a Reshape target known but for one size becomes a constant with -1
(formatter/reshape_target.c).

Its test models (builders registered with @model; testdata/reshape_target/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np

from passes.build import finish, fvi, graph, i64, Models, node
from passes.common import folded_input, kept, no_op, removed

PASS = "reshape-target"

MODELS = Models("reshape_target", "rt")
model = MODELS.model


def batch_reshape(name, xshape, yshape, known, dims=(0,), opset=13, **attrs):
    """Reshape(X, Concat(Unsqueeze(Gather(Shape(X), d)) for d in dims, known)) -> Y."""
    nodes = [node("Shape", ["X"], ["s"], "shape0")]
    parts = []
    for k, d in enumerate(dims):
        nodes += [node("Gather", ["s", "i%d" % k], ["g%d" % k], "gather%d" % k, axis=0),
                  node("Unsqueeze", ["g%d" % k, "ax"], ["u%d" % k], "unsq%d" % k)]
        parts.append("u%d" % k)
    nodes += [node("Concat", parts + ["known"], ["target"], "cat0", axis=0),
              node("Reshape", ["X", "target"], ["Y"], "reshape0", **attrs)]
    inits = [i64("i%d" % k, np.array(d)) for k, d in enumerate(dims)]
    inits += [i64("ax", [0]), i64("known", known)]
    return finish(graph(nodes, name, [fvi("X", list(xshape))], [fvi("Y", list(yshape))],
                        inits=inits), opset=opset)


@model("batch")
def _(r):
    """X [N, 4, 6] reshaped to [Shape(X)[0], 2, 12]. Expect: reshape0 reads [-1, 2, 12];
    the Shape chain gone (default run)."""
    return batch_reshape("rt_batch", ("N", 4, 6), ("N", 2, 12), [2, 12])


@model("two_open")
def _(r):
    """X [N, T, 4] reshaped to [Shape(X)[0], Shape(X)[1], 2, 2]: two sizes open.
    Expect: kept."""
    return batch_reshape("rt_two_open", ("N", "T", 4), ("N", "T", 2, 2), [2, 2], dims=(0, 1))


@model("allowzero")
def _(r):
    """As batch, at opset 14 with allowzero=1 (a 0 in the target would mean 0). Expect:
    kept."""
    return batch_reshape("rt_allowzero", ("N", 4, 6), ("N", 2, 12), [2, 12], opset=14,
                         allowzero=1)


SPECS = {
    "batch": dict(both=[folded_input("reshape0", 1, lambda I: np.array([-1, 2, 12]))],
                  default=[no_op("Shape"), no_op("Concat")]),
    "two_open": dict(both=[kept("shape0", "cat0", "reshape0")]),
    "allowzero": dict(both=[kept("shape0", "cat0", "reshape0")]),
}
