/* eval_run_nn.c - kernels only the reference interpreter (eval_run.c)
 * uses: ops whose inputs are never all constant in a model worth folding
 * (activations flow through them), kept out of the registry so that the
 * fold pass's output does not change; the poolings are in eval_pool.c. */
#include <math.h>
#include <string.h>

#include "eval.h"
#include "eval_pool.h"
#include "eval_run_nn.h"

/* The mean and population variance of channel k of x (bytes xb) over the
 * batch and spatial axes. */
static void batch_stats(const Tensor *x, const uint8_t *xb, int64_t k, int64_t inner,
                        double *mean, double *var)
{
    int64_t ch = x->dims[1];
    size_t n = (size_t)tensor_numel(x), xs = dtype_size(x->dtype), step = (size_t)(ch * inner);
    double sum = 0, sq = 0, count = (double)(x->dims[0] * inner);
    for (size_t e = (size_t)(k * inner); e < n; e += step)
        for (int64_t j = 0; j < inner; j++)
            sum += eval_load(x->dtype, xb + (e + (size_t)j) * xs).f;
    *mean = count ? sum / count : 0;
    for (size_t e = (size_t)(k * inner); e < n; e += step)
        for (int64_t j = 0; j < inner; j++) {
            double d = eval_load(x->dtype, xb + (e + (size_t)j) * xs).f - *mean;
            sq += d * d;
        }
    *var = count ? sq / count : 0;
}

/* Training mode (opset 14 on) uses the batch's own mean and variance and
 * also outputs the running ones: input * momentum + batch * (1 - momentum). */
static int batch_norm_running(EvalCtx *c, int64_t k, double *v, double mean, double var)
{
    double m = op_attr_float(c->op, "momentum", 0.9f);
    for (size_t o = 1; o < 3 && o < c->n_out; o++) {
        if (!c->op->outputs[o])
            continue;
        const Tensor *in = c->in[o + 2];
        if (!c->out[o] && !eval_out(c, o, in->dtype, in->ndims, in->dims))
            return eval_out_failed(c);
        double r = v[o + 2] * m + (o == 1 ? mean : var) * (1 - m);
        eval_store(in->dtype, (uint8_t *)c->out[o]->data + (size_t)k * dtype_size(in->dtype),
                   (EvalNum){.f = r});
    }
    v[3] = mean, v[4] = var;
    return EVAL_OK;
}

/* BatchNormalization: y = (x - mean) / sqrt(var + eps) * scale + B along
 * axis 1, with the given mean and variance or, in training mode, the
 * batch's. */
static int run_batch_norm(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    if (!x || !dtype_is_float(x->dtype) || x->ndims < 2 || c->n_in < 5)
        return eval_decline(c, "an input is not a float tensor of rank 2 or more");
    bool training = op_attr_int(c->op, "training_mode", 0) != 0;
    if ((training && c->opset < 14) || !op_attr_int(c->op, "spatial", 1) ||
        op_attr_int(c->op, "is_test", 1) == 0)
        return eval_decline(c, "only the inference form, and training mode from opset 14, are run");
    int64_t ch = x->dims[1], inner = 1;
    for (size_t a = 2; a < x->ndims; a++)
        inner *= x->dims[a];
    const uint8_t *p[5];
    for (size_t i = 0; i < 5; i++) {
        const Tensor *t = eval_in(c, i);
        if (!t || (i && tensor_numel(t) != ch) || !(p[i] = eval_bytes(c, t)))
            return c->why ? EVAL_DECLINE : eval_decline(c, "a parameter has not C elements");
    }
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    double eps = op_attr_float(c->op, "epsilon", 1e-5f);
    size_t n = (size_t)tensor_numel(x), xs = dtype_size(x->dtype);
    for (int64_t k = 0; k < ch; k++) {
        double v[5], mean, var;
        for (size_t i = 1; i < 5; i++) {
            int32_t dt = c->in[i]->dtype;
            v[i] = eval_load(dt, p[i] + (size_t)k * dtype_size(dt)).f;
        }
        if (training) {
            batch_stats(x, p[0], k, inner, &mean, &var);
            int rc = batch_norm_running(c, k, v, mean, var);
            if (rc != EVAL_OK)
                return rc;
        }
        double mul = v[1] / sqrt(v[4] + eps), add = v[2] - v[3] * mul;
        for (size_t e = (size_t)(k * inner); e < n; e += (size_t)(ch * inner))
            for (int64_t j = 0; j < inner; j++) {
                size_t at = (e + (size_t)j) * xs;
                double r = eval_load(x->dtype, p[0] + at).f * mul + add;
                eval_store(x->dtype, (uint8_t *)y->data + at, (EvalNum){.f = r});
            }
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* GlobalAveragePool: the mean of each (n, c) plane, summed in double. */
static int run_global_average_pool(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    const uint8_t *p = x && dtype_is_float(x->dtype) && x->ndims >= 2 ? eval_bytes(c, x) : NULL;
    if (!p)
        return c->why ? EVAL_DECLINE : eval_decline(c, "the input is not a float tensor");
    int64_t dims[EVAL_MAX_RANK], inner = 1;
    for (size_t a = 0; a < x->ndims && a < EVAL_MAX_RANK; a++) {
        dims[a] = a < 2 ? x->dims[a] : 1;
        inner *= a < 2 ? 1 : x->dims[a];
    }
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, dims);
    if (!y)
        return eval_out_failed(c);
    size_t planes = (size_t)(x->dims[0] * x->dims[1]), xs = dtype_size(x->dtype);
    for (size_t k = 0; k < planes; k++) {
        double sum = 0;
        for (int64_t j = 0; j < inner; j++)
            sum += eval_load(x->dtype, p + (k * (size_t)inner + (size_t)j) * xs).f;
        eval_store(x->dtype, (uint8_t *)y->data + k * xs, (EvalNum){.f = sum / (double)inner});
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

OpEvalFn eval_run_kernel(const char *domain, const char *type)
{
    if (*domain && strcmp(domain, "ai.onnx") != 0)
        return NULL;
    if (strcmp(type, "BatchNormalization") == 0)
        return run_batch_norm;
    if (strcmp(type, "GlobalAveragePool") == 0)
        return run_global_average_pool;
    for (size_t i = 0; i < eval_pool_kernels.n; i++)
        if (strcmp(type, eval_pool_kernels.entries[i].type) == 0)
            return eval_pool_kernels.entries[i].eval;
    return NULL;
}
