"""clip: Clip-6 (attributes) to the input form; raises the opset to 11 (formatter/clip.c).

Its test models (builders registered with @model; testdata/clip/<case>.onnx,
run by tests/test_legacy.py) and what test_legacy must see (EXPECT)."""

from passes.build import (F16, finish_at, FLOAT, fvi, Models, node, vi)

MODELS = Models("clip", "clip", one_line_doc=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# clip: Clip-6 (min/max attributes) -> Clip-11 (min/max scalar inputs of X's dtype)
# ---------------------------------------------------------------------------

def _clip_model(name, opset, elem, attrs):
    return finish_at(name, opset, [node("Clip", ["x"], ["y"], "clip0", **attrs)],
                     [vi("x", elem, [2, 3, 4])], [vi("y", elem, [2, 3, 4])])


@model("both_f32")
def _(r):
    """Clip-6 min=-0.3 max=0.4 on float, opset 9.
    Expect: opset 11; clip0 inputs [x, min, max], float32 scalar initializers -0.3 and 0.4."""
    return _clip_model("clip_both_f32", 9, FLOAT, dict(min=-0.3, max=0.4))


@model("after_erf_f16")
def _(r):
    """Erf -> Clip-6 min=-0.5 max=0.5 on float16, opset 9, no value_info: the Clip's input type
    is known only by inference (Erf keeps its input's type).
    Expect: opset 11; clip0 inputs [e, min, max], float16 scalar initializers."""
    return finish_at("clip_after_erf_f16", 9,
                     [node("Erf", ["x"], ["e"], "erf0"), node("Clip", ["e"], ["y"], "clip0", min=-0.5, max=0.5)],
                     [vi("x", F16, [2, 3, 4])], [vi("y", F16, [2, 3, 4])])


@model("after_chain")
def _(r):
    """Clip-6 min=0 max=6 after 300 Sigmoid/Tanh nodes on float, opset 9, no value_info: the type
    comes through the whole chain.
    Expect: opset 11; clip0 inputs [t299, min, max], float32 scalar initializers."""
    nodes, prev = [], "x"
    for i in range(300):
        nodes.append(node("Sigmoid" if i % 2 else "Tanh", [prev], ["t%d" % i], "act%d" % i))
        prev = "t%d" % i
    nodes.append(node("Clip", [prev], ["y"], "clip0", min=0.0, max=6.0))
    return finish_at("clip_after_chain", 9, nodes, [fvi("x", [2, 3])], [fvi("y", [2, 3])])


@model("min_f32")
def _(r):
    """Clip-6 with only min=-0.25 on float, opset 10.
    Expect: opset 11; clip0 inputs [x, min] (max absent), min a float32 scalar -0.25."""
    return _clip_model("clip_min_f32", 10, FLOAT, dict(min=-0.25))


@model("max_f32")
def _(r):
    """Clip-6 with only max=0.5 on float, opset 8 (IR 3).
    Expect: opset 11; clip0 inputs [x, '', max], max a float32 scalar 0.5."""
    return _clip_model("clip_max_f32", 8, FLOAT, dict(max=0.5))


@model("nobounds_f32")
def _(r):
    """Clip-6 without min/max (clip_nb) next to a Clip-6 with max (clip0), opset 7 (IR 3).
    Expect: opset 11; clip_nb inputs [x] only (no bounds invented); clip0 inputs [.., '', max]."""
    return finish_at("clip_nobounds_f32", 7,
                     [node("Clip", ["x"], ["t"], "clip_nb"),
                   node("Clip", ["t"], ["y"], "clip0", max=0.5)],
                     [fvi("x", [2, 3, 4])], [fvi("y", [2, 3, 4])])


@model("nobounds_only_f32")
def _(r):
    """The only legacy node is a Clip-6 without min/max (already valid as Clip-11), opset 9.
    Expect either: untouched (opset 9), or opset 11 with clip_nb inputs [x] only."""
    return finish_at("clip_nobounds_only_f32", 9, [node("Clip", ["x"], ["y"], "clip_nb")],
                     [fvi("x", [2, 3, 4])], [fvi("y", [2, 3, 4])])


@model("both_f16")
def _(r):
    """Clip-6 min=-0.3 max=0.1 on float16 (bounds not exact in float16), opset 9.
    Expect: opset 11; clip0 inputs [x, min, max], float16 scalars float16(-0.3), float16(0.1)."""
    return _clip_model("clip_both_f16", 9, F16, dict(min=-0.3, max=0.1))


@model("min_f16")
def _(r):
    """Clip-6 with only min=-0.2 on float16, opset 10.
    Expect: opset 11; clip0 inputs [x, min], min a float16 scalar."""
    return _clip_model("clip_min_f16", 10, F16, dict(min=-0.2))


@model("max_f16")
def _(r):
    """Clip-6 with only max=0.6 on float16, opset 8 (IR 3).
    Expect: opset 11; clip0 inputs [x, '', max], max a float16 scalar."""
    return _clip_model("clip_max_f16", 8, F16, dict(max=0.6))


@model("nobounds_f16")
def _(r):
    """Clip-6 without bounds (clip_nb) and Clip-6 min=0 max=6 (clip0) on float16, opset 9.
    Expect: opset 11; clip_nb inputs [x]; clip0 float16 scalars 0 and 6."""
    return finish_at("clip_nobounds_f16", 9,
                     [node("Clip", ["x"], ["t"], "clip_nb"),
                   node("Clip", ["t"], ["y"], "clip0", min=0.0, max=6.0)],
                     [vi("x", F16, [2, 3, 4])], [vi("y", F16, [2, 3, 4])])


# what tests/test_legacy.py must see (see its EXPECT): every other model is
# converted
EXPECT = {
    "nobounds_only_f32": ('either', None),
}
