/* eval_rnn.c - the kernels of the recurrent ops RNN, GRU and LSTM (opset 7
 * on; eval.h), in double, rounded once to the element type.
 *
 * Gate rows in W, R and B are in ONNX order: RNN one block, GRU z r h, LSTM
 * i o f c (peepholes P: i o f). Each direction runs over each batch entry's
 * own length (sequence_lens): a reverse direction starts at its last valid
 * step, Y is zero past the length, Y_h / Y_c hold the last valid state.
 * layout = 1 (opset 14) puts the batch first in X, Y, the initial and the
 * final states. Activations are the defaults or named ones that take no
 * alpha or beta; clip bounds every gate's input. */
#include <math.h>
#include <strings.h>
#include <string.h>

#include "eval.h"

enum { K_RNN, K_GRU, K_LSTM };
enum { A_SIGMOID, A_TANH, A_RELU, A_SOFTSIGN, A_SOFTPLUS, A_UNKNOWN };
enum { RNN_MAX_ACTS = 3 };

typedef struct Rnn {
    int kind, gates, n_acts;
    int64_t seq, batch, in, hid, dirs;
    bool batch_first, linear_before_reset, input_forget;
    bool reverse; /* one direction, run from the last step */
    double clip; /* 0: none */
    int act[2][RNN_MAX_ACTS];
    double *x, *w, *r, *b, *p, *h0, *c0; /* NULL when absent */
    int64_t *lens;
} Rnn;

static const int RNN_DEFAULTS[3][RNN_MAX_ACTS] = {
    {A_TANH}, {A_SIGMOID, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}};

static double rnn_act(int a, double x)
{
    switch (a) {
    case A_SIGMOID: return 1 / (1 + exp(-x));
    case A_TANH: return tanh(x);
    case A_RELU: return x > 0 ? x : 0;
    case A_SOFTSIGN: return x / (1 + fabs(x));
    default: return log1p(exp(x)); /* A_SOFTPLUS */
    }
}

static int rnn_act_code(Bytes name)
{
    static const char *const NAMES[] = {"Sigmoid", "Tanh", "Relu", "Softsign", "Softplus"};
    for (int i = 0; i < A_UNKNOWN; i++)
        if (strlen(NAMES[i]) == name.len &&
            strncasecmp(NAMES[i], (const char *)name.ptr, name.len) == 0)
            return i;
    return A_UNKNOWN;
}

/* Input i as doubles in the arena (NULL when absent); false when present
 * but unreadable or of another size than want elements. */
static bool rnn_doubles(EvalCtx *c, size_t i, int64_t want, double **out)
{
    const Tensor *t = c->n_in > i ? c->in[i] : NULL;
    *out = NULL;
    if (!t)
        return true;
    bool fits = tensor_numel(t) == want && dtype_is_float(t->dtype);
    return fits && (*out = eval_doubles(c, t)) != NULL;
}

static bool rnn_lens(EvalCtx *c, Rnn *n)
{
    const Tensor *t = c->n_in > 4 ? c->in[4] : NULL;
    if (!t)
        return true;
    n->lens = arena_array(c->arena, (size_t)n->batch, sizeof *n->lens);
    if (!n->lens || eval_ints(c, 4, n->lens, (size_t)n->batch) != n->batch)
        return false;
    for (int64_t b = 0; b < n->batch; b++)
        if (n->lens[b] < 0 || n->lens[b] > n->seq)
            return false;
    return true;
}

static bool rnn_acts(EvalCtx *c, Rnn *n)
{
    const Attr *at = op_attr(c->op, "activations");
    n->n_acts = n->kind + 1; /* RNN 1, GRU 2, LSTM 3 */
    if (op_attr(c->op, "activation_alpha") || op_attr(c->op, "activation_beta"))
        return false;
    for (int64_t d = 0; d < n->dirs; d++)
        for (int k = 0; k < n->n_acts; k++) {
            size_t i = (size_t)(d * n->n_acts + k);
            n->act[d][k] = !at ? RNN_DEFAULTS[n->kind][k]
                           : i < at->n ? rnn_act_code(at->strings[i]) : A_UNKNOWN;
            if (n->act[d][k] == A_UNKNOWN)
                return false;
        }
    return true;
}

static bool rnn_attrs(EvalCtx *c, Rnn *n, const Tensor *x)
{
    const Attr *dir = op_attr(c->op, "direction");
    Bytes d = dir ? dir->s : (Bytes){(const uint8_t *)"forward", 7};
    bool bidi = d.len == 13 && !memcmp(d.ptr, "bidirectional", 13);
    n->dirs = bidi ? 2 : 1;
    if (!bidi && !(d.len == 7 && !memcmp(d.ptr, "forward", 7)) &&
        !(d.len == 7 && !memcmp(d.ptr, "reverse", 7)))
        return false;
    n->batch_first = op_attr_int(c->op, "layout", 0) != 0;
    n->seq = x->dims[n->batch_first ? 1 : 0];
    n->batch = x->dims[n->batch_first ? 0 : 1];
    n->in = x->dims[2];
    n->hid = op_attr_int(c->op, "hidden_size", 0);
    n->clip = op_attr_float(c->op, "clip", 0);
    n->linear_before_reset = op_attr_int(c->op, "linear_before_reset", 0) != 0;
    n->input_forget = op_attr_int(c->op, "input_forget", 0) != 0;
    n->reverse = !bidi && d.len == 7 && !memcmp(d.ptr, "reverse", 7);
    return !op_attr(c->op, "output_sequence") && n->hid > 0 && n->clip >= 0;
}

static bool rnn_read(EvalCtx *c, Rnn *n, int kind)
{
    const Tensor *x = eval_in(c, 0);
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->gates = kind == K_RNN ? 1 : kind == K_GRU ? 3 : 4;
    if (!x || x->ndims != 3 || !dtype_is_float(x->dtype) || !rnn_attrs(c, n, x))
        return false;
    if (!rnn_acts(c, n))
        return false;
    int64_t gh = n->gates * n->hid, states = n->dirs * n->batch * n->hid;
    if (!rnn_doubles(c, 0, n->seq * n->batch * n->in, &n->x) ||
        !rnn_doubles(c, 1, n->dirs * gh * n->in, &n->w) ||
        !rnn_doubles(c, 2, n->dirs * gh * n->hid, &n->r) ||
        !rnn_doubles(c, 3, n->dirs * 2 * gh, &n->b) || !rnn_lens(c, n) ||
        !rnn_doubles(c, 5, states, &n->h0) ||
        (kind == K_LSTM && (!rnn_doubles(c, 6, states, &n->c0) ||
                            !rnn_doubles(c, 7, n->dirs * 3 * n->hid, &n->p))))
        return false;
    return n->w && n->r;
}

/* Index of (step, batch) in X, and of (dir, batch) in the states. */
static size_t rnn_x_at(const Rnn *n, int64_t t, int64_t b)
{
    return (size_t)((n->batch_first ? b * n->seq + t : t * n->batch + b) * n->in);
}

static size_t rnn_state_at(const Rnn *n, int64_t d, int64_t b)
{
    return (size_t)((n->batch_first ? b * n->dirs + d : d * n->batch + b) * n->hid);
}

/* Gate row g of direction d: W x_t + Wb (into xs[g*hid + j]) and R h + Rb
 * (into hs), each row kept apart because GRU mixes them per gate. */
static void rnn_projections(const Rnn *n, int64_t d, const double *xt, const double *h,
                            double *xs, double *hs)
{
    int64_t gh = n->gates * n->hid;
    for (int64_t row = 0; row < gh; row++) {
        const double *w = n->w + (d * gh + row) * n->in, *r = n->r + (d * gh + row) * n->hid;
        double sx = n->b ? n->b[d * 2 * gh + row] : 0, sh = n->b ? n->b[d * 2 * gh + gh + row] : 0;
        for (int64_t k = 0; k < n->in; k++)
            sx += xt[k] * w[k];
        for (int64_t k = 0; k < n->hid; k++)
            sh += h[k] * r[k];
        xs[row] = sx;
        hs[row] = sh;
    }
}

static double rnn_clip(const Rnn *n, double v)
{
    return n->clip > 0 ? (v > n->clip ? n->clip : v < -n->clip ? -n->clip : v) : v;
}

static void rnn_step(const Rnn *n, int64_t d, const double *xs, const double *hs, double *h)
{
    for (int64_t j = 0; j < n->hid; j++)
        h[j] = rnn_act(n->act[d][0], rnn_clip(n, xs[j] + hs[j]));
}

/* GRU: z r h gates; the candidate reads r . (R_h h + Rb_h) with
 * linear_before_reset, else R_h (r . h) + Rb_h. tmp holds 3 * hid. */
static void gru_step(const Rnn *n, int64_t d, const double *xs, const double *hs, double *h,
                     double *tmp)
{
    int64_t H = n->hid, gh = 3 * H;
    const int *f = n->act[d];
    double *z = tmp, *rh = tmp + H, *next = tmp + 2 * H;
    for (int64_t j = 0; j < H; j++) {
        z[j] = rnn_act(f[0], rnn_clip(n, xs[j] + hs[j]));
        double r = rnn_act(f[0], rnn_clip(n, xs[H + j] + hs[H + j]));
        if (n->linear_before_reset)
            rh[j] = r * hs[2 * H + j];
        else
            next[j] = r * h[j];
    }
    for (int64_t j = 0; !n->linear_before_reset && j < H; j++) {
        const double *r = n->r + (d * gh + 2 * H + j) * H;
        double sum = n->b ? n->b[d * 2 * gh + gh + 2 * H + j] : 0;
        for (int64_t k = 0; k < H; k++)
            sum += next[k] * r[k];
        rh[j] = sum;
    }
    for (int64_t j = 0; j < H; j++) {
        double cand = rnn_act(f[1], rnn_clip(n, xs[2 * H + j] + rh[j]));
        next[j] = (1 - z[j]) * cand + z[j] * h[j];
    }
    memcpy(h, next, (size_t)H * sizeof *h);
}

/* LSTM: i o f c gates, peepholes i o f (o reads the new cell state). */
static void lstm_step(const Rnn *n, int64_t d, const double *xs, const double *hs, double *h,
                      double *c)
{
    int64_t H = n->hid;
    const int *f = n->act[d];
    const double *p = n->p ? n->p + d * 3 * H : NULL;
    for (int64_t j = 0; j < H; j++) {
        double gi = xs[j] + hs[j] + (p ? p[j] * c[j] : 0);
        double i = rnn_act(f[0], rnn_clip(n, gi));
        double gf = xs[2 * H + j] + hs[2 * H + j] + (p ? p[2 * H + j] * c[j] : 0);
        double fg = n->input_forget ? 1 - i : rnn_act(f[0], rnn_clip(n, gf));
        double g = rnn_act(f[1], rnn_clip(n, xs[3 * H + j] + hs[3 * H + j]));
        c[j] = fg * c[j] + i * g;
        double go = xs[H + j] + hs[H + j] + (p ? p[H + j] * c[j] : 0);
        h[j] = rnn_act(f[0], rnn_clip(n, go)) * rnn_act(f[2], c[j]);
    }
}

/* The outputs, zeroed: Y, Y_h and (LSTM) Y_c; absent ones stay NULL. */
typedef struct RnnOut {
    Tensor *y, *yh, *yc;
} RnnOut;

static int rnn_outputs(EvalCtx *c, const Rnn *n, int32_t dt, RnnOut *o)
{
    int64_t y[4] = {n->seq, n->dirs, n->batch, n->hid}, yb[4] = {n->batch, n->seq, n->dirs, n->hid};
    int64_t s[3] = {n->dirs, n->batch, n->hid}, sb[3] = {n->batch, n->dirs, n->hid};
    memset(o, 0, sizeof *o);
    Tensor **slots[3] = {&o->y, &o->yh, &o->yc};
    for (size_t i = 0; i < c->n_out && i < 3; i++) {
        bool seq = i == 0;
        *slots[i] = eval_out(c, i, dt, seq ? 4 : 3, seq ? (n->batch_first ? yb : y)
                                                        : (n->batch_first ? sb : s));
        if (!*slots[i])
            return eval_out_failed(c);
    }
    return EVAL_OK;
}

static void rnn_put(Tensor *t, size_t e, const double *v, int64_t n)
{
    size_t size = dtype_size(t->dtype);
    for (int64_t j = 0; j < n; j++)
        eval_store(t->dtype, (uint8_t *)t->data + (e + (size_t)j) * size, (EvalNum){.f = v[j]});
}

/* Direction d over batch entry b, its states and Y written. */
static void rnn_run_one(const Rnn *n, int64_t d, int64_t b, double *work, const RnnOut *o)
{
    int64_t H = n->hid, gh = n->gates * H, len = n->lens ? n->lens[b] : n->seq;
    double *h = work, *c = h + H, *xs = c + H, *hs = xs + gh, *tmp = hs + gh;
    size_t st = rnn_state_at(n, d, b);
    for (int64_t j = 0; j < H; j++) {
        h[j] = n->h0 ? n->h0[st + (size_t)j] : 0;
        c[j] = n->c0 ? n->c0[st + (size_t)j] : 0;
    }
    bool backward = n->reverse || d == 1;
    for (int64_t s = 0; s < len; s++) {
        int64_t t = backward ? len - 1 - s : s;
        rnn_projections(n, d, n->x + rnn_x_at(n, t, b), h, xs, hs);
        if (n->kind == K_RNN)
            rnn_step(n, d, xs, hs, h);
        else if (n->kind == K_GRU)
            gru_step(n, d, xs, hs, h, tmp);
        else
            lstm_step(n, d, xs, hs, h, c);
        if (o->y)
            rnn_put(o->y, (size_t)((n->batch_first ? (b * n->seq + t) * n->dirs + d
                                                   : (t * n->dirs + d) * n->batch + b) * H),
                    h, H);
    }
    if (o->yh)
        rnn_put(o->yh, st, h, H);
    if (o->yc)
        rnn_put(o->yc, st, c, H);
}

static int rnn_run(EvalCtx *c, int kind)
{
    Rnn n;
    c->exact = EVAL_ROUNDS; /* sums and activations in double, rounded once */
    if (!rnn_read(c, &n, kind))
        return eval_decline(c, "unsupported inputs, attributes or activations");
    RnnOut o;
    int rc = rnn_outputs(c, &n, eval_in(c, 0)->dtype, &o);
    size_t work_n = (size_t)(2 * n.hid + 2 * n.gates * n.hid + 3 * n.hid);
    double *work = rc ? NULL : arena_array(c->arena, work_n, sizeof *work);
    if (rc || !work)
        return rc ? rc : EVAL_OOM;
    for (int64_t d = 0; d < n.dirs; d++)
        for (int64_t b = 0; b < n.batch; b++)
            rnn_run_one(&n, d, b, work, &o);
    return EVAL_OK;
}

static int eval_rnn(EvalCtx *c) { return rnn_run(c, K_RNN); }
static int eval_gru(EvalCtx *c) { return rnn_run(c, K_GRU); }
static int eval_lstm(EvalCtx *c) { return rnn_run(c, K_LSTM); }

/* From opset 7 (earlier versions had output_sequence and other forms). */
static const OpKernel kernels[] = {
    {"", "RNN", 7, eval_rnn},
    {"", "GRU", 7, eval_gru},
    {"", "LSTM", 7, eval_lstm},
};

const OpKernelTable eval_rnn_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
