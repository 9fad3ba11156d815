"""dedup-initializers: merge initializers of equal type, shape and bytes
(formatter/dedup_initializers.c; off by default).

Its test models (builders registered with @model; testdata/dedup_initializers/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np

from passes.build import finish, fvi, graph, Models, node, rand, raw_tensor, with_default_input
from passes.common import init_count, init_kept, node_input

PASS = "dedup-initializers"

MODELS = Models("dedup_initializers", "dedup")
model = MODELS.model


def two_weights(name, a, b, b_name="B"):
    """X -> add0(X, A) -> mul0(., B) -> Y."""
    return finish(graph(
        [node("Add", ["X", "A"], ["s"], "add0"), node("Mul", ["s", b_name], ["Y"], "mul0")],
        name, [fvi("X", [4, 300])], [fvi("Y", [4, 300])],
        inits=[raw_tensor("A", a), raw_tensor(b_name, b)]))


@model("equal")
def _(r):
    """A and B hold the same 1200 floats. Expect (pass alone): B gone, mul0 reads A."""
    w = rand(r, 4, 300)
    return two_weights("dedup_equal", w, w.copy())


@model("other_shape")
def _(r):
    """The same 300 floats as A [300] and as B [1,300]: other shapes. Expect: both kept."""
    w = rand(r, 300)
    return two_weights("dedup_other_shape", w, w.reshape(1, 300).copy())


@model("other_bytes")
def _(r):
    """A and B differ in one element. Expect: both kept."""
    w = rand(r, 4, 300)
    v = w.copy()
    v[3, 299] += 1
    return two_weights("dedup_other_bytes", w, v)


@model("input_default")
def _(r):
    """B equals A but is also a graph input (a default a caller may override).
    Expect: both kept."""
    w = rand(r, 4, 300)
    return with_default_input(two_weights("dedup_input_default", w, w.copy()), "B")


SPECS = {
    "equal": dict(single=[init_count(1), node_input("mul0", 1, "A"), init_kept("A")],
                  default=[init_count(2)]),
    "other_shape": dict(both=[init_count(2)]),
    "other_bytes": dict(both=[init_count(2)]),
    "input_default": dict(both=[init_count(2)]),
}
