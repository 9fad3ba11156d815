/* clip.c - pass "clip": Clip-6 (min/max attributes) becomes Clip-11, whose
 * bounds are inputs: scalar initializers of the input's element type. An
 * absent bound stays absent (an empty input name), instead of PPQ's +-2^31
 * integers. Raises the model to opset 11 (see upgrade.h). */
#include "params.h"
#include "upgrade.h"

static const char *clip_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 11) || (!op_attr(op, "min") && !op_attr(op, "max")))
        return NULL;
    int32_t dt = op->n_inputs ? value_dtype(op->inputs[0]) : 0;
    return dtype_is_float(dt) && dt != DT_BFLOAT16 ? NULL
           : dt ? "Clip of a type Clip-11 does not take"
                : "Clip whose input type is unknown";
}

static int clip_bounds_to_inputs(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 11))
        return 0;
    int32_t dt = value_dtype(op->inputs[0]);
    const char *names[2] = {"min", "max"};
    Var *bound[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        Attr *a = op_attr(op, names[i]);
        double v = a ? a->f : 0;
        if (a && !(bound[i] = new_float_param(op, i ? "_max" : "_min", dt, &v, 1, true)))
            return -1;
    }
    op_remove_attr(op, "min");
    op_remove_attr(op, "max");
    op_drop_inputs(op, 1); /* any stray inputs first */
    if (!bound[0] && !bound[1])
        return 0;
    return op_append_input(op, bound[0]) || (bound[1] && op_append_input(op, bound[1])) ? -1 : 0;
}

static void clip_prefetch(const Op *op)
{
    param_base_name_prefetch(op, "_min");
    param_base_name_prefetch(op, "_max");
}

const Upgrade UPGRADE_CLIP = {"Clip", clip_check, clip_bounds_to_inputs, clip_prefetch, {11}};
