"""slice: Slice-1 (attributes) to the input form; raises the opset to 10 (formatter/slice.c).

Its test models (builders registered with @model; testdata/slice/<case>.onnx,
run by tests/test_legacy.py) and what test_legacy must see (EXPECT)."""

from passes.build import (finish_at, fvi, INT32_MAX, INT64_MAX, Models, node)

MODELS = Models("slice", "slice", one_line_doc=True)
model = MODELS.model


INT32_MIN = -2 ** 31


# ---------------------------------------------------------------------------
# slice: Slice-1 (starts/ends/axes attributes) -> Slice-11 (int64 inputs)
# ---------------------------------------------------------------------------

@model("axes")
def _(r):
    """Slice-1 with axes [2, 0] (not sorted), opset 9.
    Expect: opset 11; slice0 inputs [x, starts [1,0], ends [3,1], axes [2,0]] int64."""
    return finish_at("slice_axes", 9,
                     [node("Slice", ["x"], ["y"], "slice0", starts=[1, 0], ends=[3, 1], axes=[2, 0])],
                     [fvi("x", [2, 3, 5])], [fvi("y", [1, 3, 2])])


@model("noaxes")
def _(r):
    """Slice-1 without axes: they default to [0, 1] (not to the last axes), opset 8 (IR 3).
    Expect: opset 11; slice0 starts [1,0], ends [2,2], axes absent or [0,1]."""
    return finish_at("slice_noaxes", 8,
                     [node("Slice", ["x"], ["y"], "slice0", starts=[1, 0], ends=[2, 2])],
                     [fvi("x", [3, 4, 5])], [fvi("y", [1, 2, 5])])


@model("negative")
def _(r):
    """Slice-1 with negative starts/ends, one start below -dim (clamped), opset 9.
    Expect: opset 11; slice0 starts [-3,-100], ends [-1,-2], axes [1,2], values unchanged."""
    return finish_at("slice_negative", 9,
                     [node("Slice", ["x"], ["y"], "slice0", starts=[-3, -100], ends=[-1, -2],
                        axes=[1, 2])],
                     [fvi("x", [2, 4, 6])], [fvi("y", [2, 2, 4])])


@model("huge_ends")
def _(r):
    """Slice-1 with huge ends (INT64_MAX, INT32_MAX) and a start of INT32_MIN, opset 7 (IR 3).
    Expect: opset 11; slice0 starts [1,-2147483648,2], ends [2**63-1, 2147483647, 2**63-1],
    axes [0,1,2] (defaulted: absent or explicit) as int64, exactly these values."""
    return finish_at("slice_huge_ends", 7,
                     [node("Slice", ["x"], ["y"], "slice0", starts=[1, INT32_MIN, 2],
                        ends=[INT64_MAX, INT32_MAX, INT64_MAX])],
                     [fvi("x", [3, 4, 5])], [fvi("y", [2, 4, 3])])


# what tests/test_legacy.py must see (see its EXPECT): every other model is
# converted
EXPECT = {}
