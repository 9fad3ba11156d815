/* eval_state.c - kernels of the opset-27 ops that carry a state from one
 * call to the next (eval.h), in double:
 * - CausalConvWithState: a depthwise 1-D convolution over the past state
 *   (zeros when absent) followed by the input, with an optional SiLU; the
 *   new state is the last kernel-1 positions of that padded input. The
 *   convolution is rounded to the input type before the SiLU, as the ONNX
 *   definition computes it in two steps.
 * - LinearAttention: per time step, the (key dim x value dim) state of each
 *   key-value head decays by exp(decay) (gated rules), the value is
 *   corrected by beta * (v - state^T k) (delta rules), k v^T is added, and
 *   each query head reads scale * q^T state of its group's head. */
#include <math.h>
#include <string.h>

#include "eval.h"

static int eval_causal_conv(EvalCtx *c)
{
    static const char *const acts[] = {"none", "silu", "swish"};
    const Tensor *x = eval_in(c, 0), *w = eval_in(c, 1);
    const Tensor *bias = c->n_in > 2 ? eval_in(c, 2) : NULL;
    const Tensor *past = c->n_in > 3 ? eval_in(c, 3) : NULL;
    int act = eval_attr_choice(c->op, "activation", acts, 3);
    c->exact = EVAL_ROUNDS;
    if (!x || !w || !dtype_is_float(x->dtype) || x->ndims != 3 || w->ndims != 3 || act == 3 ||
        w->dims[0] != x->dims[1] || w->dims[1] != 1 || w->dims[2] < 1 ||
        (bias && tensor_numel(bias) != x->dims[1]))
        return eval_decline(c, "inputs that are not (B, C, L) and a (C, 1, k) weight");
    int64_t nb = x->dims[0], ch = x->dims[1], len = x->dims[2], k = w->dims[2];
    int64_t sdims[3] = {nb, ch, k - 1};
    if (past && (past->ndims != 3 || memcmp(past->dims, sdims, sizeof sdims)))
        return eval_decline(c, "a past state that is not (B, C, k-1)");
    double *xv = eval_doubles(c, x), *wv = xv ? eval_doubles(c, w) : NULL;
    double *bv = bias && wv ? eval_doubles(c, bias) : NULL;
    double *pv = past && wv ? eval_doubles(c, past) : NULL;
    Tensor *y = wv ? eval_out(c, 0, x->dtype, 3, x->dims) : NULL;
    Tensor *st = y ? eval_out(c, 1, past ? past->dtype : x->dtype, 3, sdims) : NULL;
    if (!st || (bias && !bv) || (past && !pv))
        return c->why ? EVAL_DECLINE : eval_out_failed(c);
    size_t ys = dtype_size(y->dtype), ss = dtype_size(st->dtype);
    int64_t padded = len + k - 1;
    for (int64_t p = 0; p < nb * ch; p++) {
        int64_t cc = p % ch;
        /* position i of the padded row: the past state, then the input */
#define PADDED(i) ((i) < k - 1 ? (pv ? pv[p * (k - 1) + (i)] : 0) : xv[p * len + (i) - (k - 1)])
        for (int64_t t = 0; t < len; t++) {
            double sum = bv ? bv[cc] : 0;
            for (int64_t j = 0; j < k; j++)
                sum += wv[cc * k + j] * PADDED(t + j);
            if (act) {
                sum = eval_round_to(x->dtype, sum);
                sum = sum / (1 + exp(-sum));
            }
            eval_store(y->dtype, (uint8_t *)y->data + (size_t)(p * len + t) * ys, (EvalNum){.f = sum});
        }
        for (int64_t i = 0; i < k - 1; i++)
            eval_store(st->dtype, (uint8_t *)st->data + (size_t)(p * (k - 1) + i) * ss,
                       (EvalNum){.f = PADDED(padded - (k - 1) + i)});
#undef PADDED
    }
    return EVAL_OK;
}

enum { LA_LINEAR, LA_GATED, LA_DELTA, LA_GATED_DELTA };

typedef struct LinAttn {
    int64_t b, t, hq, hkv, dk, dv;
    int rule;
    double scale;
    const double *q, *k, *v, *decay, *beta;
    int64_t decay_last, beta_last;
    double *state; /* b, hkv, dk, dv */
} LinAttn;

/* One time step of batch row bi: the state update of each key-value head,
 * then every query head's output into out (hq * dv values). */
static void linattn_step(const LinAttn *a, int64_t bi, int64_t ti, double *vt, double *out)
{
    bool gated = a->rule == LA_GATED || a->rule == LA_GATED_DELTA;
    bool delta = a->rule == LA_DELTA || a->rule == LA_GATED_DELTA;
    int64_t row = bi * a->t + ti;
    for (int64_t h = 0; h < a->hkv; h++) {
        double *s = a->state + (bi * a->hkv + h) * a->dk * a->dv;
        const double *kt = a->k + row * a->hkv * a->dk + h * a->dk;
        memcpy(vt, a->v + row * a->hkv * a->dv + h * a->dv, (size_t)a->dv * sizeof *vt);
        for (int64_t d = 0; gated && d < a->dk; d++) {
            int64_t g = a->decay_last == a->hkv ? h : h * a->dk + d;
            double f = exp(a->decay[row * a->decay_last + g]);
            for (int64_t m = 0; m < a->dv; m++)
                s[d * a->dv + m] *= f;
        }
        if (delta) {
            double beta = a->beta[row * a->beta_last + (a->beta_last == 1 ? 0 : h)];
            for (int64_t m = 0; m < a->dv; m++) {
                double got = 0;
                for (int64_t d = 0; d < a->dk; d++)
                    got += s[d * a->dv + m] * kt[d];
                vt[m] = beta * (vt[m] - got);
            }
        }
        for (int64_t d = 0; d < a->dk; d++)
            for (int64_t m = 0; m < a->dv; m++)
                s[d * a->dv + m] += kt[d] * vt[m];
    }
    for (int64_t h = 0; h < a->hq; h++) {
        const double *s = a->state + (bi * a->hkv + h / (a->hq / a->hkv)) * a->dk * a->dv;
        const double *qt = a->q + row * a->hq * a->dk + h * a->dk;
        for (int64_t m = 0; m < a->dv; m++) {
            double sum = 0;
            for (int64_t d = 0; d < a->dk; d++)
                sum += qt[d] * s[d * a->dv + m];
            out[h * a->dv + m] = a->scale * sum;
        }
    }
}

/* The shapes and attributes into a; false when they are not LinearAttention's. */
static bool linattn_read(EvalCtx *c, LinAttn *a, const Tensor *const *in)
{
    static const char *const rules[] = {"gated_delta", "linear", "gated", "delta"};
    static const int rule_of[] = {LA_GATED_DELTA, LA_LINEAR, LA_GATED, LA_DELTA};
    int r = eval_attr_choice(c->op, "update_rule", rules, 4);
    if (r == 4 || !in[0] || !in[1] || !in[2])
        return false;
    a->rule = rule_of[r];
    a->hq = op_attr_int(c->op, "q_num_heads", 0);
    a->hkv = op_attr_int(c->op, "kv_num_heads", 0);
    for (int i = 0; i < 3; i++)
        if (in[i]->ndims != 3 || !dtype_is_float(in[i]->dtype))
            return false;
    if (a->hq <= 0 || a->hkv <= 0 || a->hq % a->hkv || in[0]->dims[2] % a->hq ||
        in[2]->dims[2] % a->hkv)
        return false;
    a->b = in[0]->dims[0], a->t = in[0]->dims[1];
    a->dk = in[0]->dims[2] / a->hq, a->dv = in[2]->dims[2] / a->hkv;
    int64_t kdims[3] = {a->b, a->t, a->hkv * a->dk};
    if (memcmp(in[1]->dims, kdims, sizeof kdims) || in[2]->dims[0] != a->b || in[2]->dims[1] != a->t)
        return false;
    bool gated = a->rule == LA_GATED || a->rule == LA_GATED_DELTA;
    bool delta = a->rule == LA_DELTA || a->rule == LA_GATED_DELTA;
    const Tensor *decay = in[4], *beta = in[5];
    if (gated != !!decay || delta != !!beta)
        return false;
    a->decay_last = decay ? decay->dims[decay->ndims - 1] : 0;
    a->beta_last = beta ? beta->dims[beta->ndims - 1] : 0;
    if ((decay && (decay->ndims != 3 || (a->decay_last != a->hkv && a->decay_last != a->hkv * a->dk) ||
                   tensor_numel(decay) != a->b * a->t * a->decay_last)) ||
        (beta && (beta->ndims != 3 || (a->beta_last != a->hkv && a->beta_last != 1) ||
                  tensor_numel(beta) != a->b * a->t * a->beta_last)))
        return false;
    double scale = op_attr_float(c->op, "scale", 0.0f);
    a->scale = scale == 0 ? 1 / sqrt((double)a->dk) : scale;
    return true;
}

static int eval_linear_attention(EvalCtx *c)
{
    const Tensor *in[6] = {NULL};
    for (size_t i = 0; i < 6 && i < c->n_in; i++)
        in[i] = eval_in(c, i);
    LinAttn a;
    memset(&a, 0, sizeof a);
    c->exact = EVAL_ROUNDS;
    if (!linattn_read(c, &a, in))
        return eval_decline(c, "inputs, heads or update_rule LinearAttention does not define");
    int64_t sdims[4] = {a.b, a.hkv, a.dk, a.dv}, odims[3] = {a.b, a.t, a.hq * a.dv};
    const Tensor *past = in[3];
    if (past && (past->ndims != 4 || memcmp(past->dims, sdims, sizeof sdims)))
        return eval_decline(c, "a past state that is not (B, kv heads, d_k, d_v)");
    double *q = eval_doubles(c, in[0]), *k = q ? eval_doubles(c, in[1]) : NULL;
    double *v = k ? eval_doubles(c, in[2]) : NULL;
    double *st = v && past ? eval_doubles(c, past) : NULL;
    a.decay = v && in[4] ? eval_doubles(c, in[4]) : NULL;
    a.beta = v && in[5] ? eval_doubles(c, in[5]) : NULL;
    size_t ns = (size_t)(a.b * a.hkv * a.dk * a.dv);
    a.state = st ? st : v ? arena_array(c->arena, ns ? ns : 1, sizeof(double)) : NULL;
    double *vt = a.state ? arena_array(c->arena, (size_t)a.dv + 1, sizeof(double)) : NULL;
    Tensor *y = vt ? eval_out(c, 0, in[0]->dtype, 3, odims) : NULL;
    Tensor *s = y ? eval_out(c, 1, past ? past->dtype : in[0]->dtype, 4, sdims) : NULL;
    if (!s || (in[4] && !a.decay) || (in[5] && !a.beta))
        return c->why ? EVAL_DECLINE : y && !s ? eval_out_failed(c) : EVAL_OOM;
    if (!st)
        memset(a.state, 0, ns * sizeof(double));
    a.q = q, a.k = k, a.v = v;
    double *out = arena_array(c->arena, (size_t)(a.hq * a.dv) + 1, sizeof(double));
    if (!out)
        return EVAL_OOM;
    size_t ys = dtype_size(y->dtype), ss = dtype_size(s->dtype);
    for (int64_t bi = 0; bi < a.b; bi++)
        for (int64_t ti = 0; ti < a.t; ti++) {
            linattn_step(&a, bi, ti, vt, out);
            size_t at = (size_t)((bi * a.t + ti) * a.hq * a.dv);
            for (int64_t e = 0; e < a.hq * a.dv; e++)
                eval_store(y->dtype, (uint8_t *)y->data + (at + (size_t)e) * ys, (EvalNum){.f = out[e]});
        }
    for (size_t e = 0; e < ns; e++)
        eval_store(s->dtype, (uint8_t *)s->data + e * ss, (EvalNum){.f = a.state[e]});
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "CausalConvWithState", 27, eval_causal_conv},
    {"", "LinearAttention", 27, eval_linear_attention},
};

const OpKernelTable eval_state_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
