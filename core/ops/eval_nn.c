/* eval_nn.c - kernels of the network ops that read whole rows (eval.h):
 * Clip, Softmax, LogSoftmax, ArgMax, ArgMin and Gemm. Computed in memory.
 *
 * A NaN input is not folded by Clip, ArgMax and ArgMin: onnxruntime's
 * result for it follows its vectorised min/max, which the specification
 * leaves open. Softmax sums its exponentials in double and rounds once
 * (eval.h); Gemm accumulates as MatMul does. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_dense.h"

/* x's elements, or NULL (c->why set) when x has a NaN (floats). */
static const uint8_t *bytes_no_nan(EvalCtx *c, const Tensor *x)
{
    const uint8_t *b = eval_bytes(c, x);
    if (!b || !dtype_is_float(x->dtype))
        return b;
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++)
        if (isnan(eval_load(x->dtype, b + e * size).f)) {
            eval_decline(c, "a NaN input, whose result onnxruntime leaves open");
            return NULL;
        }
    return b;
}

/* Clip's bound i (1 min, 2 max): an attribute before opset 11 (float
 * only), an optional scalar input from 11. false when it cannot be read. */
static bool clip_bound(EvalCtx *c, const Tensor *x, size_t i, EvalNum *v, bool *has)
{
    const char *name = i == 1 ? "min" : "max";
    *has = false;
    if (c->opset < 11) {
        *has = true;
        v->f = op_attr_float(c->op, name, i == 1 ? -FLT_MAX : FLT_MAX);
        return dtype_is_float(x->dtype);
    }
    if (c->n_in <= i || !c->in[i])
        return true;
    const Tensor *t = eval_in(c, i);
    const uint8_t *b = t ? eval_bytes(c, t) : NULL;
    if (!b || t->dtype != x->dtype || tensor_numel(t) != 1)
        return false;
    *v = eval_load(t->dtype, b);
    *has = dtype_is_float(t->dtype) ? !isnan(v->f) : true;
    return true;
}

static int eval_clip(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    EvalNum lo, hi;
    bool has_lo, has_hi;
    if (!x || x->dtype == DT_BOOL || x->dtype == DT_UINT64 || !clip_bound(c, x, 1, &lo, &has_lo) ||
        !clip_bound(c, x, 2, &hi, &has_hi))
        return eval_decline(c, "an unsupported input or bound");
    const uint8_t *b = bytes_no_nan(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    bool fl = dtype_is_float(x->dtype);
    for (size_t e = 0; e < n; e++) {
        EvalNum v = eval_load(x->dtype, b + e * size);
        /* max(x, lo) then min(., hi): with lo > hi every element is hi, as
         * the specification says. */
        if (fl) {
            v.f = has_lo && v.f < lo.f ? lo.f : v.f;
            v.f = has_hi && v.f > hi.f ? hi.f : v.f;
        } else {
            v.i = has_lo && v.i < lo.i ? lo.i : v.i;
            v.i = has_hi && v.i > hi.i ? hi.i : v.i;
        }
        eval_store(x->dtype, (uint8_t *)t->data + e * size, v);
    }
    return EVAL_OK;
}

/* x viewed as [outer, d, inner] around the reduced axis, for Softmax (the
 * axis alone from opset 13; before, every axis from `axis` on is one row:
 * d is their product, inner 1) and ArgMax/ArgMin. */
typedef struct Rows {
    size_t outer, d, inner;
} Rows;

static int rows_of(const Tensor *x, int64_t ax, bool coerce_2d, Rows *r)
{
    int a = eval_axis(ax, (int)x->ndims);
    if (a < 0 && !(coerce_2d && ax == (int64_t)x->ndims))
        return -1;
    if (a < 0)
        a = (int)x->ndims;
    r->outer = (size_t)dims_numel(x->dims, (size_t)a);
    if (coerce_2d) {
        r->d = (size_t)dims_numel(x->dims + a, x->ndims - (size_t)a);
        r->inner = 1;
        return 0;
    }
    r->d = (size_t)x->dims[a];
    r->inner = (size_t)dims_numel(x->dims + a + 1, x->ndims - (size_t)a - 1);
    return a;
}

static int softmax_run(EvalCtx *c, bool log_of)
{
    const Tensor *x = eval_in(c, 0);
    Rows r;
    c->exact = EVAL_ROUNDS; /* exp and a sum, in onnxruntime's order and approximation */
    bool coerce = c->opset < 13;
    if (!x || !dtype_is_float(x->dtype) || !x->ndims ||
        rows_of(x, op_attr_int(c->op, "axis", coerce ? 1 : -1), coerce, &r) < 0)
        return eval_decline(c, "an unsupported input or axis");
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(x->dtype);
    for (size_t o = 0; o < r.outer; o++)
        for (size_t in = 0; in < r.inner; in++) {
            size_t base = o * r.d * r.inner + in;
            double mx = -INFINITY, sum = 0;
            for (size_t j = 0; j < r.d; j++)
                mx = fmax(mx, eval_load(x->dtype, b + (base + j * r.inner) * size).f);
            for (size_t j = 0; j < r.d; j++)
                sum += exp(eval_load(x->dtype, b + (base + j * r.inner) * size).f - mx);
            for (size_t j = 0; j < r.d; j++) {
                size_t e = base + j * r.inner;
                double v = eval_load(x->dtype, b + e * size).f - mx;
                v = log_of ? v - log(sum) : exp(v) / sum;
                eval_store(x->dtype, (uint8_t *)t->data + e * size, (EvalNum){.f = v});
            }
        }
    return EVAL_OK;
}

static int eval_softmax(EvalCtx *c) { return softmax_run(c, false); }
static int eval_log_softmax(EvalCtx *c) { return softmax_run(c, true); }

/* The index of the first (or last) largest or smallest of d elements. */
static int64_t arg_pick(const Tensor *x, const uint8_t *b, size_t base, const Rows *r, bool max,
                        bool last)
{
    size_t size = dtype_size(x->dtype);
    bool fl = dtype_is_float(x->dtype);
    int64_t best = 0;
    EvalNum bv = eval_load(x->dtype, b + base * size);
    for (size_t j = 1; j < r->d; j++) {
        EvalNum v = eval_load(x->dtype, b + (base + j * r->inner) * size);
        int cmp = fl ? (v.f > bv.f) - (v.f < bv.f) : (v.i > bv.i) - (v.i < bv.i);
        if (max ? cmp > 0 : cmp < 0) {
            best = (int64_t)j;
            bv = v;
        } else if (!cmp && last) {
            best = (int64_t)j;
        }
    }
    return best;
}

/* Does another element of an inexact input's row lie within the step
 * tolerance of its extreme (eval.h)? Then onnxruntime's own rounding may
 * pick it instead. */
static bool arg_near_tie(const Tensor *x, const uint8_t *b, size_t base, const Rows *r,
                         int64_t best)
{
    size_t size = dtype_size(x->dtype);
    double bv = eval_load(x->dtype, b + (base + (size_t)best * r->inner) * size).f;
    for (size_t j = 0; x->inexact && j < r->d; j++)
        if ((int64_t)j != best &&
            eval_near_step(x->dtype, eval_load(x->dtype, b + (base + j * r->inner) * size).f, bv))
            return true;
    return false;
}

static int arg_run(EvalCtx *c, bool max)
{
    const Tensor *x = eval_in(c, 0);
    Rows r;
    int a = x && x->ndims ? rows_of(x, op_attr_int(c->op, "axis", 0), false, &r) : -1;
    if (a < 0 || x->dtype == DT_BOOL || x->dtype == DT_UINT64 || !r.d)
        return eval_decline(c, "an unsupported input or axis");
    bool keep = op_attr_int(c->op, "keepdims", 1) != 0;
    bool last = op_attr_int(c->op, "select_last_index", 0) != 0;
    int64_t dims[EVAL_MAX_RANK];
    size_t rank = 0;
    for (size_t i = 0; i < x->ndims; i++)
        if ((int)i != a || keep)
            dims[rank++] = (int)i == a ? 1 : x->dims[i];
    const uint8_t *b = bytes_no_nan(c, x);
    Tensor *t = b ? eval_out(c, 0, DT_INT64, rank, dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    int64_t *out = (int64_t *)t->data;
    c->exact = EVAL_CHECKED;
    for (size_t o = 0; o < r.outer; o++)
        for (size_t in = 0; in < r.inner; in++) {
            size_t base = o * r.d * r.inner + in;
            out[o * r.inner + in] = arg_pick(x, b, base, &r, max, last);
            if (arg_near_tie(x, b, base, &r, out[o * r.inner + in]))
                return eval_decline_step(c);
        }
    return EVAL_OK;
}

static int eval_argmax(EvalCtx *c) { return arg_run(c, true); }
static int eval_argmin(EvalCtx *c) { return arg_run(c, false); }

/* Gemm: Y = alpha * A' B' + beta * C, A' [M, K] and B' [K, N] (transposed
 * by transA/transB), C broadcast one way to [M, N]. Integers only with
 * alpha = beta = 1 (a float factor on an integer has no exact rule). */
typedef struct Gemm {
    const Tensor *a, *b, *cc;
    const uint8_t *ab, *bb, *cb;
    int64_t m, k, n, sa[2], sb[2], sc[2]; /* element strides along [row, column] */
    double alpha, beta;
} Gemm;

static int gemm_shape(EvalCtx *c, Gemm *g)
{
    if (g->a->ndims != 2 || g->b->ndims != 2)
        return -1;
    bool ta = op_attr_int(c->op, "transA", 0), tb = op_attr_int(c->op, "transB", 0);
    g->m = g->a->dims[ta ? 1 : 0];
    g->k = g->a->dims[ta ? 0 : 1];
    g->n = g->b->dims[tb ? 0 : 1];
    if (g->b->dims[tb ? 1 : 0] != g->k)
        return -1;
    g->sa[0] = ta ? 1 : g->a->dims[1];
    g->sa[1] = ta ? g->a->dims[1] : 1;
    g->sb[0] = tb ? 1 : g->b->dims[1];
    g->sb[1] = tb ? g->b->dims[1] : 1;
    if (!g->cc)
        return 0;
    const Tensor *t = g->cc;
    int64_t cr = t->ndims == 2 ? t->dims[0] : 1, cn = t->ndims >= 1 ? t->dims[t->ndims - 1] : 1;
    if (t->ndims > 2 || (cr != 1 && cr != g->m) || (cn != 1 && cn != g->n))
        return -1;
    g->sc[0] = cr == 1 ? 0 : cn;
    g->sc[1] = cn == 1 ? 0 : 1;
    return 0;
}

static EvalNum gemm_at(const Gemm *g, int32_t dt, int64_t i, int64_t j)
{
    size_t size = dtype_size(dt);
    bool fl = dtype_is_float(dt);
    double f = 0;
    uint64_t s = 0;
    for (int64_t k = 0; k < g->k; k++) {
        EvalNum x = eval_load(dt, g->ab + (size_t)(i * g->sa[0] + k * g->sa[1]) * size);
        EvalNum y = eval_load(dt, g->bb + (size_t)(k * g->sb[0] + j * g->sb[1]) * size);
        if (fl)
            f += x.f * y.f;
        else
            s += (uint64_t)x.i * (uint64_t)y.i;
    }
    EvalNum cv = g->cb ? eval_load(dt, g->cb + (size_t)(i * g->sc[0] + j * g->sc[1]) * size)
                       : (EvalNum){.i = 0};
    /* beta 0: C is not read (as onnxruntime does), so an inf or NaN in it
     * stays out rather than making 0 * inf = NaN */
    if (fl)
        return (EvalNum){.f = g->alpha * f + (g->cb && g->beta != 0 ? g->beta * cv.f : 0)};
    return (EvalNum){.i = (int64_t)(s + (uint64_t)cv.i)};
}

/* Float Gemm: A*B through the blocked loops (eval_dense.h), summed in
 * gemm_at's order, then alpha and beta*C as gemm_at applies them. */
static int gemm_float(const Gemm *g, int32_t dt, Tensor *t)
{
    size_t na = (size_t)tensor_numel(g->a), nb = (size_t)tensor_numel(g->b), nt = (size_t)(g->m * g->n);
    double *da = dense_load(dt, g->ab, na), *db = da ? dense_load(dt, g->bb, nb) : NULL;
    double *ab = db ? calloc(nt ? nt : 1, sizeof *ab) : NULL;
    if (ab) {
        dense_gemm(g->m, g->n, g->k, (DenseMat){da, g->sa[0], g->sa[1]},
                   (DenseMat){db, g->sb[0], g->sb[1]}, ab);
        size_t size = dtype_size(dt), e = 0;
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++, e++) {
                double cv = g->cb && g->beta != 0
                    ? g->beta * eval_load(dt, g->cb + (size_t)(i * g->sc[0] + j * g->sc[1]) * size).f
                    : 0;
                eval_store(dt, (uint8_t *)t->data + e * size, (EvalNum){.f = g->alpha * ab[e] + cv});
            }
    }
    int rc = ab ? EVAL_OK : EVAL_OOM;
    free(da);
    free(db);
    free(ab);
    return rc;
}

static int eval_gemm(EvalCtx *c)
{
    Gemm g;
    memset(&g, 0, sizeof g);
    c->exact = EVAL_ROUNDS; /* sums in another order */
    g.a = eval_in(c, 0);
    g.b = eval_in(c, 1);
    g.cc = c->n_in > 2 && c->in[2] ? eval_in(c, 2) : NULL;
    g.alpha = op_attr_float(c->op, "alpha", 1);
    g.beta = op_attr_float(c->op, "beta", 1);
    int32_t dt = g.a ? g.a->dtype : DT_BOOL;
    bool fl = dtype_is_float(dt);
    if (!g.a || !g.b || g.b->dtype != dt || dt == DT_BOOL || dt == DT_UINT64 ||
        (c->n_in > 2 && c->in[2] && (!g.cc || g.cc->dtype != dt)) ||
        (!fl && (g.alpha != 1 || g.beta != 1)) || gemm_shape(c, &g))
        return eval_decline(c, "unsupported or mismatched operands");
    if (eval_over_macs(c, (double)g.m * (double)g.n * (double)g.k))
        return eval_decline(c, "too many multiply-adds for a fold");
    g.ab = eval_bytes(c, g.a);
    g.bb = g.ab ? eval_bytes(c, g.b) : NULL;
    g.cb = g.bb && g.cc ? eval_bytes(c, g.cc) : NULL;
    int64_t dims[2] = {g.m, g.n};
    Tensor *t = g.bb && (g.cb || !g.cc) ? eval_out(c, 0, dt, 2, dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    if (fl)
        return gemm_float(&g, dt, t);
    size_t size = dtype_size(dt), e = 0;
    for (int64_t i = 0; i < g.m; i++)
        for (int64_t j = 0; j < g.n; j++, e++)
            eval_store(dt, (uint8_t *)t->data + e * size, gemm_at(&g, dt, i, j));
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "Clip", 1, eval_clip},       {"", "Softmax", 1, eval_softmax},
    {"", "LogSoftmax", 1, eval_log_softmax}, {"", "ArgMax", 1, eval_argmax},
    {"", "ArgMin", 1, eval_argmin},   {"", "Gemm", 1, eval_gemm},
};

const OpKernelTable eval_nn_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
