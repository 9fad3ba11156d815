/* ops_select.c - rules for operators whose output size depends on the
 * data (NonZero's cousins: Compress, Unique, NonMaxSuppression: a fresh
 * symbol stands for the count) and for sampling ops (RoiAlign,
 * MaxRoiPool, GridSample) whose output grid comes from another input. */
#include "ops.h"

enum { SELECT_MAX = 64 };

/* Compress: 1-D of unknown length without an axis, else that axis. */
static int select_compress(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    const Attr *a = op_attr(c->op, "axis");
    if (!a)
        return infer_set(c, 0, x->dtype, 1, NULL);
    if (x->rank < 0 || x->rank > SELECT_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    int axis = infer_axis(a->i, x->rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim d[SELECT_MAX];
    for (int i = 0; i < x->rank; i++)
        d[i] = i == axis ? dim_fresh(c->dt) : x->dims[i];
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* Unique: the count of unique elements (or slices along axis) is one
 * fresh symbol shared by Y's axis, indices and counts; inverse_indices
 * has one entry per input element (or slice). */
static int select_unique(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    const Attr *a = op_attr(c->op, "axis");
    Dim u = dim_fresh(c->dt), d[SELECT_MAX];
    int axis = a && x->rank >= 0 ? infer_axis(a->i, x->rank) : -1;
    if (a && x->rank >= 0 && axis < 0)
        return infer_bad(c, "axis out of range");
    if (infer_set(c, 1, DT_INT64, 1, &u) || infer_set(c, 3, DT_INT64, 1, &u))
        return -1;
    if (!a) {
        Dim n = x->rank >= 0 ? infer_dims_product(c, x, 0, x->rank) : dim_fresh(c->dt);
        return infer_set(c, 0, x->dtype, 1, &u) || infer_set(c, 2, DT_INT64, 1, &n) ? -1 : 0;
    }
    if (x->rank < 0 || x->rank > SELECT_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    for (int i = 0; i < x->rank; i++)
        d[i] = i == axis ? u : x->dims[i];
    return infer_set(c, 0, x->dtype, x->rank, d) || infer_set(c, 2, DT_INT64, 1, &x->dims[axis]) ? -1 : 0;
}

static int select_nms(InferCtx *c)
{
    Dim d[2] = {dim_fresh(c->dt), dim_const(c->dt, 3)};
    return infer_set(c, 0, DT_INT64, 2, d);
}

/* RoiAlign: [num_rois, C, output_height, output_width]. */
static int select_roialign(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *rois = infer_in(c, 1);
    Dim d[4] = {rois->rank == 2 ? rois->dims[0] : dim_fresh(c->dt),
                x->rank == 4 ? x->dims[1] : dim_fresh(c->dt),
                dim_const(c->dt, op_attr_int(c->op, "output_height", 1)),
                dim_const(c->dt, op_attr_int(c->op, "output_width", 1))};
    return infer_set(c, 0, x->dtype, 4, d);
}

/* MaxRoiPool: [num_rois, C, pooled_h, pooled_w] (rois [num_rois, 5],
 * pooled_shape the attribute). */
static int select_maxroipool(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *rois = infer_in(c, 1);
    const Attr *a = op_attr(c->op, "pooled_shape");
    if (!a || a->type != ATTR_INTS || a->n != 2)
        return infer_bad(c, "pooled_shape must hold 2 ints");
    Dim d[4] = {rois->rank == 2 ? rois->dims[0] : dim_fresh(c->dt),
                x->rank == 4 ? x->dims[1] : dim_fresh(c->dt), dim_const(c->dt, a->ints[0]),
                dim_const(c->dt, a->ints[1])};
    return infer_set(c, 0, x->dtype, 4, d);
}

/* GridSample: [N, C] and the grid's spatial dims ([N, H, W, 2] grid). */
static int select_gridsample(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *grid = infer_in(c, 1);
    if (grid->rank < 3 || grid->rank > SELECT_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    Dim d[SELECT_MAX];
    d[0] = grid->dims[0];
    d[1] = x->rank >= 2 ? x->dims[1] : dim_fresh(c->dt);
    for (int i = 1; i < grid->rank - 1; i++)
        d[i + 1] = grid->dims[i];
    return infer_set(c, 0, x->dtype, grid->rank, d);
}

static const OpSchema ops_select[] = {
    {"", "Compress", 9, 2, 2, 1, 1, select_compress},
    {"", "Unique", 11, 1, 1, 1, 4, select_unique},
    {"", "NonMaxSuppression", 10, 2, 5, 1, 1, select_nms},
    {"", "RoiAlign", 10, 3, 3, 1, 1, select_roialign},
    {"", "MaxRoiPool", 1, 2, 2, 1, 1, select_maxroipool},
    {"", "GridSample", 16, 2, 2, 1, 1, select_gridsample},
};

const OpTable ops_select_table = {ops_select, sizeof ops_select / sizeof ops_select[0]};
