/* eval_activation.c - kernels of the activation functions with attributes
 * (eval.h): HardSigmoid, HardSwish, LeakyRelu, Elu, Selu, Celu,
 * ThresholdedRelu, Shrink, Mish, Gelu (exact or tanh), Swish, PRelu, whose
 * slope broadcasts to the input, and SwiGLU (Swish of A times B, both of one
 * shape and type). Each element in double, rounded once to
 * the float type of the input. */
#include <math.h>
#include <string.h>

#include "eval.h"

enum {
    ACT_HARD_SIGMOID, ACT_HARD_SWISH, ACT_LEAKY_RELU, ACT_ELU, ACT_SELU, ACT_CELU,
    ACT_THRESHOLDED_RELU, ACT_SHRINK, ACT_MISH, ACT_GELU, ACT_GELU_TANH, ACT_SWISH, ACT_PRELU,
    ACT_SWIGLU,
};

typedef struct Act {
    int kind;
    double alpha, beta, gamma;
} Act;

static double hard_sigmoid(double x, double alpha, double beta)
{
    return fmax(0, fmin(1, alpha * x + beta));
}

static double act_apply(const Act *a, double x, double slope)
{
    switch (a->kind) {
    case ACT_HARD_SIGMOID: return hard_sigmoid(x, a->alpha, a->beta);
    case ACT_HARD_SWISH: return x * hard_sigmoid(x, 1.0 / 6, 0.5);
    case ACT_LEAKY_RELU: return x < 0 ? a->alpha * x : x;
    case ACT_ELU: return x < 0 ? a->alpha * expm1(x) : x;
    case ACT_SELU: return a->gamma * (x <= 0 ? a->alpha * expm1(x) : x);
    case ACT_CELU: return fmax(0, x) + fmin(0, a->alpha * expm1(x / a->alpha));
    case ACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0;
    case ACT_SHRINK: return x < -a->gamma ? x + a->beta : x > a->gamma ? x - a->beta : 0;
    case ACT_MISH: return x * tanh(log1p(exp(x)));
    case ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case ACT_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ACT_SWISH: return x / (1 + exp(-a->alpha * x));
    case ACT_SWIGLU: return x / (1 + exp(-a->alpha * x)) * slope;
    default: return x < 0 ? slope * x : x; /* ACT_PRELU */
    }
}

static int act_run(EvalCtx *c, const Act *a)
{
    bool binary = a->kind == ACT_PRELU || a->kind == ACT_SWIGLU;
    const Tensor *x = eval_in(c, 0), *slope = binary ? eval_in(c, 1) : NULL;
    c->exact = EVAL_ROUNDS;
    bool slope_ok = !binary || (slope && x && slope->dtype == x->dtype);
    if (slope_ok && a->kind == ACT_SWIGLU)
        slope_ok = slope->ndims == x->ndims &&
                   !memcmp(slope->dims, x->dims, x->ndims * sizeof *x->dims);
    if (!x || !dtype_is_float(x->dtype) || !slope_ok)
        return eval_decline(c, "an input that is not a float tensor");
    const uint8_t *xb = eval_bytes(c, x), *sb = slope && xb ? eval_bytes(c, slope) : NULL;
    Tensor *t = xb && (!slope || sb) ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++) {
        double s = 0;
        if (slope) {
            int64_t so = eval_broadcast_offset(slope, x->dims, x->ndims, e);
            if (so < 0)
                return eval_decline(c, "a slope that does not broadcast to the input");
            s = eval_load(slope->dtype, sb + (size_t)so * size).f;
        }
        double y = act_apply(a, eval_load(x->dtype, xb + e * size).f, s);
        eval_store(x->dtype, (uint8_t *)t->data + e * size, (EvalNum){.f = y});
    }
    return EVAL_OK;
}

static double attr(EvalCtx *c, const char *name, double fallback)
{
    return op_attr_float(c->op, name, (float)fallback);
}

static int eval_hard_sigmoid(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_HARD_SIGMOID, attr(c, "alpha", 0.2), attr(c, "beta", 0.5), 0});
}
static int eval_hard_swish(EvalCtx *c) { return act_run(c, &(Act){ACT_HARD_SWISH, 0, 0, 0}); }
static int eval_leaky_relu(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_LEAKY_RELU, attr(c, "alpha", 0.01), 0, 0});
}
static int eval_elu(EvalCtx *c) { return act_run(c, &(Act){ACT_ELU, attr(c, "alpha", 1), 0, 0}); }
static int eval_selu(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_SELU, attr(c, "alpha", 1.67326319217681884765625), 0,
                             attr(c, "gamma", 1.05070102214813232421875)});
}
static int eval_celu(EvalCtx *c) { return act_run(c, &(Act){ACT_CELU, attr(c, "alpha", 1), 0, 0}); }
static int eval_thresholded_relu(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_THRESHOLDED_RELU, attr(c, "alpha", 1), 0, 0});
}
static int eval_shrink(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_SHRINK, 0, attr(c, "bias", 0), attr(c, "lambd", 0.5)});
}
static int eval_mish(EvalCtx *c) { return act_run(c, &(Act){ACT_MISH, 0, 0, 0}); }
static int eval_swish(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_SWISH, attr(c, "alpha", 1), 0, 0});
}
static int eval_prelu(EvalCtx *c) { return act_run(c, &(Act){ACT_PRELU, 0, 0, 0}); }
static int eval_swiglu(EvalCtx *c)
{
    return act_run(c, &(Act){ACT_SWIGLU, attr(c, "alpha", 1), 0, 0});
}

static int eval_gelu(EvalCtx *c)
{
    const Attr *ap = op_attr(c->op, "approximate");
    bool tanh_form = ap && ap->s.len == 4 && !memcmp(ap->s.ptr, "tanh", 4);
    if (ap && !tanh_form && !(ap->s.len == 4 && !memcmp(ap->s.ptr, "none", 4)))
        return eval_decline(c, "an unknown approximate");
    return act_run(c, &(Act){tanh_form ? ACT_GELU_TANH : ACT_GELU, 0, 0, 0});
}

static const OpKernel kernels[] = {
    {"", "HardSigmoid", 6, eval_hard_sigmoid},
    {"", "HardSwish", 14, eval_hard_swish},
    {"", "LeakyRelu", 6, eval_leaky_relu},
    {"", "Elu", 6, eval_elu},
    {"", "Selu", 6, eval_selu},
    {"", "Celu", 12, eval_celu},
    {"", "ThresholdedRelu", 10, eval_thresholded_relu},
    {"", "Shrink", 9, eval_shrink},
    {"", "Mish", 18, eval_mish},
    {"", "Gelu", 20, eval_gelu},
    {"", "PRelu", 7, eval_prelu},
    {"", "Swish", 24, eval_swish},
    {"", "SwiGLU", 28, eval_swiglu},
};

const OpKernelTable eval_activation_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
