/* ops_contrib.c - rules for the com.microsoft operators onnxruntime writes
 * into LLM and quantized exports (and its optimizer's fusions): attention
 * (Attention, MultiHeadAttention, GroupQueryAttention), the fused norms
 * (SkipLayerNormalization, SimplifiedLayerNormalization and its Skip form),
 * RotaryEmbedding, MatMulNBits, FusedMatMul, QLinearAdd/Mul and the unary
 * QLinear operators, and the domain's own Q/DQ. Shapes follow onnxruntime's
 * kernels (checked against its outputs: tests/contrib_ops.py). */
#include <string.h>

#include "ops.h"

/* Output i has x's dims but the last one, which is `last`. */
static int set_last_dim(InferCtx *c, size_t i, int32_t dtype, const InferFact *x, Dim last)
{
    if (x->rank < 1)
        return infer_set(c, i, dtype, -1, NULL);
    Dim *d = infer_dims_new(c, x->rank);
    if (!d)
        return -1;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank - 1] = last;
    return infer_set_own(c, i, dtype, x->rank, d);
}

/* The norms: output 0 is the input; the statistics (mean, inverse standard
 * deviation) keep the leading dims with a last dim of 1; a skip norm's last
 * output is input + skip (+ bias), the input's shape too. */
static int contrib_norm(InferCtx *c, bool skip)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_copy(c, 0, 0))
        return -1;
    for (size_t i = 1; i < c->n_out; i++) {
        int rc = skip && i == 3 ? infer_copy(c, 3, 0)
                                : set_last_dim(c, i, DT_FLOAT, x, dim_const(c->dt, 1));
        if (rc)
            return -1;
    }
    return 0;
}

static int contrib_skip_norm(InferCtx *c) { return contrib_norm(c, true); }
static int contrib_simplified_norm(InferCtx *c) { return contrib_norm(c, false); }

static int contrib_same_as_input(InferCtx *c) { return infer_copy(c, 0, 0); }

/* MatMulNBits(A [..., K], B packed, scales...): [..., N], A's type. */
static int contrib_matmul_nbits(InferCtx *c)
{
    int64_t n = op_attr_int(c->op, "N", -1);
    return set_last_dim(c, 0, infer_in(c, 0)->dtype, infer_in(c, 0),
                        n > 0 ? dim_const(c->dt, n) : dim_fresh(c->dt));
}

/* FusedMatMul: MatMul of A and B, each with its last two dims swapped when
 * transA/transB say so (transBatchA/B, rarer, leave the shape unknown). */
static int contrib_fused_matmul(InferCtx *c)
{
    const InferFact *a = infer_in(c, 0), *b = infer_in(c, 1);
    int32_t dt = a->dtype;
    if (a->rank < 2 || b->rank < 2 || op_attr_int(c->op, "transBatchA", 0) ||
        op_attr_int(c->op, "transBatchB", 0))
        return infer_set(c, 0, dt, -1, NULL);
    bool ta = op_attr_int(c->op, "transA", 0), tb = op_attr_int(c->op, "transB", 0);
    InferFact ba = *a, bb = *b, out;
    ba.rank = a->rank - 2; /* broadcast the batch dims */
    bb.rank = b->rank - 2;
    const InferFact *batch[2] = {&ba, &bb};
    if (infer_broadcast(c, batch, 2, &out))
        return -1;
    Dim *d = infer_dims_new(c, out.rank + 2);
    if (!d)
        return -1;
    memcpy(d, out.dims, (size_t)out.rank * sizeof *d);
    d[out.rank] = a->dims[a->rank - (ta ? 1 : 2)];
    d[out.rank + 1] = b->dims[b->rank - (tb ? 2 : 1)];
    return infer_set_own(c, 0, dt, out.rank + 2, d);
}

/* [d0, d1, d2, d3] in the run's arena. */
static int set_dims4(InferCtx *c, size_t i, int32_t dt, Dim d0, Dim d1, Dim d2, Dim d3)
{
    Dim d[4] = {d0, d1, d2, d3};
    return infer_set(c, i, dt, 4, d);
}

static Dim attr_dim(InferCtx *c, const char *name)
{
    int64_t v = op_attr_int(c->op, name, 0);
    return v > 0 ? dim_const(c->dt, v) : dim_fresh(c->dt);
}

/* The sequence length of the present cache: past + new when both are
 * known, else a size known only at run time. */
static Dim total_length(InferCtx *c, size_t past, Dim added)
{
    const InferFact *p = infer_has_in(c, past) ? infer_in(c, past) : NULL;
    if (!p)
        return added;
    return p->rank == 4 ? dim_add(c->dt, p->dims[2], added) : dim_fresh(c->dt);
}

/* GroupQueryAttention(query, key, value, past_key, past_value, seqlens_k,
 * total_sequence_length, ...): output [B, S, num_heads * head]; present
 * key/value [B, kv_num_heads, T, head], T the total_sequence_length input
 * when known (the past buffer may be longer: then unknown). Without key the
 * query packs q, k and v: head = hidden / (num_heads + 2 kv_num_heads). */
static int contrib_gqa(InferCtx *c)
{
    const InferFact *q = infer_in(c, 0);
    int64_t heads = op_attr_int(c->op, "num_heads", 0), kv = op_attr_int(c->op, "kv_num_heads", 0);
    if (q->rank != 3 || heads <= 0 || kv <= 0)
        return infer_set(c, 0, q->dtype, -1, NULL);
    int64_t parts = infer_has_in(c, 1) ? heads : heads + 2 * kv;
    Dim head = dim_div_exact(c->dt, q->dims[2], parts);
    Dim d[3] = {q->dims[0], q->dims[1], dim_mul(c->dt, dim_const(c->dt, heads), head)};
    if (infer_set(c, 0, q->dtype, 3, d))
        return -1;
    int64_t total;
    const InferFact *past = infer_has_in(c, 3) ? infer_in(c, 3) : NULL;
    bool past_known = past && past->rank == 4 && dim_is_const(past->dims[2]);
    Dim t = infer_in_ints(c, 6, &total, 1) == 1 && (!past || past_known)
                ? dim_const(c->dt, past_known && dim_value(past->dims[2]) > total
                                       ? dim_value(past->dims[2]) : total)
                : dim_fresh(c->dt);
    for (size_t i = 1; i < c->n_out && i < 3; i++)
        if (set_dims4(c, i, q->dtype, q->dims[0], dim_const(c->dt, kv), t, head))
            return -1;
    return 0;
}

/* MultiHeadAttention(query [B, S, hidden], key, value, ...): output [B, S,
 * v_hidden] (value [B, L, v_hidden], or [B, N, L, Dv]: N*Dv); present
 * key/value [B, N, past + L, head]. */
static int contrib_mha(InferCtx *c)
{
    const InferFact *q = infer_in(c, 0), *k = infer_in(c, 1), *v = infer_in(c, 2);
    Dim heads = attr_dim(c, "num_heads");
    if (q->rank != 3)
        return infer_set(c, 0, q->dtype, -1, NULL);
    Dim vh = v->rank == 3   ? v->dims[2]
             : v->rank == 4 ? dim_mul(c->dt, v->dims[1], v->dims[3])
                            : dim_fresh(c->dt);
    Dim d[3] = {q->dims[0], q->dims[1], infer_has_in(c, 2) ? vh : dim_fresh(c->dt)};
    if (infer_set(c, 0, q->dtype, 3, d))
        return -1;
    int64_t n = op_attr_int(c->op, "num_heads", 0);
    Dim len = k->rank == 3 || k->rank == 4 ? k->dims[k->rank == 3 ? 1 : 2] : dim_fresh(c->dt);
    Dim head = k->rank == 3 && n > 0 ? dim_div_exact(c->dt, k->dims[2], n)
               : k->rank == 4        ? k->dims[3]
                                     : dim_fresh(c->dt);
    Dim vhead = v->rank == 3 && n > 0 ? dim_div_exact(c->dt, v->dims[2], n)
                : v->rank == 4        ? v->dims[3]
                                      : dim_fresh(c->dt);
    if (c->n_out > 1 && set_dims4(c, 1, q->dtype, q->dims[0], heads, total_length(c, 6, len), head))
        return -1;
    return c->n_out > 2 ? set_dims4(c, 2, q->dtype, q->dims[0], heads, total_length(c, 7, len),
                                    vhead)
                        : 0;
}

/* Attention(input [B, S, in], weights [in, 3 hidden] or qkv_hidden_sizes,
 * ...): output [B, S, v_hidden]; present [2, B, N, past + S, head]. */
static int contrib_attention(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *w = infer_in(c, 1);
    int64_t sizes[3], n = op_attr_int(c->op, "num_heads", 0);
    long k = op_attr_ints(c->op, "qkv_hidden_sizes", sizes, 3);
    if (x->rank != 3 || n <= 0)
        return infer_set(c, 0, x->dtype, -1, NULL);
    Dim vh = k == 3 ? dim_const(c->dt, sizes[2])
             : w->rank == 2 ? dim_div_exact(c->dt, w->dims[1], 3) : dim_fresh(c->dt);
    if (set_last_dim(c, 0, x->dtype, x, vh) || c->n_out < 2)
        return 0;
    const InferFact *past = infer_has_in(c, 4) ? infer_in(c, 4) : NULL;
    Dim t = !past ? x->dims[1] : past->rank == 5 ? dim_add(c->dt, past->dims[3], x->dims[1])
                                                 : dim_fresh(c->dt);
    Dim d[5] = {dim_const(c->dt, 2), x->dims[0], dim_const(c->dt, n), t,
                dim_div_exact(c->dt, vh, n)};
    return infer_set(c, 1, x->dtype, 5, d);
}

/* QLinearAdd/QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp):
 * the broadcast of A and B, A's type. */
static int contrib_qlinear_binary(InferCtx *c)
{
    const InferFact *ab[2] = {infer_in(c, 0), infer_in(c, 3)};
    InferFact out;
    if (infer_broadcast(c, ab, 2, &out))
        return -1;
    return infer_set(c, 0, ab[0]->dtype, out.rank, out.dims);
}

/* The domain's QuantizeLinear: x's shape, the zero point's type (uint8
 * without one); DequantizeLinear: x's shape, the scale's type. */
static int contrib_quantize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    return infer_set(c, 0, infer_has_in(c, 2) ? infer_in(c, 2)->dtype : DT_UINT8, x->rank,
                     x->dims);
}

static int contrib_dequantize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    return infer_set(c, 0, infer_in(c, 1)->dtype, x->rank, x->dims);
}

#define MS "com.microsoft"
static const OpSchema ops_contrib[] = {
    {"", "SimplifiedLayerNormalization", 1, 2, 2, 1, 2, contrib_simplified_norm},
    {MS, "Attention", 1, 2, 7, 1, 2, contrib_attention},
    {MS, "DequantizeLinear", 1, 2, 3, 1, 1, contrib_dequantize},
    {MS, "FusedMatMul", 1, 2, 2, 1, 1, contrib_fused_matmul},
    {MS, "GroupQueryAttention", 1, 7, 14, 1, 4, contrib_gqa},
    {MS, "MatMulNBits", 1, 3, 6, 1, 1, contrib_matmul_nbits},
    {MS, "MultiHeadAttention", 1, 1, 11, 1, 4, contrib_mha},
    {MS, "QLinearAdd", 1, 7, 8, 1, 1, contrib_qlinear_binary},
    {MS, "QLinearLeakyRelu", 1, 4, 5, 1, 1, contrib_same_as_input},
    {MS, "QLinearMul", 1, 7, 8, 1, 1, contrib_qlinear_binary},
    {MS, "QLinearSigmoid", 1, 4, 5, 1, 1, contrib_same_as_input},
    {MS, "QuantizeLinear", 1, 2, 3, 1, 1, contrib_quantize},
    {MS, "RotaryEmbedding", 1, 4, 4, 1, 1, contrib_same_as_input},
    {MS, "SimplifiedLayerNormalization", 1, 2, 2, 1, 2, contrib_simplified_norm},
    {MS, "SkipLayerNormalization", 1, 3, 5, 1, 4, contrib_skip_norm},
    {MS, "SkipSimplifiedLayerNormalization", 1, 3, 4, 1, 4, contrib_skip_norm},
};

const OpTable ops_contrib_table = {ops_contrib, sizeof ops_contrib / sizeof ops_contrib[0]};
