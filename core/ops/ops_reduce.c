/* ops_reduce.c - rules for reductions and selections along axes:
 * Reduce* (keepdims; axes as an attribute, or as an input from ReduceSum-13
 * and the others' opset 18, with noop_with_empty_axes), ArgMax/ArgMin and
 * TopK. ReduceProd and ReduceSum over a 1-D tensor carrying its contents
 * (a shape) compute the product or sum, as torch exports flatten sizes. */
#include <string.h>

#include "ops.h"

enum { REDUCE_MAX = 64 };

/* Axes: count (0 = none given), -1 when given but unknown. */
static long reduce_axes(InferCtx *c, bool from_input, int64_t *axes)
{
    if (!from_input) {
        const Attr *a = op_attr(c->op, "axes");
        if (!a || a->type != ATTR_INTS)
            return 0;
        if (a->n > REDUCE_MAX)
            return -1;
        attr_copy_ints(a, axes);
        return (long)a->n;
    }
    if (!infer_has_in(c, 1))
        return 0;
    return infer_in_ints(c, 1, axes, REDUCE_MAX);
}

/* The reduced shape of x over marked axes. */
static int reduce_finish(InferCtx *c, const InferFact *x, const bool *mark, bool keep, int32_t dtype)
{
    Dim d[REDUCE_MAX];
    int k = 0;
    for (int i = 0; i < x->rank; i++)
        if (!mark[i])
            d[k++] = x->dims[i];
        else if (keep)
            d[k++] = dim_const(c->dt, 1);
    return infer_set(c, 0, dtype, k, d);
}

/* Sum or product of a 1-D tensor's contents (a shape's element count). */
static int reduce_value(InferCtx *c, bool product)
{
    const InferFact *x = infer_in(c, 0);
    if (!x->value || x->rank != 1 || c->out[0].rank > 1)
        return 0;
    Dim acc = dim_const(c->dt, product ? 1 : 0);
    for (size_t i = 0; i < x->n_value; i++) {
        if (!x->value[i])
            return 0;
        acc = product ? dim_mul(c->dt, acc, x->value[i]) : dim_add(c->dt, acc, x->value[i]);
    }
    return infer_set_value(c, 0, &acc, 1);
}

static int reduce_generic(InferCtx *c, bool from_input)
{
    const InferFact *x = infer_in(c, 0);
    bool keep = op_attr_int(c->op, "keepdims", 1) != 0;
    bool noop = from_input && op_attr_int(c->op, "noop_with_empty_axes", 0) != 0;
    int64_t axes[REDUCE_MAX];
    long n = reduce_axes(c, from_input, axes);
    if (x->rank < 0 || x->rank > REDUCE_MAX || n < 0)
        return infer_set(c, 0, x->dtype, keep ? x->rank : -1, NULL);
    if (n == 0 && noop)
        return infer_copy(c, 0, 0);
    bool mark[REDUCE_MAX] = {false};
    for (long i = 0; i < n; i++) {
        int a = infer_axis(axes[i], x->rank);
        if (a < 0)
            return infer_bad(c, "axis %lld out of range", (long long)axes[i]);
        mark[a] = true;
    }
    for (int i = 0; n == 0 && i < x->rank; i++)
        mark[i] = true;
    return reduce_finish(c, x, mark, keep, x->dtype);
}

static int reduce_attr_axes(InferCtx *c) { return reduce_generic(c, false); }
static int reduce_input_axes(InferCtx *c) { return reduce_generic(c, true); }

static int reduce_prod_attr(InferCtx *c) { return reduce_generic(c, false) ? -1 : reduce_value(c, true); }
static int reduce_prod_input(InferCtx *c) { return reduce_generic(c, true) ? -1 : reduce_value(c, true); }
static int reduce_sum_attr(InferCtx *c) { return reduce_generic(c, false) ? -1 : reduce_value(c, false); }
static int reduce_sum_input(InferCtx *c) { return reduce_generic(c, true) ? -1 : reduce_value(c, false); }

static int reduce_arg(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    bool keep = op_attr_int(c->op, "keepdims", 1) != 0;
    if (x->rank < 0 || x->rank > REDUCE_MAX)
        return infer_set(c, 0, DT_INT64, keep ? x->rank : -1, NULL);
    int a = infer_axis(op_attr_int(c->op, "axis", 0), x->rank);
    if (a < 0)
        return infer_bad(c, "axis out of range");
    bool mark[REDUCE_MAX] = {false};
    mark[a] = true;
    return reduce_finish(c, x, mark, keep, DT_INT64);
}

/* TopK: the axis shrinks to k (attribute before opset 10, then input). */
static int reduce_topk(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    infer_set_dtype(c, 0, x->dtype);
    infer_set_dtype(c, 1, DT_INT64);
    if (x->rank < 0 || x->rank > REDUCE_MAX)
        return 0;
    int a = infer_axis(op_attr_int(c->op, "axis", -1), x->rank);
    if (a < 0)
        return infer_bad(c, "axis out of range");
    Dim d[REDUCE_MAX];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    const InferFact *k = infer_in(c, 1);
    if (c->opset < 10 && op_attr_int(c->op, "k", -1) < 0)
        return infer_bad(c, "k missing or negative");
    if (c->opset < 10)
        d[a] = dim_const(c->dt, op_attr_int(c->op, "k", 0));
    else
        d[a] = k->value && k->n_value == 1 && k->value[0] ? k->value[0] : dim_fresh(c->dt);
    if (infer_set(c, 0, x->dtype, x->rank, d))
        return -1;
    return infer_set(c, 1, DT_INT64, x->rank, d);
}

/* Det: [..., M, M] -> [...]. */
static int reduce_det(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 2)
        return x->rank < 0 ? infer_set_dtype(c, 0, x->dtype) : infer_bad(c, "rank below 2");
    return infer_set(c, 0, x->dtype, x->rank - 2, x->dims);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: the target's
 * shape with reduction "none", else a scalar; the optional log_prob output
 * is shaped like the scores. */
static int reduce_loss(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *target = infer_in(c, 1);
    const Attr *a = op_attr(c->op, "reduction");
    bool none = a && a->type == ATTR_STRING && a->s.len == 4 && !memcmp(a->s.ptr, "none", 4);
    if (infer_set(c, 0, x->dtype, none ? target->rank : 0, target->dims))
        return -1;
    return c->n_out > 1 ? infer_copy(c, 1, 0) : 0;
}

#define REDUCE(name, input_since)                                                \
    {"", name, 1, 1, 1, 1, 1, reduce_attr_axes},                                 \
    {"", name, input_since, 1, 2, 1, 1, reduce_input_axes}

static const OpSchema ops_reduce[] = {
    REDUCE("ReduceMean", 18), REDUCE("ReduceMax", 18), REDUCE("ReduceMin", 18),
    REDUCE("ReduceL1", 18), REDUCE("ReduceL2", 18), REDUCE("ReduceLogSum", 18),
    REDUCE("ReduceLogSumExp", 18), REDUCE("ReduceSumSquare", 18),
    {"", "ReduceProd", 1, 1, 1, 1, 1, reduce_prod_attr},
    {"", "ReduceProd", 18, 1, 2, 1, 1, reduce_prod_input},
    {"", "ReduceSum", 1, 1, 1, 1, 1, reduce_sum_attr},
    {"", "ReduceSum", 13, 1, 2, 1, 1, reduce_sum_input},
    {"", "ArgMax", 1, 1, 1, 1, 1, reduce_arg},
    {"", "ArgMin", 1, 1, 1, 1, 1, reduce_arg},
    {"", "Det", 11, 1, 1, 1, 1, reduce_det},
    {"", "NegativeLogLikelihoodLoss", 12, 2, 3, 1, 1, reduce_loss},
    {"", "SoftmaxCrossEntropyLoss", 12, 2, 3, 1, 2, reduce_loss},
    {"", "TopK", 1, 1, 1, 2, 2, reduce_topk},
    {"", "TopK", 10, 2, 2, 2, 2, reduce_topk},
};

const OpTable ops_reduce_table = {ops_reduce, sizeof ops_reduce / sizeof ops_reduce[0]};
