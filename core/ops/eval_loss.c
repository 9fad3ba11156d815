/* eval_loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * kernels (eval.h): per-element losses -input[n][target][d] * weight[target]
 * (none), their sum, or their sum over the summed weights (mean), targets
 * equal to ignore_index contributing nothing. Computed in double, each
 * result rounded once. Interpreter-only, like eval_norm.c's kernels
 * (formatter/fold.c never folds these ops). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

enum { LOSS_NONE, LOSS_SUM, LOSS_MEAN };

/* An input of shape (N, C, d1..dk) read as doubles, with its target. */
typedef struct LossIn {
    const Tensor *x, *target, *weight;
    const uint8_t *tb, *wb;
    double *v; /* N*C*D values (log-probabilities for SoftmaxCrossEntropyLoss) */
    int64_t n, classes, inner; /* N, C, D = d1*..*dk */
} LossIn;

/* Checks x, target (N, d1..dk) and weight (C); -1 when they do not fit. */
static int loss_inputs(EvalCtx *c, LossIn *l)
{
    memset(l, 0, sizeof *l);
    l->x = eval_in(c, 0);
    l->target = eval_in(c, 1);
    l->weight = eval_in(c, 2);
    const Tensor *x = l->x, *t = l->target;
    if (!x || !t || !dtype_is_float(x->dtype) || x->ndims < 2 || !eval_index_type(t) ||
        t->ndims != x->ndims - 1 || (c->n_in > 2 && c->in[2] && !l->weight))
        return -1;
    for (size_t a = 0; a < t->ndims; a++)
        if (t->dims[a] != x->dims[a ? a + 1 : 0])
            return -1;
    l->n = x->dims[0], l->classes = x->dims[1];
    l->inner = dims_numel(x->dims + 2, x->ndims - 2);
    if (l->weight && (!dtype_is_float(l->weight->dtype) || tensor_numel(l->weight) != l->classes ||
                      !(l->wb = eval_bytes(c, l->weight))))
        return -1;
    return (l->tb = eval_bytes(c, t)) ? 0 : -1;
}

/* x's values into l->v. */
static int loss_load(EvalCtx *c, LossIn *l)
{
    const uint8_t *xb = eval_bytes(c, l->x);
    size_t n = (size_t)tensor_numel(l->x), size = dtype_size(l->x->dtype);
    l->v = xb ? malloc((n ? n : 1) * sizeof *l->v) : NULL;
    if (!l->v)
        return xb ? EVAL_OOM : EVAL_DECLINE;
    for (size_t k = 0; k < n; k++)
        l->v[k] = eval_load(l->x->dtype, xb + k * size).f;
    return EVAL_OK;
}

/* The losses of l->v: output 0 shaped like the target (none) or a scalar. */
static int loss_reduce(EvalCtx *c, const LossIn *l)
{
    static const char *const reductions[] = {"mean", "none", "sum"};
    int r = eval_attr_choice(c->op, "reduction", reductions, 3);
    int kind = r == 1 ? LOSS_NONE : r == 2 ? LOSS_SUM : LOSS_MEAN;
    bool has_ignore = op_attr(c->op, "ignore_index") != NULL;
    int64_t ignore = op_attr_int(c->op, "ignore_index", 0);
    if (r == 3)
        return eval_decline(c, "an unknown reduction");
    Tensor *y = eval_out(c, 0, l->x->dtype, kind == LOSS_NONE ? l->target->ndims : 0,
                         l->target->dims);
    if (!y)
        return eval_out_failed(c);
    double sum = 0, wsum = 0;
    size_t m = (size_t)tensor_numel(l->target);
    for (size_t k = 0; k < m; k++) {
        int64_t cls = eval_load(l->target->dtype, l->tb + k * dtype_size(l->target->dtype)).i;
        double loss = 0, w = 0;
        if (!has_ignore || cls != ignore) {
            if (cls < 0 || cls >= l->classes)
                return eval_decline(c, "a target out of the class range");
            w = l->weight ? eval_load(l->weight->dtype,
                                      l->wb + (size_t)cls * dtype_size(l->weight->dtype)).f : 1;
            int64_t n = (int64_t)k / l->inner, d = (int64_t)k % l->inner;
            loss = -l->v[(n * l->classes + cls) * l->inner + d] * w;
        }
        if (kind == LOSS_NONE)
            eval_store(y->dtype, (uint8_t *)y->data + k * dtype_size(y->dtype), (EvalNum){.f = loss});
        sum += loss;
        wsum += w;
    }
    if (kind != LOSS_NONE)
        eval_store(y->dtype, (uint8_t *)y->data, (EvalNum){.f = kind == LOSS_SUM ? sum : sum / wsum});
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* l->v replaced by its log-softmax over the class axis; output 1 (when
 * asked) holds it. */
static int log_softmax(EvalCtx *c, LossIn *l)
{
    int64_t cs = l->inner;
    for (int64_t n = 0; n < l->n; n++)
        for (int64_t d = 0; d < l->inner; d++) {
            double *v = l->v + n * l->classes * cs + d, mx = -INFINITY, s = 0;
            for (int64_t k = 0; k < l->classes; k++)
                mx = fmax(mx, v[k * cs]);
            for (int64_t k = 0; k < l->classes; k++)
                s += exp(v[k * cs] - mx);
            for (int64_t k = 0; k < l->classes; k++)
                v[k * cs] -= mx + log(s);
        }
    if (c->n_out < 2)
        return EVAL_OK;
    Tensor *lp = eval_out(c, 1, l->x->dtype, l->x->ndims, l->x->dims);
    if (!lp)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(lp), size = dtype_size(lp->dtype);
    for (size_t k = 0; k < n; k++)
        eval_store(lp->dtype, (uint8_t *)lp->data + k * size, (EvalNum){.f = l->v[k]});
    return EVAL_OK;
}

/* The loss of the input itself, or of its log-softmax (with_softmax). */
static int loss_run(EvalCtx *c, bool with_softmax)
{
    LossIn l;
    if (loss_inputs(c, &l))
        return c->why ? EVAL_DECLINE : eval_decline(c, "inputs of unsupported types or shapes");
    int rc = loss_load(c, &l);
    rc = rc || !with_softmax ? rc : log_softmax(c, &l);
    rc = rc ? rc : loss_reduce(c, &l);
    free(l.v);
    return rc;
}

static int eval_nll_loss(EvalCtx *c)
{
    return loss_run(c, false);
}

static int eval_sce_loss(EvalCtx *c)
{
    return loss_run(c, true);
}

static const OpKernel kernels[] = {
    {"", "NegativeLogLikelihoodLoss", 12, eval_nll_loss},
    {"", "SoftmaxCrossEntropyLoss", 12, eval_sce_loss},
};

const OpKernelTable eval_loss_kernels = {kernels, sizeof kernels / sizeof *kernels};
