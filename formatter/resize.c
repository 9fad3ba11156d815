/* resize.c - pass "resize": Resize-10 (X, scales) becomes Resize-11
 * (X, roi, scales), and Upsample-7/9 (deprecated from opset 10) becomes the
 * same Resize-11. Raises the model to opset 11 (see upgrade.h). A raise to 9
 * or 10 only (--target-opset) gives Upsample-9 or Resize-10, whose mapping
 * is Upsample's own.
 *
 * Resize-11 defaults to half_pixel coordinates; Resize-10 and Upsample map
 * output pixel i to input coordinate i / scale ("asymmetric"). For nearest
 * mode, onnxruntime rounds that coordinate down when an axis is upsampled and
 * up when it is downsampled (checked against onnxruntime for scales 2, 1.5,
 * 1.3, 0.6, 0.45), so nearest_mode is floor or ceil; a nearest resize that
 * upsamples one axis and downsamples another has no single Resize-11 form. */
#include <string.h>

#include "params.h"
#include "upgrade.h"

/* Up (1), down (-1), both (2) or not known (0) for a nearest resize.
 * Upsample only ever upsamples (its scales are >= 1 by definition). */
static int direction(const Var *scales_var, const Attr *scales_attr, bool upsample)
{
    if (upsample)
        return 1;
    const Tensor *t = param_numeric(scales_var);
    size_t n = scales_attr ? scales_attr->n : t ? (size_t)tensor_numel(t) : 0;
    if (!scales_attr && !t)
        return 0;
    bool up = false, down = false;
    for (size_t i = 0; i < n; i++) {
        double s = scales_attr ? scales_attr->floats[i] : tensor_get_f64(t, i);
        up |= s > 1;
        down |= s < 1;
    }
    return up && down ? 2 : down ? -1 : 1;
}

static bool mode_is(const Op *op, const char *want)
{
    Attr *mode = op_attr(op, "mode");
    const char *m = mode ? (const char *)mode->s.ptr : "nearest";
    size_t n = mode ? mode->s.len : 7;
    return n == strlen(want) && memcmp(m, want, n) == 0;
}

static const char *check_common(const Op *op, const Var *scales_var, const Attr *scales_attr)
{
    bool upsample = op_is(op, "Upsample");
    bool nearest = mode_is(op, "nearest");
    if (!nearest && !mode_is(op, "linear"))
        return "Resize/Upsample with a mode other than nearest or linear";
    int dir = nearest ? direction(scales_var, scales_attr, upsample) : 1;
    if (dir == 0)
        return "nearest Resize/Upsample whose scales are not constant";
    if (dir == 2)
        return "nearest Resize/Upsample that upsamples and downsamples at once";
    return NULL;
}

/* Sets the Resize-11 attributes reproducing the asymmetric mapping. */
static int set_mapping(Op *op, const Var *scales, bool upsample)
{
    if (!op_set_attr_string(op, "coordinate_transformation_mode", "asymmetric"))
        return -1;
    if (!mode_is(op, "nearest"))
        return 0;
    const char *round = direction(scales, NULL, upsample) < 0 ? "ceil" : "floor";
    return op_set_attr_string(op, "nearest_mode", round) ? 0 : -1;
}

static Var *empty_roi(Op *op)
{
    return new_float_param(op, "_roi", DT_FLOAT, NULL, 0, false);
}

/* Resize-13 dropped the coordinate mode tf_half_pixel_for_nn. */
static const char *resize_check(const Op *op, int64_t from, int64_t to)
{
    const Attr *ctm = op_attr(op, "coordinate_transformation_mode");
    if (upgrade_crosses(from, to, 13) && ctm && ctm->s.len == 20 &&
        memcmp(ctm->s.ptr, "tf_half_pixel_for_nn", 20) == 0)
        return "Resize with tf_half_pixel_for_nn (removed in opset 13)";
    if (!upgrade_crosses(from, to, 11) || op->n_inputs != 2)
        return NULL; /* already Resize-11 form */
    return check_common(op, op->inputs[1], NULL);
}

static int resize_add_roi(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 11) || op->n_inputs != 2)
        return 0;
    Var *scales = op->inputs[1], *roi = empty_roi(op);
    if (!roi || op_append_input(op, scales))
        return -1;
    op_set_input(op, 1, roi);
    return set_mapping(op, scales, false);
}

/* Resize-11 and 12 need a scales input even with sizes, an empty tensor
 * then; Resize-13 wants scales absent instead (onnxruntime refuses both). */
static void resize_drop_empty_scales(Op *op, int64_t from, int64_t to)
{
    Var *scales = op->n_inputs >= 4 && op->inputs[3] ? op->inputs[2] : NULL;
    if (upgrade_crosses(from, to, 13) && scales && value_rank(scales) == 1 &&
        value_dim(scales, 0) == 0)
        op_set_input(op, 2, NULL);
}

static int resize_adapt(Op *op, int64_t from, int64_t to)
{
    if (resize_add_roi(op, from, to))
        return -1;
    resize_drop_empty_scales(op, from, to);
    return 0;
}

const Upgrade UPGRADE_RESIZE = {"Resize", resize_check, resize_adapt, NULL, {11, 13}};

/* Upsample-7 holds scales in an attribute, Upsample-9 takes them as input. */
static const char *upsample_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 9) && !upgrade_crosses(from, to, 10))
        return NULL;
    const Attr *sa = op_attr(op, "scales");
    if (op->n_inputs < 2 && (!sa || sa->type != ATTR_FLOATS))
        return "Upsample without scales";
    if (to < 11) /* Upsample-9 and Resize-10 map coordinates as Upsample-7 does */
        return NULL;
    return check_common(op, op->n_inputs >= 2 ? op->inputs[1] : NULL, op->n_inputs < 2 ? sa : NULL);
}

/* The scales as a value: Upsample-9's input, or Upsample-7's attribute as a
 * new parameter. */
static Var *upsample_scales(Op *op)
{
    Attr *sa = op->n_inputs < 2 ? op_attr(op, "scales") : NULL;
    if (!sa)
        return op->inputs[1];
    double *v = arena_array(&op->graph->model->arena, sa->n ? sa->n : 1, sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < sa->n; i++)
        v[i] = sa->floats[i];
    return new_float_param(op, "_scales", DT_FLOAT, v, sa->n, false);
}

static int upsample_to_resize(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 9) && !upgrade_crosses(from, to, 10))
        return 0;
    Var *scales = upsample_scales(op);
    if (!scales)
        return -1;
    if (to == 9) { /* Upsample-9 */
        op_remove_attr(op, "scales");
        return op->n_inputs < 2 ? op_append_input(op, scales) : 0;
    }
    Op *r = graph_insert_op(op->graph, op, "Resize", op->name);
    Var *roi = r && to >= 11 ? empty_roi(op) : NULL;
    const char *mode = mode_is(op, "linear") ? "linear" : "nearest";
    if (!r || (to >= 11 && !roi) || op_append_input(r, op->inputs[0]) ||
        (roi && op_append_input(r, roi)) || op_append_input(r, scales) ||
        !op_set_attr_string(r, "mode", mode) || (roi && set_mapping(r, scales, true)))
        return -1;
    return graph_replace_op(op, r);
}

const Upgrade UPGRADE_UPSAMPLE = {"Upsample", upsample_check, upsample_to_resize, NULL, {9, 10}};
