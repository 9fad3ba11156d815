/* eval_localnorm.c - kernels for the normalizations ONNX defines over a
 * neighbourhood or a set of axes (eval.h): LpNormalization (L1 or L2 along
 * one axis; a zero norm gives 0, as onnx 1.23's operator text says), LRN
 * (across neighbouring channels) and MeanVarianceNormalization (its
 * function body: (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9) over `axes`).
 * For the reference interpreter only (formatter/fold.c never folds these
 * ops). Computed in double, each result rounded once to the input's type. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

/* x's elements as doubles and a zeroed output like x; NULL when x is
 * not a float tensor or either cannot be had (c->why set, or out of memory). */
static double *localnorm_begin(EvalCtx *c, const Tensor **x, Tensor **y)
{
    *x = eval_in(c, 0);
    if (!*x || !dtype_is_float((*x)->dtype)) {
        eval_decline(c, "a non-float input");
        return NULL;
    }
    double *v = eval_doubles(c, *x);
    *y = v ? eval_out(c, 0, (*x)->dtype, (*x)->ndims, (*x)->dims) : NULL;
    return *y ? v : NULL;
}

static int localnorm_failed(const EvalCtx *c)
{
    return c->why ? EVAL_DECLINE : EVAL_OOM;
}

static void localnorm_store(Tensor *y, size_t k, double v)
{
    eval_store(y->dtype, (uint8_t *)y->data + k * dtype_size(y->dtype), (EvalNum){.f = v});
}

/* LpNormalization: x / (sum |x|^p)^(1/p) along axis (default -1), p 1 or 2. */
static int eval_lp_normalization(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t p = op_attr_int(c->op, "p", 2);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -1), (int)x->ndims) : -1;
    Tensor *y;
    if (axis < 0 || (p != 1 && p != 2))
        return eval_decline(c, "an axis out of range or a p other than 1 and 2");
    double *v = localnorm_begin(c, &x, &y);
    if (!v)
        return localnorm_failed(c);
    size_t outer = (size_t)dims_numel(x->dims, (size_t)axis), n = (size_t)x->dims[axis];
    size_t inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const double *line = v + o * n * inner + i;
            double norm = 0;
            for (size_t j = 0; j < n; j++)
                norm += p == 1 ? fabs(line[j * inner]) : line[j * inner] * line[j * inner];
            norm = p == 1 ? norm : sqrt(norm);
            for (size_t j = 0; j < n; j++)
                localnorm_store(y, o * n * inner + i + j * inner,
                                norm == 0 ? 0 : line[j * inner] / norm);
        }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* LRN: x / (bias + alpha / size * sum of x^2 over the channels
 * c - floor((size-1)/2) .. c + ceil((size-1)/2))^beta. */
static int eval_lrn(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t size = op_attr_int(c->op, "size", 0);
    Tensor *y;
    if (!x || x->ndims < 3 || size < 1)
        return eval_decline(c, "an input of rank below 3 or a size below 1");
    double *v = localnorm_begin(c, &x, &y);
    if (!v)
        return localnorm_failed(c);
    double alpha = op_attr_float(c->op, "alpha", 1e-4f), beta = op_attr_float(c->op, "beta", 0.75f);
    double bias = op_attr_float(c->op, "bias", 1.0f);
    int64_t ch = x->dims[1], before = (size - 1) / 2, after = size - 1 - before;
    size_t plane = (size_t)dims_numel(x->dims + 2, x->ndims - 2);
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t k = 0; k < ch; k++)
            for (size_t s = 0; s < plane; s++) {
                double sq = 0;
                int64_t lo = k - before < 0 ? 0 : k - before, hi = k + after >= ch ? ch - 1 : k + after;
                for (int64_t j = lo; j <= hi; j++) {
                    double e = v[(size_t)(n * ch + j) * plane + s];
                    sq += e * e;
                }
                size_t at = (size_t)(n * ch + k) * plane + s;
                localnorm_store(y, at, v[at] / pow(bias + alpha / (double)size * sq, beta));
            }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* Group of each element when the axes in `reduced` are summed over:
 * group strides gs (0 on reduced axes); the number of groups. */
static size_t mvn_groups(const Tensor *x, const bool *reduced, int64_t *gs)
{
    size_t groups = 1;
    for (int a = (int)x->ndims - 1; a >= 0; a--) {
        gs[a] = reduced[a] ? 0 : (int64_t)groups;
        groups *= reduced[a] ? 1 : (size_t)x->dims[a];
    }
    return groups;
}

/* Per group: the mean (sum[g]) and sqrt(E[X^2] - mean^2) + 1e-9 (sq[g]). */
static void mvn_moments(const Tensor *x, const double *v, const int64_t *gs, double *sum,
                        double *sq, size_t groups)
{
    size_t n = (size_t)tensor_numel(x), per = groups ? n / groups : 0;
    int64_t idx[EVAL_MAX_RANK] = {0};
    for (size_t e = 0; e < n; e++) {
        size_t g = 0;
        for (size_t a = 0; a < x->ndims; a++)
            g += (size_t)(idx[a] * gs[a]);
        sum[g] += v[e];
        sq[g] += v[e] * v[e];
        for (int a = (int)x->ndims - 1; a >= 0 && ++idx[a] == x->dims[a]; a--)
            idx[a] = 0;
    }
    for (size_t g = 0; g < groups; g++) {
        double mean = sum[g] / (double)per, var = sq[g] / (double)per - mean * mean;
        sum[g] = mean;
        sq[g] = sqrt(var < 0 ? 0 : var) + 1e-9;
    }
}

/* MeanVarianceNormalization-9/13: axes (default 0, 2, 3). */
static int eval_mvn(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t axes[EVAL_MAX_RANK] = {0, 2, 3};
    const Attr *at = op_attr(c->op, "axes");
    size_t n_axes = at ? at->n : 3;
    bool reduced[EVAL_MAX_RANK] = {false};
    if (!x || n_axes > EVAL_MAX_RANK || (at && (at->type != ATTR_INTS ||
                                                op_attr_ints_or(c->op, "axes", axes, n_axes, 0))))
        return eval_decline(c, "an unsupported input or axes");
    for (size_t k = 0; k < n_axes; k++) {
        int a = eval_axis(axes[k], (int)x->ndims);
        if (a < 0)
            return eval_decline(c, "an axis out of range");
        reduced[a] = true;
    }
    Tensor *y;
    double *v = localnorm_begin(c, &x, &y);
    if (!v)
        return localnorm_failed(c);
    int64_t gs[EVAL_MAX_RANK];
    size_t groups = mvn_groups(x, reduced, gs), n = (size_t)tensor_numel(x);
    double *sum = arena_alloc(c->arena, 2 * (groups + 1) * sizeof *sum), *sq = sum + groups + 1;
    if (!sum)
        return EVAL_OOM;
    memset(sum, 0, 2 * (groups + 1) * sizeof *sum);
    mvn_moments(x, v, gs, sum, sq, groups);
    int64_t idx[EVAL_MAX_RANK] = {0};
    for (size_t e = 0; e < n; e++) {
        size_t g = 0;
        for (size_t a = 0; a < x->ndims; a++)
            g += (size_t)(idx[a] * gs[a]);
        localnorm_store(y, e, (v[e] - sum[g]) / sq[g]);
        for (int a = (int)x->ndims - 1; a >= 0 && ++idx[a] == x->dims[a]; a--)
            idx[a] = 0;
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "LpNormalization", 1, eval_lp_normalization},
    {"", "LRN", 1, eval_lrn},
    {"", "MeanVarianceNormalization", 9, eval_mvn},
};

const OpKernelTable eval_localnorm_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
