/* eval_loss.c - the kernels of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (eval.h), in double, rounded once.
 *
 * Both read scores of shape (N, C, d1, ..., dk) and targets (N, d1, ...,
 * dk): the loss of an element is -weight[t] * logp[n, t, d] for its target
 * t, 0 (with weight 0) where t is ignore_index. reduction "none" gives the
 * per-element losses, "sum" their sum, "mean" the sum over the weights'
 * sum. SoftmaxCrossEntropyLoss takes logp = log_softmax(scores, axis 1) and
 * can return it as a second output. */
#include <math.h>
#include <string.h>

#include "eval.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct Loss {
    const Tensor *x, *target, *weight;
    const uint8_t *wb;
    int64_t *t;       /* the targets, read as integers */
    double *logp;     /* N * C * D log-probabilities */
    int64_t n, classes, d; /* d: the product of d1..dk */
    int64_t ignore;
    bool has_ignore;
    int reduction;
} Loss;

static int loss_reduction(EvalCtx *c)
{
    const Attr *at = op_attr(c->op, "reduction");
    if (!at)
        return RED_MEAN;
    Bytes s = at->s;
    if (s.len == 4 && !memcmp(s.ptr, "none", 4))
        return RED_NONE;
    if (s.len == 3 && !memcmp(s.ptr, "sum", 3))
        return RED_SUM;
    return s.len == 4 && !memcmp(s.ptr, "mean", 4) ? RED_MEAN : -1;
}

/* Shapes and targets: false when they do not fit or a target is out of
 * range (which the spec leaves undefined). */
static bool loss_read(EvalCtx *c, Loss *l)
{
    memset(l, 0, sizeof *l);
    l->x = eval_in(c, 0);
    l->target = eval_in(c, 1);
    l->weight = c->n_in > 2 ? c->in[2] : NULL;
    l->reduction = loss_reduction(c);
    const Attr *ig = op_attr(c->op, "ignore_index");
    l->has_ignore = ig != NULL;
    l->ignore = ig ? ig->i : 0;
    if (!l->x || !l->target || l->reduction < 0 || !dtype_is_float(l->x->dtype) ||
        l->x->ndims < 2 || l->target->ndims != l->x->ndims - 1 ||
        l->target->dims[0] != l->x->dims[0])
        return false;
    for (size_t i = 1; i < l->target->ndims; i++)
        if (l->target->dims[i] != l->x->dims[i + 1])
            return false;
    l->n = l->x->dims[0];
    l->classes = l->x->dims[1];
    l->d = dims_numel(l->x->dims + 2, l->x->ndims - 2);
    size_t count = (size_t)(l->n * l->d);
    l->t = arena_array(c->arena, count ? count : 1, sizeof *l->t);
    if (!l->t || eval_ints(c, 1, l->t, count) != (long)count)
        return false;
    if (l->weight && (tensor_numel(l->weight) != l->classes || l->weight->dtype != l->x->dtype ||
                      !(l->wb = eval_bytes(c, l->weight))))
        return false;
    for (size_t k = 0; k < count; k++)
        if (!(l->has_ignore && l->t[k] == l->ignore) && (l->t[k] < 0 || l->t[k] >= l->classes))
            return false;
    return true;
}

/* logp = the scores themselves (NLL), or their log_softmax over C (SCE). */
static bool loss_logp(EvalCtx *c, Loss *l, bool softmax)
{
    if (!(l->logp = eval_doubles(c, l->x)))
        return false;
    for (int64_t n = 0; softmax && n < l->n; n++)
        for (int64_t d = 0; d < l->d; d++) {
            double *row = l->logp + n * l->classes * l->d + d, top = -INFINITY, sum = 0;
            for (int64_t k = 0; k < l->classes; k++)
                top = row[k * l->d] > top ? row[k * l->d] : top;
            for (int64_t k = 0; k < l->classes; k++)
                sum += exp(row[k * l->d] - top);
            for (int64_t k = 0; k < l->classes; k++)
                row[k * l->d] -= top + log(sum);
        }
    return true;
}

static double loss_weight(const Loss *l, int64_t cls)
{
    if (!l->wb)
        return 1;
    return eval_load(l->weight->dtype, l->wb + (size_t)cls * dtype_size(l->weight->dtype)).f;
}

static int loss_run(EvalCtx *c, bool softmax)
{
    Loss l;
    c->exact = EVAL_ROUNDS; /* logs, exponentials and sums in double, rounded once */
    if (!loss_read(c, &l))
        return eval_decline(c, "unsupported inputs, reduction or a target out of range");
    if (!loss_logp(c, &l, softmax))
        return eval_out_failed(c);
    int32_t dt = l.x->dtype;
    Tensor *out = l.reduction == RED_NONE ? eval_out(c, 0, dt, l.target->ndims, l.target->dims)
                                          : eval_out(c, 0, dt, 0, NULL);
    if (!out)
        return eval_out_failed(c);
    double sum = 0, weights = 0;
    size_t size = dtype_size(dt);
    for (int64_t n = 0; n < l.n; n++)
        for (int64_t d = 0; d < l.d; d++) {
            int64_t t = l.t[n * l.d + d];
            bool ignored = l.has_ignore && t == l.ignore;
            double w = ignored ? 0 : loss_weight(&l, t);
            double v = ignored ? 0 : -w * l.logp[(n * l.classes + t) * l.d + d];
            if (l.reduction == RED_NONE)
                eval_store(dt, (uint8_t *)out->data + (size_t)(n * l.d + d) * size,
                           (EvalNum){.f = v});
            sum += v;
            weights += w;
        }
    if (l.reduction != RED_NONE)
        eval_store(dt, (uint8_t *)out->data,
                   (EvalNum){.f = l.reduction == RED_SUM ? sum : sum / weights});
    if (!softmax || c->n_out < 2)
        return EVAL_OK;
    Tensor *lp = eval_out(c, 1, dt, l.x->ndims, l.x->dims);
    if (!lp)
        return eval_out_failed(c);
    for (size_t k = 0; k < (size_t)tensor_numel(lp); k++)
        eval_store(dt, (uint8_t *)lp->data + k * size, (EvalNum){.f = l.logp[k]});
    return EVAL_OK;
}

static int eval_nll_loss(EvalCtx *c) { return loss_run(c, false); }
static int eval_softmax_ce_loss(EvalCtx *c) { return loss_run(c, true); }

static const OpKernel kernels[] = {
    {"", "NegativeLogLikelihoodLoss", 12, eval_nll_loss},
    {"", "SoftmaxCrossEntropyLoss", 12, eval_softmax_ce_loss},
};

const OpKernelTable eval_loss_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
