/* ops_attention.c - rules for the attention-style operators of opset 23 on:
 * Attention-23/24 (3-D or 4-D Q, K, V, an optional past key/value cache),
 * CausalConvWithState-27 (a depthwise causal convolution carrying its last
 * kernel-1 positions) and LinearAttention-27, for which nothing is inferred
 * (its outputs stay unknown). */
#include "ops.h"

/* The heads-and-size view of one of Q, K, V: 4-D [B, heads, seq, size] or
 * 3-D [B, seq, heads * size] with heads from the attribute. */
typedef struct AttnView {
    Dim batch, heads, seq, size;
} AttnView;

static bool attn_view(InferCtx *c, const InferFact *x, const char *heads_attr, AttnView *v)
{
    if (x->rank == 4) {
        *v = (AttnView){x->dims[0], x->dims[1], x->dims[2], x->dims[3]};
        return true;
    }
    int64_t h = op_attr_int(c->op, heads_attr, 0);
    if (x->rank != 3 || h <= 0)
        return false;
    Dim size = dim_div_exact(c->dt, x->dims[2], h);
    *v = (AttnView){x->dims[0], dim_const(c->dt, h), x->dims[1], size};
    return true;
}

/* Y like Q with V's head size ([B, q_heads, q_seq, v_size], or 3-D [B,
 * q_seq, q_heads * v_size]); present key and value [B, kv_heads, past +
 * kv_seq, size]; the optional QK product [B, q_heads, q_seq, past + kv_seq]. */
static int attn_attention(InferCtx *c)
{
    const InferFact *q = infer_in(c, 0), *k = infer_in(c, 1), *v = infer_in(c, 2);
    for (size_t i = 0; i < c->n_out; i++)
        infer_set_dtype(c, i, i == 1 ? k->dtype : i == 2 ? v->dtype : q->dtype);
    AttnView qv, kv, vv;
    if (!attn_view(c, q, "q_num_heads", &qv) || !attn_view(c, k, "kv_num_heads", &kv) ||
        !attn_view(c, v, "kv_num_heads", &vv))
        return 0;
    Dim total = kv.seq;
    const InferFact *past = infer_has_in(c, 4) ? infer_in(c, 4) : NULL;
    if (past && past->rank != 4)
        total = dim_fresh(c->dt);
    else if (past)
        total = dim_add(c->dt, past->dims[2], kv.seq);
    Dim y4[4] = {qv.batch, qv.heads, qv.seq, vv.size};
    Dim y3[3] = {qv.batch, qv.seq, dim_mul(c->dt, qv.heads, vv.size)};
    if (infer_set(c, 0, q->dtype, q->rank, q->rank == 4 ? y4 : y3))
        return -1;
    Dim pk[4] = {kv.batch, kv.heads, total, kv.size}, pv[4] = {vv.batch, vv.heads, total, vv.size};
    Dim qk[4] = {qv.batch, qv.heads, qv.seq, total};
    if (c->n_out > 1 && infer_set(c, 1, k->dtype, 4, pk))
        return -1;
    if (c->n_out > 2 && infer_set(c, 2, v->dtype, 4, pv))
        return -1;
    return c->n_out > 3 ? infer_set(c, 3, q->dtype, 4, qk) : 0;
}

/* output like the input [B, C, L]; present_state [B, C, k - 1] from the
 * weight [C, 1, k]. */
static int attn_causal_conv(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *w = infer_in(c, 1);
    if (infer_copy(c, 0, 0))
        return -1;
    if (x->rank != 3 || w->rank != 3 || !dim_is_const(w->dims[2]))
        return infer_set_dtype(c, 1, x->dtype);
    Dim d[3] = {x->dims[0], x->dims[1], dim_const(c->dt, dim_value(w->dims[2]) - 1)};
    return infer_set(c, 1, x->dtype, 3, d);
}

static int attn_unknown(InferCtx *c)
{
    (void)c;
    return 0;
}

static const OpSchema ops_attention[] = {
    {"", "Attention", 23, 3, 6, 1, 4, attn_attention},
    {"", "CausalConvWithState", 27, 2, 4, 2, 2, attn_causal_conv},
    {"", "LinearAttention", 27, 3, 6, 2, 2, attn_unknown},
};

const OpTable ops_attention_table = {ops_attention, sizeof ops_attention / sizeof ops_attention[0]};
