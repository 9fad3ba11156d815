/* eval_attention.c - the kernel of ai.onnx Attention (opset 23 on; eval.h):
 * softmax(softcap(scale * Q K^T) + bias) V per batch and query head, in
 * double, rounded once to the output type. The bias adds the attention mask
 * (bool: -inf where false; float: its value; a last dimension shorter than
 * the keys counts as masked past its end), the causal frontier (a query i
 * sees key j <= i + offset, the offset being the past length, or
 * nonpad_kv_seqlen - q_len for an external cache), the sliding window and
 * the padding of nonpad_kv_seqlen. Grouped-query attention shares each KV
 * head among q_num_heads / kv_num_heads query heads; a row with every key
 * masked gives zeros. */
#include <math.h>
#include <string.h>

#include "eval.h"

/* Where one of Q, K, V lives: 4-D (batch, heads, seq, size) or 3-D (batch,
 * seq, heads * size). */
typedef struct AttnLayout {
    const Tensor *t;
    const uint8_t *b;
    int64_t heads, seq, size;
    bool three_d;
} AttnLayout;

typedef struct Attn {
    AttnLayout q, k, v;
    const Tensor *mask, *past_k, *past_v, *nonpad;
    const uint8_t *mask_b, *past_kb, *past_vb, *nonpad_b;
    int64_t batch, past, total; /* total = past + k.seq */
    double scale, softcap;
    bool causal;
    int64_t left, right; /* sliding window sides; -1: unbounded */
    int64_t qk_mode;
} Attn;

static bool attn_layout(EvalCtx *c, AttnLayout *l, size_t i, int64_t heads_attr)
{
    l->t = eval_in(c, i);
    if (!l->t || !dtype_is_float(l->t->dtype) || (l->t->ndims != 3 && l->t->ndims != 4))
        return false;
    l->three_d = l->t->ndims == 3;
    if (l->three_d) {
        if (heads_attr <= 0 || l->t->dims[2] % heads_attr)
            return false;
        l->heads = heads_attr;
        l->seq = l->t->dims[1];
        l->size = l->t->dims[2] / heads_attr;
    } else {
        l->heads = l->t->dims[1];
        l->seq = l->t->dims[2];
        l->size = l->t->dims[3];
    }
    return (l->b = eval_bytes(c, l->t)) != NULL;
}

static double attn_at(const AttnLayout *l, int64_t b, int64_t h, int64_t s, int64_t d)
{
    size_t e = l->three_d ? (size_t)(((b * l->seq + s) * l->heads + h) * l->size + d)
                          : (size_t)(((b * l->heads + h) * l->seq + s) * l->size + d);
    return eval_load(l->t->dtype, l->b + e * dtype_size(l->t->dtype)).f;
}

/* Key or value element at total position t: the past's, then the new one's. */
static double attn_kv(const Attn *a, const AttnLayout *l, const Tensor *past,
                      const uint8_t *pb, int64_t b, int64_t h, int64_t t, int64_t d)
{
    if (t >= a->past)
        return attn_at(l, b, h, t - a->past, d);
    size_t e = (size_t)(((b * l->heads + h) * a->past + t) * l->size + d);
    return eval_load(past->dtype, pb + e * dtype_size(past->dtype)).f;
}

/* The optional input i, with its bytes; false when present but unreadable. */
static bool attn_optional(EvalCtx *c, size_t i, const Tensor **t, const uint8_t **b)
{
    *t = c->n_in > i ? c->in[i] : NULL;
    *b = NULL;
    return !*t || (*b = eval_bytes(c, *t)) != NULL;
}

static bool attn_read_inputs(EvalCtx *c, Attn *a)
{
    memset(a, 0, sizeof *a);
    int64_t qh = op_attr_int(c->op, "q_num_heads", 0);
    int64_t kvh = op_attr_int(c->op, "kv_num_heads", 0);
    if (!attn_layout(c, &a->q, 0, qh) || !attn_layout(c, &a->k, 1, kvh) ||
        !attn_layout(c, &a->v, 2, kvh) || a->q.t->ndims != a->k.t->ndims ||
        a->q.t->ndims != a->v.t->ndims)
        return false;
    if (!attn_optional(c, 3, &a->mask, &a->mask_b) ||
        !attn_optional(c, 4, &a->past_k, &a->past_kb) ||
        !attn_optional(c, 5, &a->past_v, &a->past_vb) ||
        !attn_optional(c, 6, &a->nonpad, &a->nonpad_b))
        return false;
    a->batch = a->q.t->dims[0];
    a->past = a->past_k ? a->past_k->dims[2] : 0;
    a->total = a->past + a->k.seq;
    return true;
}

/* Shapes that fit together: what the loops below index by. */
static bool attn_shapes_fit(const Attn *a)
{
    const AttnLayout *q = &a->q, *k = &a->k, *v = &a->v;
    bool ok = k->t->dims[0] == a->batch && v->t->dims[0] == a->batch && q->size == k->size &&
              k->heads == v->heads && k->seq == v->seq && k->heads > 0 &&
              q->heads % k->heads == 0;
    for (int i = 0; ok && i < 2; i++) {
        const Tensor *p = i ? a->past_v : a->past_k;
        const AttnLayout *l = i ? v : k;
        ok = !p || (p->ndims == 4 && p->dims[0] == a->batch && p->dims[1] == l->heads &&
                    p->dims[2] == a->past && p->dims[3] == l->size && dtype_is_float(p->dtype));
    }
    ok = ok && (!a->past_k) == (!a->past_v);
    ok = ok && (!a->nonpad ||
                (a->nonpad->dtype == DT_INT64 && tensor_numel(a->nonpad) == a->batch));
    if (ok && a->mask) {
        const Tensor *m = a->mask;
        int64_t want[4] = {a->batch, q->heads, q->seq, a->total};
        ok = m->ndims >= 1 && m->ndims <= 4 && (m->dtype == DT_BOOL || dtype_is_float(m->dtype)) &&
             m->dims[m->ndims - 1] <= a->total;
        for (size_t i = 0; ok && i + 1 < m->ndims; i++) {
            int64_t d = m->dims[i], w = want[4 - m->ndims + i];
            ok = d == 1 || d == w;
        }
    }
    return ok;
}

/* The mask's addend at (b, h, i, j): 0 or -inf for bool, its value else. */
static double attn_mask_at(const Attn *a, int64_t b, int64_t h, int64_t i, int64_t j)
{
    const Tensor *m = a->mask;
    int64_t coords[4] = {b, h, i, j};
    size_t r = m->ndims, e = 0;
    if (j >= m->dims[r - 1])
        return -INFINITY;
    for (size_t x = 0; x < r; x++) {
        int64_t d = m->dims[x], cidx = coords[4 - r + x];
        e = e * (size_t)d + (size_t)(d == 1 ? 0 : cidx);
    }
    EvalNum v = eval_load(m->dtype, a->mask_b + e * dtype_size(m->dtype));
    return m->dtype == DT_BOOL ? (v.i ? 0 : -INFINITY) : v.f;
}

/* Where the query block starts among the keys, for batch b. */
static int64_t attn_offset(const Attn *a, int64_t b)
{
    if (!a->past_k && a->nonpad)
        return eval_load(DT_INT64, a->nonpad_b + (size_t)b * 8).i - a->q.seq;
    return a->past;
}

static double attn_bias(const Attn *a, int64_t b, int64_t h, int64_t i, int64_t j)
{
    double bias = a->mask ? attn_mask_at(a, b, h, i, j) : 0;
    int64_t off = attn_offset(a, b), diff = i + off - j;
    if (a->causal && j > i + off)
        bias = -INFINITY;
    if ((a->left >= 0 && diff > a->left) || (a->right >= 0 && -diff > a->right))
        bias = -INFINITY;
    if (a->nonpad && j >= eval_load(DT_INT64, a->nonpad_b + (size_t)b * 8).i)
        bias = -INFINITY;
    return bias;
}

static void attn_store(Tensor *t, size_t e, double v)
{
    eval_store(t->dtype, (uint8_t *)t->data + e * dtype_size(t->dtype), (EvalNum){.f = v});
}

/* One query row (b, h, i): its scores into s[total], Y and the qk output. */
static void attn_row(const Attn *a, int64_t b, int64_t h, int64_t i, double *s, double *raw,
                     double *bias, Tensor *y, Tensor *qk)
{
    int64_t hk = h / (a->q.heads / a->k.heads), T = a->total;
    double top = -INFINITY, bias_top = -INFINITY, sum = 0;
    for (int64_t j = 0; j < T; j++) {
        double dot = 0;
        for (int64_t d = 0; d < a->q.size; d++)
            dot += attn_at(&a->q, b, h, i, d) *
                   attn_kv(a, &a->k, a->past_k, a->past_kb, b, hk, j, d);
        raw[j] = a->scale * dot;
        if (a->softcap > 0)
            raw[j] = a->softcap * tanh(raw[j] / a->softcap);
        bias[j] = attn_bias(a, b, h, i, j);
        s[j] = raw[j] + bias[j];
        top = s[j] > top ? s[j] : top;
        bias_top = bias[j] > bias_top ? bias[j] : bias_top;
    }
    size_t row = (size_t)(((b * a->q.heads + h) * a->q.seq + i) * T);
    for (int64_t j = 0; j < T; j++) {
        if (qk && a->qk_mode <= 2)
            attn_store(qk, row + (size_t)j, a->qk_mode == 2 ? s[j] : raw[j]);
        s[j] = isinf(bias_top) || isinf(top) ? 0 : exp(s[j] - top);
        sum += s[j];
    }
    for (int64_t j = 0; j < T; j++) {
        s[j] = sum > 0 ? s[j] / sum : 0;
        if (qk && a->qk_mode == 3)
            attn_store(qk, row + (size_t)j, s[j]);
    }
    for (int64_t d = 0; d < a->v.size; d++) {
        double acc = 0;
        for (int64_t j = 0; j < T; j++)
            acc += s[j] * attn_kv(a, &a->v, a->past_v, a->past_vb, b, hk, j, d);
        size_t e = a->q.three_d ? (size_t)(((b * a->q.seq + i) * a->q.heads + h) * a->v.size + d)
                                : (size_t)(((b * a->q.heads + h) * a->q.seq + i) * a->v.size + d);
        attn_store(y, e, acc);
    }
}

/* present_key / present_value: the past and the new keys (values) along
 * the sequence axis, 4-D. */
static int attn_present(EvalCtx *c, const Attn *a, size_t out, const AttnLayout *l,
                        const Tensor *past, const uint8_t *pb)
{
    int64_t dims[4] = {a->batch, l->heads, a->total, l->size};
    Tensor *t = eval_out(c, out, l->t->dtype, 4, dims);
    if (!t)
        return eval_out_failed(c);
    size_t e = 0;
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t h = 0; h < l->heads; h++)
            for (int64_t s = 0; s < a->total; s++)
                for (int64_t d = 0; d < l->size; d++)
                    attn_store(t, e++, attn_kv(a, l, past, pb, b, h, s, d));
    return EVAL_OK;
}

static void attn_read_attrs(EvalCtx *c, Attn *a)
{
    const Attr *sc = op_attr(c->op, "scale");
    a->scale = sc ? sc->f : 1 / sqrt((double)a->q.size);
    a->softcap = op_attr_float(c->op, "softcap", 0);
    a->causal = op_attr_int(c->op, "is_causal", 0) != 0;
    a->left = op_attr_int(c->op, "left_window_size", -1);
    a->right = op_attr_int(c->op, "right_window_size", -1);
    a->qk_mode = op_attr_int(c->op, "qk_matmul_output_mode", 0);
}

static int eval_attention(EvalCtx *c)
{
    Attn a;
    c->exact = EVAL_ROUNDS; /* sums and exponentials in double, rounded once */
    if (!attn_read_inputs(c, &a) || !attn_shapes_fit(&a))
        return eval_decline(c, "unsupported inputs or shapes that do not fit");
    attn_read_attrs(c, &a);
    if (a.qk_mode < 0 || a.qk_mode > 3)
        return eval_decline(c, "an unknown qk_matmul_output_mode");
    int64_t ydims[4] = {a.batch, a.q.heads, a.q.seq, a.v.size};
    int64_t y3[3] = {a.batch, a.q.seq, a.q.heads * a.v.size};
    int64_t qkdims[4] = {a.batch, a.q.heads, a.q.seq, a.total};
    Tensor *y = eval_out(c, 0, a.q.t->dtype, a.q.three_d ? 3 : 4, a.q.three_d ? y3 : ydims);
    Tensor *qk = c->n_out > 3 && y ? eval_out(c, 3, a.q.t->dtype, 4, qkdims) : NULL;
    size_t row = (size_t)(a.total ? a.total : 1);
    double *buf = y ? arena_array(c->arena, 3 * row, sizeof *buf) : NULL;
    if (!y || (c->n_out > 3 && !qk) || !buf)
        return eval_out_failed(c);
    for (int64_t b = 0; b < a.batch; b++)
        for (int64_t h = 0; h < a.q.heads; h++)
            for (int64_t i = 0; i < a.q.seq; i++)
                attn_row(&a, b, h, i, buf, buf + a.total, buf + 2 * a.total, y, qk);
    int rc = c->n_out > 1 ? attn_present(c, &a, 1, &a.k, a.past_k, a.past_kb) : EVAL_OK;
    if (!rc && c->n_out > 2)
        rc = attn_present(c, &a, 2, &a.v, a.past_v, a.past_vb);
    return rc;
}

static const OpKernel kernels[] = {
    {"", "Attention", 23, eval_attention},
};

const OpKernelTable eval_attention_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
