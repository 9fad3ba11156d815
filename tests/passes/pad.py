"""pad: Pad-2 (attributes) to the input form; raises the opset to 11 (formatter/pad.c).

Its test models (builders registered with @model; testdata/pad/<case>.onnx,
run by tests/test_legacy.py) and what test_legacy must see (EXPECT)."""

from passes.build import (F16, finish_at, fvi, Models, node, vi)

MODELS = Models("pad", "pad", one_line_doc=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# pad: Pad-2 (pads/mode/value attributes) -> Pad-11 (data, pads int64, constant_value)
# ---------------------------------------------------------------------------

@model("constant")
def _(r):
    """Pad-2 mode=constant value=0.75, asymmetric pads, opset 10.
    Expect: opset 11; pad0 inputs [x, pads int64 [0,1,2,0,0,2,1,3], value float32 0.75],
    mode constant."""
    return finish_at("pad_constant", 10,
                     [node("Pad", ["x"], ["y"], "pad0", mode="constant", value=0.75,
                        pads=[0, 1, 2, 0, 0, 2, 1, 3])],
                     [fvi("x", [1, 2, 3, 4])], [fvi("y", [1, 5, 6, 7])])


@model("constant_f16")
def _(r):
    """Pad-2 with value=-1.5 (mode defaulted) on float16, opset 9.
    Expect: opset 11; pad0 constant_value a float16 scalar -1.5."""
    return finish_at("pad_constant_f16", 9,
                     [node("Pad", ["x"], ["y"], "pad0", value=-1.5, pads=[1, 0, 0, 2])],
                     [vi("x", F16, [3, 4])], [vi("y", F16, [4, 6])])


@model("default")
def _(r):
    """Pad-2 with only pads (mode constant and value 0 by default), opset 7 (IR 3).
    Expect: opset 11; pad0 inputs [x, pads] with constant_value absent or 0."""
    return finish_at("pad_default", 7,
                     [node("Pad", ["x"], ["y"], "pad0", pads=[0, 0, 1, 1, 0, 0, 1, 1])],
                     [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 5, 5])])


@model("reflect")
def _(r):
    """Pad-2 mode=reflect, opset 9.
    Expect: opset 11; pad0 mode reflect, pads int64 [0,0,2,1,0,0,1,2]."""
    return finish_at("pad_reflect", 9,
                     [node("Pad", ["x"], ["y"], "pad0", mode="reflect",
                        pads=[0, 0, 2, 1, 0, 0, 1, 2])],
                     [fvi("x", [1, 2, 4, 5])], [fvi("y", [1, 2, 7, 8])])


@model("edge")
def _(r):
    """Pad-2 mode=edge, opset 8 (IR 3).
    Expect: opset 11; pad0 mode edge, pads int64 [0,0,1,3,0,0,2,0]."""
    return finish_at("pad_edge", 8,
                     [node("Pad", ["x"], ["y"], "pad0", mode="edge",
                        pads=[0, 0, 1, 3, 0, 0, 2, 0])],
                     [fvi("x", [1, 2, 3, 4])], [fvi("y", [1, 2, 6, 7])])


@model("negative")
def _(r):
    """Pad-2 constant value=0.5 with a negative pad (removes a column), opset 10.
    Expect: opset 11; pad0 pads int64 [0,-1,1,1] kept as they are (Pad-11 allows negative pads),
    constant_value float32 0.5."""
    return finish_at("pad_negative", 10,
                     [node("Pad", ["x"], ["y"], "pad0", value=0.5, pads=[0, -1, 1, 1])],
                     [fvi("x", [3, 4])], [fvi("y", [4, 4])])


# what tests/test_legacy.py must see (see its EXPECT): every other model is
# converted
EXPECT = {}
