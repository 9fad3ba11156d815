/* pad.c - pass "pad": Pad-2 (pads, mode, value attributes) becomes Pad-11:
 * pads an int64 input, value a constant_value input of the data's element
 * type, mode kept (PPQ drops both mode and value). Raises the model to
 * opset 11 (see upgrade.h). */
#include "params.h"
#include "upgrade.h"

static const char *pad_check(const Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 2) && op_attr(op, "paddings"))
        return "Pad-1 (paddings attribute)";
    if (!upgrade_crosses(from, to, 11))
        return NULL;
    Attr *pads = op_attr(op, "pads");
    if (!pads || pads->type != ATTR_INTS)
        return "Pad without a pads attribute";
    int32_t dt = op_attr(op, "value") ? value_dtype(op->inputs[0]) : DT_FLOAT;
    if (!dt)
        return "Pad whose input type is unknown";
    if (!dtype_size(dt) || dt == DT_STRING)
        return "Pad of a type whose value cannot be an input";
    return NULL;
}

static int pad_to_inputs(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 11))
        return 0;
    Attr *pads = op_attr(op, "pads");
    Var *pv = new_int64_param(op, "_pads", pads->ints, pads->n);
    if (!pv || op_append_input(op, pv))
        return -1;
    Attr *value = op_attr(op, "value");
    if (value) {
        double v = value->f;
        Var *cv = new_float_param(op, "_value", value_dtype(op->inputs[0]), &v, 1, true);
        if (!cv || op_append_input(op, cv))
            return -1;
    }
    op_remove_attr(op, "pads");
    op_remove_attr(op, "value");
    return 0;
}

const Upgrade UPGRADE_PAD = {"Pad", pad_check, pad_to_inputs, NULL, {2, 11}};
