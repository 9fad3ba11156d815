/* eval_reduce.c - kernels that combine many elements into one (eval.h):
 * ReduceSum/Prod/Mean/Max/Min/L1/L2/SumSquare/LogSum/LogSumExp, CumSum,
 * CumProd, MatMul; and Trilu. Computed in
 * memory. Float sums and products accumulate in double and are rounded
 * once (see eval.h); CumSum (CumProd) rounds every partial sum (product) to
 * the element type, as onnxruntime's running sum does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_dense.h"

enum { R_SUM, R_PROD, R_MEAN, R_MAX, R_MIN, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP };

/* The sums of a function of each element: what is summed, and what is
 * done to the sum (an empty sum is 0: log gives -inf, as ONNX says). */
static bool reduce_is_sum_of(int kind) { return kind >= R_L1; }

static EvalNum reduce_pre(int kind, EvalNum v, bool fl)
{
    if (kind == R_L1)
        return fl ? (EvalNum){.f = fabs(v.f)} : (EvalNum){.i = v.i < 0 ? -v.i : v.i};
    if (kind == R_L2 || kind == R_SUMSQ)
        return fl ? (EvalNum){.f = v.f * v.f}
                  : (EvalNum){.i = (int64_t)((uint64_t)v.i * (uint64_t)v.i)};
    return kind == R_LOGSUMEXP ? (EvalNum){.f = exp(v.f)} : v;
}

static double reduce_post(int kind, double sum)
{
    return kind == R_L2 ? sqrt(sum) : kind == R_LOGSUM || kind == R_LOGSUMEXP ? log(sum) : sum;
}


/* The reduced axes of x into red[]; -1 when they cannot be read. With no
 * axes every axis is reduced, unless noop_with_empty_axes. */
static int reduce_axes(EvalCtx *c, const Tensor *x, int64_t input_since, bool *red, bool *noop)
{
    int64_t axes[EVAL_MAX_RANK];
    long n;
    if (c->opset >= input_since)
        n = c->n_in > 1 && c->in[1] ? eval_ints(c, 1, axes, EVAL_MAX_RANK) : 0;
    else
        n = op_attr(c->op, "axes") ? op_attr_ints(c->op, "axes", axes, EVAL_MAX_RANK) : 0;
    if (n < 0)
        return -1;
    *noop = !n && c->opset >= input_since && op_attr_int(c->op, "noop_with_empty_axes", 0);
    for (size_t a = 0; a < x->ndims; a++)
        red[a] = !n;
    for (long k = 0; k < n; k++) {
        int a = eval_axis(axes[k], (int)x->ndims);
        if (a < 0)
            return -1;
        red[a] = true;
    }
    return 0;
}

typedef struct Acc {
    double *f;
    int64_t *i;
    bool *seen;
} Acc;

static void acc_add(Acc *acc, size_t o, EvalNum v, bool fl, int kind)
{
    bool first = !acc->seen[o];
    acc->seen[o] = true;
    if (fl) {
        double *r = &acc->f[o], x = v.f;
        if (kind == R_SUM || kind == R_MEAN)
            *r = first ? x : *r + x;
        else if (kind == R_PROD)
            *r = first ? x : *r * x;
        else if (first || x != x || (kind == R_MAX ? x > *r : x < *r))
            *r = *r != *r && !first ? *r : x;
        return;
    }
    int64_t *r = &acc->i[o], x = v.i;
    if (kind == R_SUM || kind == R_MEAN)
        *r = first ? x : (int64_t)((uint64_t)*r + (uint64_t)x);
    else if (kind == R_PROD)
        *r = first ? x : (int64_t)((uint64_t)*r * (uint64_t)x);
    else if (first || (kind == R_MAX ? x > *r : x < *r))
        *r = x;
}

/* The index in the output of input element e (reduced axes dropped). */
static size_t reduce_target(const Tensor *x, const bool *red, size_t e)
{
    size_t o = 0, mul = 1;
    for (size_t a = x->ndims; a-- > 0;) {
        size_t coord = e % (size_t)x->dims[a];
        e /= (size_t)x->dims[a];
        if (!red[a]) {
            o += coord * mul;
            mul *= (size_t)x->dims[a];
        }
    }
    return o;
}

/* What ReduceMax (ReduceMin) of no elements is, as ONNX-18 defines it: the
 * lowest (highest) value of the type, -inf (inf) for floats, false (true)
 * for bool. uint64 never gets here. */
static EvalNum reduce_empty_extreme(int32_t dt, bool max)
{
    if (dtype_is_float(dt))
        return (EvalNum){.f = max ? -INFINITY : INFINITY};
    int64_t lo = 0, hi = 0;
    eval_int_range(dt, &lo, &hi);
    return (EvalNum){.i = max ? lo : hi};
}

static int reduce_store(EvalCtx *c, const Tensor *x, const bool *red, const Acc *acc, int kind,
                        size_t per)
{
    int64_t dims[EVAL_MAX_RANK];
    size_t rank = 0;
    bool keep = op_attr_int(c->op, "keepdims", 1) != 0, fl = dtype_is_float(x->dtype);
    for (size_t a = 0; a < x->ndims; a++)
        if (!red[a] || keep)
            dims[rank++] = red[a] ? 1 : x->dims[a];
    Tensor *t = eval_out(c, 0, x->dtype, rank, dims);
    if (!t)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(t), size = dtype_size(x->dtype);
    for (size_t o = 0; o < n; o++) {
        EvalNum v;
        /* the empty set's value is defined from opset 18 */
        if (!acc->seen[o] && (kind == R_MEAN || ((kind == R_MAX || kind == R_MIN) && c->opset < 18)))
            return eval_decline(c, "a mean, or a maximum before opset 18, over no elements");
        if (!acc->seen[o] && (kind == R_MAX || kind == R_MIN))
            v = reduce_empty_extreme(x->dtype, kind == R_MAX);
        else if (fl && reduce_is_sum_of(kind))
            v.f = reduce_post(kind, acc->seen[o] ? acc->f[o] : 0);
        else if (fl)
            v.f = !acc->seen[o] ? (kind == R_PROD) : kind == R_MEAN ? acc->f[o] / (double)per : acc->f[o];
        else
            v.i = !acc->seen[o] ? (kind == R_PROD) : kind == R_MEAN ? acc->i[o] / (int64_t)per : acc->i[o];
        eval_store(x->dtype, (uint8_t *)t->data + o * size, v);
    }
    return EVAL_OK;
}

static int reduce_run(EvalCtx *c, int kind, int64_t input_since)
{
    const Tensor *x = eval_in(c, 0);
    bool red[EVAL_MAX_RANK], noop;
    c->exact = kind == R_MAX || kind == R_MIN ? EVAL_KEEPS : EVAL_ROUNDS; /* sums, products */
    /* bool: ReduceMax/Min-20 (any, all); the sums take none */
    bool bool_ok = kind == R_MAX || kind == R_MIN;
    if (!x || (x->dtype == DT_BOOL && !bool_ok) || x->dtype == DT_UINT64 ||
        reduce_axes(c, x, input_since, red, &noop))
        return eval_decline(c, "an unsupported input or axes");
    bool fl = dtype_is_float(x->dtype);
    if (!fl && (kind == R_L2 || kind == R_LOGSUM || kind == R_LOGSUMEXP))
        return eval_decline(c, "an integer input to a root or logarithm");
    if (noop) {
        c->out[0] = tensor_share(c->arena, x);
        return c->out[0] ? EVAL_OK : EVAL_OOM;
    }
    const uint8_t *b = eval_bytes(c, x);
    if (!b)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(x), outs = 1, size = dtype_size(x->dtype);
    for (size_t a = 0; a < x->ndims; a++)
        outs *= red[a] ? 1 : (size_t)x->dims[a];
    if (outs > c->limit / 8)
        return eval_decline_too_large(c);
    Acc acc = {fl ? arena_array(c->arena, outs, sizeof(double)) : NULL,
               fl ? NULL : arena_array(c->arena, outs, sizeof(int64_t)),
               arena_array(c->arena, outs, sizeof(bool))};
    if ((!acc.f && !acc.i) || !acc.seen)
        return EVAL_OOM;
    memset(acc.seen, 0, outs);
    int acc_kind = reduce_is_sum_of(kind) ? R_SUM : kind;
    for (size_t e = 0; e < n; e++)
        acc_add(&acc, reduce_target(x, red, e),
                reduce_pre(kind, eval_load(x->dtype, b + e * size), fl), fl, acc_kind);
    return reduce_store(c, x, red, &acc, kind, outs ? n / outs : 0);
}

/* Axes are an input from opset 13 for ReduceSum, 18 for the others. */
static int eval_reduce_sum(EvalCtx *c) { return reduce_run(c, R_SUM, 13); }
static int eval_reduce_prod(EvalCtx *c) { return reduce_run(c, R_PROD, 18); }
static int eval_reduce_mean(EvalCtx *c) { return reduce_run(c, R_MEAN, 18); }
static int eval_reduce_max(EvalCtx *c) { return reduce_run(c, R_MAX, 18); }
static int eval_reduce_min(EvalCtx *c) { return reduce_run(c, R_MIN, 18); }
static int eval_reduce_l1(EvalCtx *c) { return reduce_run(c, R_L1, 18); }
static int eval_reduce_l2(EvalCtx *c) { return reduce_run(c, R_L2, 18); }
static int eval_reduce_sum_square(EvalCtx *c) { return reduce_run(c, R_SUMSQ, 18); }
static int eval_reduce_log_sum(EvalCtx *c) { return reduce_run(c, R_LOGSUM, 18); }
static int eval_reduce_log_sum_exp(EvalCtx *c) { return reduce_run(c, R_LOGSUMEXP, 18); }

/* CumSum, or with product CumProd (opset 26): the running value along the
 * axis, rounded to the element type at every step. */
static int cumulative(EvalCtx *c, bool product)
{
    const Tensor *x = eval_in(c, 0);
    int64_t ax;
    c->exact = EVAL_ROUNDS; /* sums in double, rounded once */
    if (!x || x->dtype == DT_BOOL || x->dtype == DT_UINT64 || eval_ints(c, 1, &ax, 1) != 1 ||
        eval_axis(ax, (int)x->ndims) < 0)
        return eval_decline(c, "an unsupported input or axis");
    int axis = eval_axis(ax, (int)x->ndims);
    bool excl = op_attr_int(c->op, "exclusive", 0), rev = op_attr_int(c->op, "reverse", 0);
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(x->dtype), d = (size_t)x->dims[axis];
    size_t inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1);
    size_t outer = (size_t)dims_numel(x->dims, (size_t)axis);
    bool fl = dtype_is_float(x->dtype);
    uint8_t *out = (uint8_t *)t->data;
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            EvalNum run = fl ? (EvalNum){.f = product} : (EvalNum){.i = product};
            for (size_t s = 0; s < d; s++) {
                size_t j = rev ? d - 1 - s : s, e = (o * d + j) * inner + in;
                EvalNum v = eval_load(x->dtype, b + e * size);
                if (excl)
                    eval_store(x->dtype, out + e * size, run);
                if (fl)
                    run.f = product ? run.f * v.f : run.f + v.f;
                else if (product)
                    run.i = (int64_t)((uint64_t)run.i * (uint64_t)v.i);
                else
                    run.i = (int64_t)((uint64_t)run.i + (uint64_t)v.i);
                uint8_t rounded[8];
                eval_store(x->dtype, rounded, run);
                run = eval_load(x->dtype, rounded);
                if (!excl)
                    eval_store(x->dtype, out + e * size, run);
            }
        }
    return EVAL_OK;
}

static int eval_cumsum(EvalCtx *c) { return cumulative(c, false); }
static int eval_cumprod(EvalCtx *c) { return cumulative(c, true); }

static int eval_trilu(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t k = 0;
    if (!x || x->ndims < 2 || (c->n_in > 1 && c->in[1] && eval_ints(c, 1, &k, 1) != 1))
        return eval_decline(c, "an unsupported input or k");
    bool upper = op_attr_int(c->op, "upper", 1) != 0;
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(x);
    int64_t rows = x->dims[x->ndims - 2], cols = x->dims[x->ndims - 1];
    for (size_t e = 0; e < n; e++) {
        int64_t j = (int64_t)e % cols, i = (int64_t)e / cols % rows;
        if (upper ? j - i >= k : j - i <= k)
            memcpy((uint8_t *)t->data + e * size, b + e * size, size);
    }
    return EVAL_OK;
}

/* MatMul shapes: A [..., M, K] and B [..., K, N], a 1-D operand promoted
 * (and its axis dropped again from the result), batch dims broadcast. */
typedef struct MatShape {
    int64_t m, k, n;
    int rank; /* of the result */
    int64_t dims[EVAL_MAX_RANK], batch_a[EVAL_MAX_RANK], batch_b[EVAL_MAX_RANK];
    int nb; /* batch rank */
} MatShape;

static int mat_shape(const Tensor *a, const Tensor *b, MatShape *s)
{
    if (!a->ndims || !b->ndims)
        return -1;
    s->m = a->ndims > 1 ? a->dims[a->ndims - 2] : 1;
    s->k = a->dims[a->ndims - 1];
    s->n = b->ndims > 1 ? b->dims[b->ndims - 1] : 1;
    if ((b->ndims > 1 ? b->dims[b->ndims - 2] : b->dims[0]) != s->k)
        return -1;
    int ra = a->ndims > 2 ? (int)a->ndims - 2 : 0, rb = b->ndims > 2 ? (int)b->ndims - 2 : 0;
    s->nb = ra > rb ? ra : rb;
    s->rank = 0;
    for (int i = 0; i < s->nb; i++) {
        int ja = i - (s->nb - ra), jb = i - (s->nb - rb);
        s->batch_a[i] = ja >= 0 ? a->dims[ja] : 1;
        s->batch_b[i] = jb >= 0 ? b->dims[jb] : 1;
        if (s->batch_a[i] != s->batch_b[i] && s->batch_a[i] != 1 && s->batch_b[i] != 1)
            return -1;
        s->dims[s->rank++] = s->batch_a[i] > s->batch_b[i] ? s->batch_a[i] : s->batch_b[i];
    }
    if (a->ndims > 1)
        s->dims[s->rank++] = s->m;
    if (b->ndims > 1)
        s->dims[s->rank++] = s->n;
    return 0;
}

/* The batch offset (in matrices) of operand batch dims bd for result batch q. */
static size_t mat_batch(const MatShape *s, const int64_t *bd, size_t q)
{
    size_t off = 0, mul = 1;
    for (int i = s->nb; i-- > 0;) {
        size_t coord = q % (size_t)s->dims[i];
        q /= (size_t)s->dims[i];
        off += (bd[i] == 1 ? 0 : coord) * mul;
        mul *= (size_t)bd[i];
    }
    return off;
}

static EvalNum mat_dot(const Tensor *a, const uint8_t *ab, const Tensor *b, const uint8_t *bb,
                       const MatShape *s, size_t ai, size_t bi)
{
    size_t sa = dtype_size(a->dtype);
    bool fl = dtype_is_float(a->dtype);
    double f = 0;
    uint64_t i = 0;
    for (int64_t k = 0; k < s->k; k++) {
        EvalNum x = eval_load(a->dtype, ab + (ai + (size_t)k) * sa);
        EvalNum y = eval_load(b->dtype, bb + (bi + (size_t)k * (size_t)s->n) * sa);
        if (fl)
            f += x.f * y.f;
        else
            i += (uint64_t)x.i * (uint64_t)y.i;
    }
    return fl ? (EvalNum){.f = f} : (EvalNum){.i = (int64_t)i};
}

/* Float MatMul through the blocked loops (eval_dense.h), each element
 * summed in mat_dot's order. */
static int matmul_float(const Tensor *a, const uint8_t *ab, const Tensor *b, const uint8_t *bb,
                        const MatShape *s, Tensor *t)
{
    size_t na = (size_t)tensor_numel(a), nb = (size_t)tensor_numel(b), nt = (size_t)tensor_numel(t);
    double *da = dense_load(a->dtype, ab, na), *db = da ? dense_load(b->dtype, bb, nb) : NULL;
    double *dt = db ? calloc(nt ? nt : 1, sizeof *dt) : NULL;
    if (dt) {
        size_t mk = (size_t)(s->m * s->k), kn = (size_t)(s->k * s->n), mn = (size_t)(s->m * s->n);
        size_t batches = (size_t)dims_numel(s->dims, (size_t)s->nb);
        for (size_t q = 0; q < batches; q++)
            dense_gemm(s->m, s->n, s->k, (DenseMat){da + mat_batch(s, s->batch_a, q) * mk, s->k, 1},
                       (DenseMat){db + mat_batch(s, s->batch_b, q) * kn, s->n, 1}, dt + q * mn);
        size_t size = dtype_size(t->dtype);
        for (size_t e = 0; e < nt; e++)
            eval_store(t->dtype, (uint8_t *)t->data + e * size, (EvalNum){.f = dt[e]});
    }
    int rc = dt ? EVAL_OK : EVAL_OOM;
    free(da);
    free(db);
    free(dt);
    return rc;
}

static int eval_matmul(EvalCtx *c)
{
    const Tensor *a = eval_in(c, 0), *b = eval_in(c, 1);
    MatShape s;
    c->exact = EVAL_ROUNDS; /* sums in double, rounded once */
    if (!a || !b || a->dtype != b->dtype || a->dtype == DT_BOOL || a->dtype == DT_UINT64 ||
        mat_shape(a, b, &s))
        return eval_decline(c, "unsupported or mismatched operands");
    int64_t batches = dims_numel(s.dims, (size_t)s.nb);
    if (eval_over_macs(c, (double)batches * (double)s.m * (double)s.n * (double)s.k))
        return eval_decline(c, "too many multiply-adds for a fold");
    const uint8_t *ab = eval_bytes(c, a), *bb = ab ? eval_bytes(c, b) : NULL;
    Tensor *t = bb ? eval_out(c, 0, a->dtype, (size_t)s.rank, s.dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    if (dtype_is_float(a->dtype))
        return matmul_float(a, ab, b, bb, &s, t);
    size_t size = dtype_size(a->dtype), mk = (size_t)(s.m * s.k), kn = (size_t)(s.k * s.n), e = 0;
    for (size_t q = 0; q < (size_t)batches; q++) {
        size_t pa = mat_batch(&s, s.batch_a, q) * mk, pb = mat_batch(&s, s.batch_b, q) * kn;
        for (int64_t i = 0; i < s.m; i++)
            for (int64_t j = 0; j < s.n; j++, e++)
                eval_store(a->dtype, (uint8_t *)t->data + e * size,
                           mat_dot(a, ab, b, bb, &s, pa + (size_t)i * (size_t)s.k, pb + (size_t)j));
    }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "ReduceSum", 1, eval_reduce_sum}, {"", "ReduceProd", 1, eval_reduce_prod},
    {"", "ReduceMean", 1, eval_reduce_mean}, {"", "ReduceMax", 1, eval_reduce_max},
    {"", "ReduceMin", 1, eval_reduce_min}, {"", "ReduceL1", 1, eval_reduce_l1},
    {"", "ReduceL2", 1, eval_reduce_l2}, {"", "ReduceSumSquare", 1, eval_reduce_sum_square},
    {"", "ReduceLogSum", 1, eval_reduce_log_sum},
    {"", "ReduceLogSumExp", 1, eval_reduce_log_sum_exp}, {"", "CumSum", 11, eval_cumsum},
    {"", "CumProd", 26, eval_cumprod},
    {"", "Trilu", 14, eval_trilu}, {"", "MatMul", 1, eval_matmul},
};

const OpKernelTable eval_reduce_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
