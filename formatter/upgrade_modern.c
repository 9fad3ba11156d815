/* upgrade_modern.c - the adaptations from opset 18 to 26 (see upgrade.h):
 * the Reduce* axes that became an input in opset 18, GridSample-20's renamed
 * modes, DFT-20's axis input and GroupNormalization-21's per-channel scale
 * and bias. Split-18's num_outputs is in upgrade_late.c with Split's other
 * steps. */
#include <string.h>

#include "params.h"
#include "upgrade.h"

/* --- Reduce*-18: axes attribute -> optional input --- */

/* ReduceSum moved its axes at opset 13 (UPGRADE_REDUCE_SUM); the other
 * reductions at 18, with noop_with_empty_axes defaulting to 0, so an absent
 * or empty axes list still reduces every axis. */
static const char *reduce_axes_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 18))
        return NULL;
    const Attr *a = op_attr(op, "axes");
    if (op->n_inputs != 1)
        return "a reduction with more inputs than its opset defines";
    return a && a->type != ATTR_INTS ? "an axes attribute that is not a list of integers" : NULL;
}

static int reduce_axes_to_input(Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 18) ? upgrade_ints_attr_to_input(op, "axes", "_axes") : 0;
}

#define REDUCE18(name) {name, reduce_axes_check, reduce_axes_to_input, NULL, {18}}

const Upgrade UPGRADE_REDUCE18[] = {
    REDUCE18("ReduceL1"),        REDUCE18("ReduceL2"),   REDUCE18("ReduceLogSum"),
    REDUCE18("ReduceLogSumExp"), REDUCE18("ReduceMax"),  REDUCE18("ReduceMean"),
    REDUCE18("ReduceMin"),       REDUCE18("ReduceProd"), REDUCE18("ReduceSumSquare"),
};
const size_t UPGRADE_REDUCE18_N = sizeof UPGRADE_REDUCE18 / sizeof *UPGRADE_REDUCE18;

/* --- GridSample-20: bilinear/bicubic became linear/cubic --- */

static bool attr_string_is(const Attr *a, const char *s)
{
    size_t n = strlen(s);
    return a && a->type == ATTR_STRING && a->s.len == n && memcmp(a->s.ptr, s, n) == 0;
}

static const char *grid_sample_check(const Op *op, int64_t from, int64_t to)
{
    const Attr *mode = op_attr(op, "mode");
    if (!upgrade_crosses(from, to, 20) || !mode || attr_string_is(mode, "bilinear") ||
        attr_string_is(mode, "bicubic") || attr_string_is(mode, "nearest"))
        return NULL;
    return "a GridSample mode GridSample-16 does not define";
}

/* GridSample-16's default was bilinear, -20's is linear: the same sampling,
 * so an absent mode stays absent. */
static int grid_sample_modes(Op *op, int64_t from, int64_t to)
{
    const Attr *mode = op_attr(op, "mode");
    if (!upgrade_crosses(from, to, 20) || !mode)
        return 0;
    if (attr_string_is(mode, "bilinear"))
        return op_set_attr_string(op, "mode", "linear") ? 0 : -1;
    if (attr_string_is(mode, "bicubic"))
        return op_set_attr_string(op, "mode", "cubic") ? 0 : -1;
    return 0;
}

const Upgrade UPGRADE_GRID_SAMPLE = {"GridSample", grid_sample_check, grid_sample_modes, NULL,
                                     {20}};

/* --- DFT-20: axis attribute (default 1) -> scalar input (default -2) --- */

static const char *dft_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 20))
        return NULL;
    return op->n_inputs > 2 ? "a DFT with more inputs than its opset defines" : NULL;
}

/* The input's default changed, so the axis is always written out. The
 * slots are appended empty and the axis set with op_set_input, which marks
 * the node for re-encoding (a DFT without an axis attribute loses none). */
static int dft_axis_to_input(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 20))
        return 0;
    double axis = (double)op_attr_int(op, "axis", 1);
    Var *v = new_float_param(op, "_axis", DT_INT64, &axis, 1, true);
    if (!v)
        return -1;
    while (op->n_inputs < 3)
        if (op_append_input(op, NULL))
            return -1;
    op_set_input(op, 2, v);
    op_remove_attr(op, "axis");
    return 0;
}

const Upgrade UPGRADE_DFT = {"DFT", dft_check, dft_axis_to_input, NULL, {20}};

/* --- GroupNormalization-21: scale and bias per channel --- */

/* GroupNormalization-18 scales and shifts each group (scale and bias of
 * length num_groups), -21 each channel (length C). Constant factors are
 * repeated over each group's C / num_groups channels; anything else (a
 * factor a caller feeds, a channel count not known) is refused. */
static const char *group_norm_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 21))
        return NULL;
    int64_t groups = op_attr_int(op, "num_groups", 0);
    int64_t channels = op->n_inputs == 3 ? value_dim(op->inputs[0], 1) : -1;
    if (groups <= 0 || channels <= 0 || channels % groups != 0)
        return "GroupNormalization-18 whose channel count is not known to be a multiple of "
               "num_groups (-21 scales per channel, -18 per group)";
    for (size_t i = 1; i < 3; i++) {
        const Tensor *t = op->inputs[i] ? param_numeric(op->inputs[i]) : NULL;
        if (!t || t->ndims != 1 || tensor_numel(t) != groups)
            return "GroupNormalization-18 whose scale or bias is not a constant of num_groups "
                   "values (-21 scales per channel, -18 per group)";
    }
    return NULL;
}

static int group_norm_per_channel(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 21))
        return 0;
    int64_t groups = op_attr_int(op, "num_groups", 0);
    int64_t channels = value_dim(op->inputs[0], 1), per = channels / groups;
    for (size_t i = 1; i < 3; i++) {
        const Tensor *old = param_numeric(op->inputs[i]);
        Tensor *t = tensor_new(&op->graph->model->arena, old->dtype, 1, &channels);
        if (!t)
            return -1;
        for (int64_t ch = 0; ch < channels; ch++)
            tensor_set_f64(t, (size_t)ch, tensor_get_f64(old, (size_t)(ch / per)));
        if (op_update_param(op, i, t, param_base_name(op, i == 1 ? "_scale" : "_bias")))
            return -1;
    }
    return 0;
}

const Upgrade UPGRADE_GROUP_NORM = {"GroupNormalization", group_norm_check, group_norm_per_channel,
                                    NULL, {21}};
