"""resize: Resize-10 and Upsample to Resize-11; raises the opset to 11 (formatter/resize.c).

Its test models (builders registered with @model; testdata/resize/<case>.onnx,
run by tests/test_legacy.py) and what test_legacy must see (EXPECT)."""
import numpy as np

from passes.build import (dynamic_scales, finish_at, fvi, init, Models, node, out_dims)

MODELS = Models("resize", "resize", one_line_doc=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# resize: Resize-10 (X, scales) -> Resize-11 (X, roi, scales) with Resize-10's numbers
# ---------------------------------------------------------------------------

def _resize_model(name, mode, scales, shape=(1, 2, 5, 7)):
    shape = list(shape)
    return finish_at(name, 10,
                     [node("Resize", ["x", "scales"], ["y"], "resize0", mode=mode)],
                     [fvi("x", shape)], [fvi("y", out_dims(shape, scales))],
                     [init("scales", np.array(scales, np.float32))])


@model("nearest_up")
def _(r):
    """Resize-10 nearest, scales [1,1,2,1.5] (onnxruntime: floor(x_out / scale)), opset 10.
    Expect: opset 11; resize0 inputs [x, roi, scales]; asymmetric, nearest_mode floor."""
    return _resize_model("resize_nearest_up", "nearest", [1, 1, 2.0, 1.5])


@model("nearest_down")
def _(r):
    """Resize-10 nearest, scales [1,1,0.5,0.6] (onnxruntime: ceil(x_out / scale)), opset 10.
    Expect: opset 11; resize0 inputs [x, roi, scales]; asymmetric, nearest_mode ceil."""
    return _resize_model("resize_nearest_down", "nearest", [1, 1, 0.5, 0.6])


@model("nearest_mixed")
def _(r):
    """Resize-10 nearest, scales [1,1,1.5,0.6]: one axis up (floor), one down (ceil); no single
    Resize-11 nearest_mode reproduces it.
    Expect either: converted (e.g. split into two Resize-11) computing the same, or nothing
    legacy rewritten and a warning naming Resize."""
    return _resize_model("resize_nearest_mixed", "nearest", [1, 1, 1.5, 0.6])


@model("linear_up")
def _(r):
    """Resize-10 linear, scales [1,1,2,1.5], opset 10.
    Expect: opset 11; resize0 inputs [x, roi, scales]; coordinate_transformation_mode asymmetric."""
    return _resize_model("resize_linear_up", "linear", [1, 1, 2.0, 1.5])


@model("linear_down")
def _(r):
    """Resize-10 linear, scales [1,1,0.5,0.6], opset 10.
    Expect: opset 11; resize0 asymmetric."""
    return _resize_model("resize_linear_down", "linear", [1, 1, 0.5, 0.6])


@model("linear_dynamic")
def _(r):
    """Resize-10 linear whose scales are computed at run time (1, 1, 0.5+|s|), opset 10.
    Expect: opset 11; resize0 reads the same scales tensor, roi added, asymmetric."""
    pre, inits = dynamic_scales("sc", 0.5)
    return finish_at("resize_linear_dynamic", 10,
                     pre + [node("Resize", ["x", "sc_scales"], ["y"], "resize0", mode="linear")],
                     [fvi("x", [1, 2, 6, 5]), fvi("s", [2])], [fvi("y", [1, 2, "h", "w"])], inits)


@model("nearest_dynamic")
def _(r):
    """Resize-10 nearest with run-time scales (1, 1, 0.5+|s|): floor (up) or ceil (down) can't be
    chosen statically; the test inputs scale one axis up and one down.
    Expect either: converted and computing the same, or nothing legacy rewritten and a warning
    naming Resize."""
    pre, inits = dynamic_scales("sc", 0.5)
    return finish_at("resize_nearest_dynamic", 10,
                     pre + [node("Resize", ["x", "sc_scales"], ["y"], "resize0", mode="nearest")],
                     [fvi("x", [1, 2, 6, 5]), fvi("s", [2])], [fvi("y", [1, 2, "h", "w"])], inits)


# what tests/test_legacy.py must see (see its EXPECT): every other model is
# converted
EXPECT = {
    "nearest_mixed": ('either', 'Resize'),
    "nearest_dynamic": ('either', 'Resize'),
}
