/* upgrade_late.c - the adaptations from opset 12 to 17 (see upgrade.h):
 * Dropout-12's ratio input, the axes and split attributes that became
 * inputs in opset 13 (and Split-18's num_outputs), Softmax-13's single-axis
 * meaning, BatchNormalization-14's training form and RoiAlign-16's new
 * default coordinate mode. */
#include <string.h>

#include "params.h"
#include "upgrade.h"

/* --- attributes that became int64 inputs in opset 13 --- */

int upgrade_ints_attr_to_input(Op *op, const char *name, const char *suffix)
{
    Attr *a = op_attr(op, name);
    if (!a)
        return 0;
    Var *v = new_int64_param(op, suffix, a->ints, a->n);
    if (!v || op_append_input(op, v))
        return -1;
    op_remove_attr(op, name);
    return 0;
}

static const char *one_input_check(const Op *op, const char *name, bool required)
{
    const Attr *a = op_attr(op, name);
    if (op->n_inputs != 1)
        return "a node with more inputs than its opset defines";
    if (a && a->type != ATTR_INTS)
        return "an axes or split attribute that is not a list of integers";
    return required && !a ? "Unsqueeze without axes" : NULL;
}

static const char *split_check(const Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 2) && op->n_inputs > 1)
        return "Split-1 with its split as an input (Split-2 takes an attribute)";
    return upgrade_crosses(from, to, 13) ? one_input_check(op, "split", false) : NULL;
}

/* Split-13 without a split input cuts equal parts, one per output; Split-18
 * needs that count said as num_outputs. */
static int split_to_input(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 13) && upgrade_ints_attr_to_input(op, "split", "_split"))
        return -1;
    if (!upgrade_crosses(from, to, 18) || (op->n_inputs > 1 && op->inputs[1]))
        return 0;
    return op_set_attr_int(op, "num_outputs", (int64_t)op->n_outputs) ? 0 : -1;
}

static const char *axes_check(const Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 13) ? one_input_check(op, "axes", false) : NULL;
}

static const char *unsqueeze_check(const Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 13) ? one_input_check(op, "axes", true) : NULL;
}

static int axes_to_input(Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 13) ? upgrade_ints_attr_to_input(op, "axes", "_axes") : 0;
}

const Upgrade UPGRADE_SPLIT = {"Split", split_check, split_to_input, NULL, {2, 13, 18}};
const Upgrade UPGRADE_SQUEEZE = {"Squeeze", axes_check, axes_to_input, NULL, {13}};
const Upgrade UPGRADE_UNSQUEEZE = {"Unsqueeze", unsqueeze_check, axes_to_input, NULL, {13}};
const Upgrade UPGRADE_REDUCE_SUM = {"ReduceSum", axes_check, axes_to_input, NULL, {13}};

/* --- Softmax, LogSoftmax, Hardmax --- */

/* A new value of op's graph named after op. */
static Var *new_value(Op *op, const char *suffix)
{
    Model *m = op->graph->model;
    const char *name = model_fresh_value_name(m, param_base_name(op, suffix));
    return name ? graph_new_var(op->graph, name) : NULL;
}

static Op *new_op_after(Op *after, Op *like, const char *type, const char *suffix)
{
    Model *m = like->graph->model;
    const char *name = model_fresh_node_name(m, param_base_name(like, suffix));
    return name ? graph_insert_op(like->graph, after, type, name) : NULL;
}

/* Before opset 13 these operators flattened the input to 2-D at `axis`
 * (default 1) and worked on each row; from 13 on they work along the one
 * axis `axis` (default -1). Where the flattened rows are the last axis the
 * meaning is the same and axis is written out; elsewhere the old meaning is
 * built from Shape, Flatten, the operator on the 2-D rows and Reshape back,
 * as onnx's version converter does. */
static int softmax_single_axis(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 13))
        return 0;
    int64_t axis = op_attr_int(op, "axis", 1);
    int rank = value_rank(op->inputs[0]);
    bool last = rank > 0 && (axis < 0 ? axis + rank : axis) == rank - 1;
    if (axis == -1 || last)
        return op_set_attr_int(op, "axis", axis) ? 0 : -1;
    Var *x = op->inputs[0], *shape = new_value(op, "_shape"), *flat = new_value(op, "_2d"),
        *rows = new_value(op, "_rows");
    Op *s = shape ? new_op_after(op, op, "Shape", "_shape") : NULL;
    Op *f = s && flat ? new_op_after(s, op, "Flatten", "_flatten") : NULL;
    Op *sm = f && rows ? graph_insert_op(op->graph, f, op->type, op->name) : NULL;
    Op *r = sm ? new_op_after(sm, op, "Reshape", "_reshape") : NULL;
    if (!r || op_append_input(s, x) || op_append_output(s, shape) || op_append_input(f, x) ||
        op_append_output(f, flat) || !op_set_attr_int(f, "axis", axis) ||
        op_append_input(sm, flat) || op_append_output(sm, rows) ||
        !op_set_attr_int(sm, "axis", 1) || op_append_input(r, rows) || op_append_input(r, shape))
        return -1;
    return graph_replace_op(op, r);
}

const Upgrade UPGRADE_SOFTMAX = {"Softmax", NULL, softmax_single_axis, NULL, {13}};
const Upgrade UPGRADE_LOG_SOFTMAX = {"LogSoftmax", NULL, softmax_single_axis, NULL, {13}};
const Upgrade UPGRADE_HARDMAX = {"Hardmax", NULL, softmax_single_axis, NULL, {13}};

/* --- Dropout, BatchNormalization, RoiAlign --- */

/* Dropout-12 reads ratio from an optional input (default 0.5, as the
 * attribute's). Outside training mode it changes nothing, but it is kept. */
int upgrade_dropout_ratio(Op *op, int64_t from, int64_t to)
{
    Attr *a = op_attr(op, "ratio");
    if (!upgrade_crosses(from, to, 12) || !a)
        return 0;
    double ratio = a->f;
    Var *v = new_float_param(op, "_ratio", DT_FLOAT, &ratio, 1, true);
    if (!v)
        return -1;
    op_drop_inputs(op, 1);
    if (op_append_input(op, v))
        return -1;
    op_remove_attr(op, "ratio");
    return 0;
}

/* Before opset 14 a BatchNormalization with more than one output is the
 * training form (batch statistics, as onnxruntime computes it), used or not;
 * BatchNormalization-14 says training with training_mode instead, and has no
 * saved_mean/saved_var. A training node has no place in an inference model,
 * so it is not carried over. */
const char *upgrade_bn_outputs_check(const Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 14) && op->n_outputs > 1)
        return "BatchNormalization in its training form (more than one output)";
    return NULL;
}

/* RoiAlign-16 added coordinate_transformation_mode with default half_pixel;
 * RoiAlign-10 computes what that attribute calls output_half_pixel. */
static int roi_align_mode(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 16) || op_attr(op, "coordinate_transformation_mode"))
        return 0;
    return op_set_attr_string(op, "coordinate_transformation_mode", "output_half_pixel") ? 0 : -1;
}

const Upgrade UPGRADE_ROI_ALIGN = {"RoiAlign", NULL, roi_align_mode, NULL, {16}};
