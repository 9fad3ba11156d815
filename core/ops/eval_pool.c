/* eval_pool.c - pooling kernels for the reference interpreter (eval_run.c):
 * MaxPool, AveragePool, LpPool and GlobalMaxPool, GlobalLpPool. Like the
 * rest of eval_run_nn.h they are kept out of the registry, so the fold pass
 * never folds a pooling (its output stays what it was).
 *
 * Geometry, as onnxruntime computes it: along each spatial axis, output
 * position o reads input positions o*stride - head + j*dilation (j below the
 * kernel size); positions outside the input are padding. The output size is
 * (in + head + tail - extent) / stride + 1, rounded down, or up with
 * ceil_mode, dropping a last window that would start in the tail padding;
 * auto_pad SAME_UPPER / SAME_LOWER give ceil(in / stride) outputs and put an
 * odd padding's extra element at the end / the head, VALID none.
 *
 * MaxPool takes the largest element in the input (padding never wins; a NaN
 * is skipped as onnxruntime's comparison skips it); its Indices output is
 * that element's index in the flattened input, the first of equal maxima,
 * with the spatial axes in row-major order, or column-major with
 * storage_order 1 (the batch and channel axes outermost either way). AveragePool divides the sum by the
 * positions in the input, or with count_include_pad by those inside the
 * padded extent (not beyond it, where ceil_mode's last window may reach).
 * LpPool: (sum |x|^p)^(1/p), padding adding 0. Sums in double, rounded once. */
#include <math.h>
#include <string.h>

#include "eval.h"
#include "eval_pool.h"

typedef enum PoolKind { POOL_MAX, POOL_AVG, POOL_LP } PoolKind;

typedef struct Pool {
    PoolKind kind;
    int sp; /* spatial rank */
    bool include_pad;
    double p; /* LpPool's exponent */
    int64_t k[EVAL_MAX_RANK], stride[EVAL_MAX_RANK], dil[EVAL_MAX_RANK];
    int64_t head[EVAL_MAX_RANK], tail[EVAL_MAX_RANK];
    int64_t ydims[EVAL_MAX_RANK], xs[EVAL_MAX_RANK];
    const Tensor *x;
    const uint8_t *xb;
} Pool;

/* Output size of spatial axis i (input size in, explicit pads pb and pe,
 * auto_pad mode: 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID); sets
 * head[i] and tail[i]. Below 1 when there is no output. */
static int64_t pool_axis(Pool *g, int i, int64_t in, int64_t pb, int64_t pe, int mode, bool ceil_mode)
{
    int64_t s = g->stride[i], ek = (g->k[i] - 1) * g->dil[i] + 1;
    if (mode == 1 || mode == 2) {
        int64_t out = (in + s - 1) / s, total = (out - 1) * s + ek - in;
        total = total < 0 ? 0 : total;
        g->head[i] = mode == 1 ? total / 2 : total - total / 2;
        g->tail[i] = total - g->head[i];
        return out;
    }
    g->head[i] = mode == 3 ? 0 : pb;
    g->tail[i] = mode == 3 ? 0 : pe;
    int64_t span = in + g->head[i] + g->tail[i] - ek;
    if (span < 0)
        return 0;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + g->head[i])
        out--;
    return out;
}

/* The attributes of a windowed pooling into g; -1 when they are not a geometry. */
static int pool_geometry(const Op *op, Pool *g)
{
    static const char *const autos[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    int sp = g->sp;
    int64_t pads[2 * EVAL_MAX_RANK];
    int mode = eval_attr_choice(op, "auto_pad", autos, 4);
    bool ceil_mode = op_attr_int(op, "ceil_mode", 0) != 0;
    if (mode == 4 || op_attr_ints(op, "kernel_shape", g->k, EVAL_MAX_RANK) != sp ||
        op_attr_ints_or(op, "strides", g->stride, (size_t)sp, 1) ||
        op_attr_ints_or(op, "dilations", g->dil, (size_t)sp, 1) ||
        op_attr_ints_or(op, "pads", pads, 2 * (size_t)sp, 0))
        return -1;
    for (int i = 0; i < sp; i++) {
        if (g->k[i] < 1 || g->stride[i] < 1 || g->dil[i] < 1 || pads[i] < 0 || pads[sp + i] < 0)
            return -1;
        g->ydims[2 + i] = pool_axis(g, i, g->x->dims[2 + i], pads[i], pads[sp + i], mode, ceil_mode);
        if (g->ydims[2 + i] < 1)
            return -1;
    }
    return 0;
}

/* A global pooling: one window covering each whole (n, c) plane. */
static void pool_global(Pool *g)
{
    for (int i = 0; i < g->sp; i++) {
        g->k[i] = g->x->dims[2 + i];
        g->stride[i] = g->dil[i] = g->ydims[2 + i] = 1;
        g->head[i] = g->tail[i] = 0;
    }
}

/* Per axis, the kernel offsets j whose positions are in the input
 * ([lo, hi)) and the number inside the padded extent (counted). */
static void pool_window(const Pool *g, const int64_t *o, int64_t *lo, int64_t *hi, double *counted)
{
    *counted = 1;
    for (int i = 0; i < g->sp; i++) {
        int64_t in = g->x->dims[2 + i], start = o[i] * g->stride[i] - g->head[i];
        int64_t d = g->dil[i], n = 0;
        lo[i] = start >= 0 ? 0 : (-start + d - 1) / d;
        hi[i] = in - start <= 0 ? 0 : (in - start - 1) / d + 1;
        hi[i] = hi[i] < g->k[i] ? hi[i] : g->k[i];
        lo[i] = lo[i] < hi[i] ? lo[i] : hi[i];
        for (int64_t j = 0; j < g->k[i]; j++) {
            int64_t at = start + j * d;
            n += at >= -g->head[i] && at < in + g->tail[i];
        }
        *counted *= (double)n;
    }
}

/* The index MaxPool's Indices output gives the element at flat offset
 * off: off itself in row-major order; column-major within the plane. */
static int64_t pool_index(const Pool *g, int64_t off, bool column_major)
{
    if (!column_major)
        return off;
    int64_t plane = off / g->xs[1], rest = off % g->xs[1], index = 0, mul = 1;
    for (int i = 0; i < g->sp; i++) {
        index += (rest / g->xs[2 + i]) % g->x->dims[2 + i] * mul;
        mul *= g->x->dims[2 + i];
    }
    return plane * g->xs[1] + index;
}

/* The pooled value of plane `plane` (n*C + c) at output position o; *arg:
 * the flat offset of the maximum (-1 when nothing beats -inf). */
static EvalNum pool_at(const Pool *g, int64_t plane, const int64_t *o, int64_t *arg)
{
    int32_t dt = g->x->dtype;
    size_t size = dtype_size(dt);
    bool fl = dtype_is_float(dt);
    int64_t lo[EVAL_MAX_RANK], hi[EVAL_MAX_RANK], j[EVAL_MAX_RANK], cells = 1;
    double counted, sum = 0, best = -INFINITY;
    int64_t ibest = INT64_MIN;
    pool_window(g, o, lo, hi, &counted);
    for (int i = 0; i < g->sp; i++) {
        cells *= hi[i] - lo[i];
        j[i] = lo[i];
    }
    for (int64_t n = 0; n < cells; n++) {
        int64_t off = plane * g->xs[1];
        for (int i = 0; i < g->sp; i++)
            off += (o[i] * g->stride[i] - g->head[i] + j[i] * g->dil[i]) * g->xs[2 + i];
        EvalNum v = eval_load(dt, g->xb + (size_t)off * size);
        bool better = fl ? v.f > best : v.i > ibest;
        *arg = better && g->kind == POOL_MAX ? off : *arg;
        if (!fl)
            ibest = better ? v.i : ibest;
        else if (g->kind == POOL_MAX)
            best = better ? v.f : best;
        else
            sum += g->kind == POOL_LP ? pow(fabs(v.f), g->p) : v.f;
        for (int i = g->sp - 1; i >= 0 && ++j[i] == hi[i]; i--)
            j[i] = lo[i];
    }
    if (!fl)
        return (EvalNum){.i = ibest};
    if (g->kind == POOL_MAX)
        return (EvalNum){.f = best};
    if (g->kind == POOL_LP)
        return (EvalNum){.f = pow(sum, 1 / g->p)};
    return (EvalNum){.f = sum / (g->include_pad ? counted : (double)cells)};
}

/* The input types a pooling takes at c's opset: floats; MaxPool also int8
 * and uint8 from opset 12. */
static bool pool_dtype_ok(const EvalCtx *c, PoolKind kind, int32_t dt)
{
    if (dt == DT_FLOAT || dt == DT_FLOAT16 || dt == DT_DOUBLE)
        return true;
    return kind == POOL_MAX && c->opset >= 12 && (dt == DT_INT8 || dt == DT_UINT8);
}

/* LpPool's p: a float before opset 2, an int from it; 2 when absent. */
static double pool_exponent(const Op *op)
{
    const Attr *a = op_attr(op, "p");
    if (!a)
        return 2;
    return a->type == ATTR_FLOAT ? (double)a->f : (double)a->i;
}

static int pool_run(EvalCtx *c, PoolKind kind, bool global)
{
    Pool g;
    memset(&g, 0, sizeof g);
    g.kind = kind;
    g.x = eval_in(c, 0);
    g.include_pad = op_attr_int(c->op, "count_include_pad", 0) != 0;
    g.p = kind == POOL_LP ? pool_exponent(c->op) : 1;
    c->exact = kind == POOL_MAX ? EVAL_KEEPS : EVAL_ROUNDS;
    if (!g.x || !pool_dtype_ok(c, kind, g.x->dtype) || g.x->ndims < 3 ||
        g.x->ndims > EVAL_MAX_RANK || !(g.p > 0))
        return eval_decline(c, "unsupported input type, rank or exponent");
    g.sp = (int)g.x->ndims - 2;
    g.ydims[0] = g.x->dims[0];
    g.ydims[1] = g.x->dims[1];
    if (global)
        pool_global(&g);
    else if (pool_geometry(c->op, &g))
        return eval_decline(c, "unsupported or inconsistent pooling attributes");
    eval_strides(g.x->dims, g.x->ndims, g.xs);
    g.xb = eval_bytes(c, g.x);
    Tensor *t = g.xb ? eval_out(c, 0, g.x->dtype, g.x->ndims, g.ydims) : NULL;
    bool with_indices = c->n_out > 1 && c->op->outputs[1];
    Tensor *ind = t && with_indices ? eval_out(c, 1, DT_INT64, g.x->ndims, g.ydims) : NULL;
    if (!t || (with_indices && !ind))
        return eval_out_failed(c);
    bool column_major = op_attr_int(c->op, "storage_order", 0) != 0;
    size_t size = dtype_size(t->dtype), n_out = (size_t)tensor_numel(t);
    int64_t per_plane = dims_numel(g.ydims + 2, (size_t)g.sp), o[EVAL_MAX_RANK];
    for (size_t e = 0; e < n_out; e++) {
        int64_t rest = (int64_t)e % per_plane;
        for (int i = g.sp - 1; i >= 0; i--) {
            o[i] = rest % g.ydims[2 + i];
            rest /= g.ydims[2 + i];
        }
        int64_t arg = -1;
        eval_store(t->dtype, (uint8_t *)t->data + e * size,
                   pool_at(&g, (int64_t)e / per_plane, o, &arg));
        if (ind)
            ((int64_t *)ind->data)[e] = arg < 0 ? -1 : pool_index(&g, arg, column_major);
    }
    return EVAL_OK;
}

static int eval_max_pool(EvalCtx *c) { return pool_run(c, POOL_MAX, false); }
static int eval_average_pool(EvalCtx *c) { return pool_run(c, POOL_AVG, false); }
static int eval_lp_pool(EvalCtx *c) { return pool_run(c, POOL_LP, false); }
static int eval_global_max_pool(EvalCtx *c) { return pool_run(c, POOL_MAX, true); }
static int eval_global_lp_pool(EvalCtx *c) { return pool_run(c, POOL_LP, true); }

static const OpKernel kernels[] = {
    {"", "MaxPool", 1, eval_max_pool},
    {"", "AveragePool", 1, eval_average_pool},
    {"", "LpPool", 1, eval_lp_pool},
    {"", "GlobalMaxPool", 1, eval_global_max_pool},
    {"", "GlobalLpPool", 1, eval_global_lp_pool},
};

const OpKernelTable eval_pool_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
