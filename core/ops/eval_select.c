/* eval_select.c - kernels that pick elements by their order along an axis
 * (eval.h): TopK (the k largest or smallest, ties to the lower index) and
 * Hardmax (one at the first maximum). */
#include <stdlib.h>
#include <string.h>

#include "eval.h"

/* One element of a slice: its value and where it was. */
typedef struct Ranked {
    EvalNum v;
    int64_t at;
} Ranked;

static int by_index(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* NaN ranks above every number, as the largest (onnxruntime's order). */
static int cmp_f(double x, double y)
{
    if (x != x || y != y)
        return (x != x) - (y != y);
    return (x > y) - (x < y);
}

static int desc_f(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = cmp_f(y->v.f, x->v.f);
    return c ? c : by_index(x->at, y->at);
}

static int asc_f(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = cmp_f(x->v.f, y->v.f);
    return c ? c : by_index(x->at, y->at);
}

static int desc_i(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = (y->v.i > x->v.i) - (y->v.i < x->v.i);
    return c ? c : by_index(x->at, y->at);
}

static int asc_i(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = (x->v.i > y->v.i) - (x->v.i < y->v.i);
    return c ? c : by_index(x->at, y->at);
}

/* Outer, axis and inner extents of x around axis. */
static void split_at(const Tensor *x, int axis, size_t *outer, size_t *d, size_t *inner)
{
    *outer = (size_t)dims_numel(x->dims, (size_t)axis);
    *d = (size_t)x->dims[axis];
    *inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1);
}

static int topk_k(EvalCtx *c, int64_t *k)
{
    if (c->opset < 10) {
        *k = op_attr_int(c->op, "k", -1);
        return *k >= 0 ? 0 : -1;
    }
    return eval_ints(c, 1, k, 1) == 1 && *k >= 0 ? 0 : -1;
}

static int eval_topk(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t k;
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -1), (int)x->ndims) : -1;
    if (!x || axis < 0 || x->dtype == DT_BOOL || topk_k(c, &k) || k > x->dims[axis])
        return eval_decline(c, "an unsupported input, axis or k");
    bool largest = op_attr_int(c->op, "largest", 1) != 0, fl = dtype_is_float(x->dtype);
    int64_t dims[EVAL_MAX_RANK];
    memcpy(dims, x->dims, x->ndims * sizeof *dims);
    dims[axis] = k;
    size_t outer, d, inner, size = dtype_size(x->dtype);
    split_at(x, axis, &outer, &d, &inner);
    const uint8_t *b = eval_bytes(c, x);
    Tensor *vals = b ? eval_out(c, 0, x->dtype, x->ndims, dims) : NULL;
    Tensor *idx = vals ? eval_out(c, 1, DT_INT64, x->ndims, dims) : NULL;
    Ranked *row = idx ? arena_array(c->arena, d ? d : 1, sizeof *row) : NULL;
    if (!row)
        return eval_out_failed(c);
    int (*order)(const void *, const void *) =
        fl ? (largest ? desc_f : asc_f) : (largest ? desc_i : asc_i);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            for (size_t j = 0; j < d; j++)
                row[j] = (Ranked){eval_load(x->dtype, b + ((o * d + j) * inner + in) * size),
                                  (int64_t)j};
            qsort(row, d, sizeof *row, order);
            for (size_t j = 0; j < (size_t)k; j++) {
                size_t e = (o * (size_t)k + j) * inner + in;
                eval_store(x->dtype, (uint8_t *)vals->data + e * size, row[j].v);
                eval_store(DT_INT64, (uint8_t *)idx->data + e * 8, (EvalNum){.i = row[j].at});
            }
        }
    return EVAL_OK;
}

/* Hardmax: before opset 13 the input is seen as 2-D, [before axis, from
 * axis on], and each row gets one 1; from 13 each slice along axis does. */
static int eval_hardmax(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t fallback = c->opset < 13 ? 1 : -1;
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", fallback), (int)x->ndims) : -1;
    if (!x || !dtype_is_float(x->dtype) || axis < 0)
        return eval_decline(c, "an unsupported input or axis");
    size_t outer, d, inner, size = dtype_size(x->dtype);
    split_at(x, axis, &outer, &d, &inner);
    if (c->opset < 13) {
        d *= inner;
        inner = 1;
    }
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            size_t best = 0;
            double top = 0;
            for (size_t j = 0; j < d; j++) {
                double v = eval_load(x->dtype, b + ((o * d + j) * inner + in) * size).f;
                if (j == 0 || v > top) {
                    top = v;
                    best = j;
                }
            }
            for (size_t j = 0; j < d; j++)
                eval_store(x->dtype, (uint8_t *)t->data + ((o * d + j) * inner + in) * size,
                           (EvalNum){.f = j == best && d ? 1 : 0});
        }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "TopK", 1, eval_topk},
    {"", "Hardmax", 1, eval_hardmax},
};

const OpKernelTable eval_select_kernels = {kernels, sizeof kernels / sizeof *kernels};
