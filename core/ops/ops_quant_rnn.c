/* ops_quant_rnn.c - rules for quantisation (QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear) and the recurrent layers (RNN,
 * GRU, LSTM, with layout from opset 14). */
#include <string.h>

#include "ops.h"

/* QuantizeLinear: x's shape; the zero point's type, else output_dtype
 * (opset 21), else uint8. */
static int quant_quantize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int32_t dtype = infer_has_in(c, 2) ? infer_in(c, 2)->dtype
                                       : (int32_t)op_attr_int(c->op, "output_dtype", DT_UINT8);
    return infer_set(c, 0, dtype, x->rank, x->dims);
}

/* DequantizeLinear: x's shape; float before opset 19, then the scale's
 * type, from opset 23 output_dtype when set. */
static int quant_dequantize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int32_t dtype = c->opset >= 19 ? infer_in(c, 1)->dtype : DT_FLOAT;
    int64_t out = c->opset >= 23 ? op_attr_int(c->op, "output_dtype", 0) : 0;
    if (out > 0)
        dtype = (int32_t)out;
    return infer_set(c, 0, dtype, x->rank, x->dims);
}

static int quant_dynamic(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_set(c, 0, DT_UINT8, x->rank, x->dims) || infer_set(c, 1, DT_FLOAT, 0, NULL))
        return -1;
    return infer_set(c, 2, DT_UINT8, 0, NULL);
}

/* The hidden size: the attribute, else R's last dim ([dirs, gates*h, h]). */
static Dim rnn_hidden(InferCtx *c)
{
    int64_t h = op_attr_int(c->op, "hidden_size", 0);
    const InferFact *r = infer_in(c, 2);
    if (h > 0)
        return dim_const(c->dt, h);
    return r->rank == 3 ? r->dims[2] : dim_fresh(c->dt);
}

static int64_t rnn_directions(const Op *op)
{
    const Attr *a = op_attr(op, "direction");
    return a && a->type == ATTR_STRING && a->s.len == 13 && !memcmp(a->s.ptr, "bidirectional", 13) ? 2 : 1;
}

/* Y [seq, dirs, batch, h] and Y_h (Y_c) [dirs, batch, h]; with layout 1
 * batch first: [batch, seq, dirs, h] and [batch, dirs, h]. */
static int rnn_infer(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    bool batch_first = c->opset >= 14 && op_attr_int(c->op, "layout", 0) == 1;
    Dim seq = x->rank == 3 ? x->dims[batch_first ? 1 : 0] : dim_fresh(c->dt);
    Dim batch = x->rank == 3 ? x->dims[batch_first ? 0 : 1] : dim_fresh(c->dt);
    Dim dirs = dim_const(c->dt, rnn_directions(c->op)), h = rnn_hidden(c);
    Dim y[4] = {seq, dirs, batch, h}, yb[4] = {batch, seq, dirs, h};
    Dim s[3] = {dirs, batch, h}, sb[3] = {batch, dirs, h};
    if (infer_set(c, 0, x->dtype, 4, batch_first ? yb : y))
        return -1;
    for (size_t i = 1; i < c->n_out; i++)
        if (infer_set(c, i, x->dtype, 3, batch_first ? sb : s))
            return -1;
    return 0;
}

static const OpSchema ops_quant_rnn[] = {
    {"", "QuantizeLinear", 10, 2, 3, 1, 1, quant_quantize},
    {"", "DequantizeLinear", 10, 2, 3, 1, 1, quant_dequantize},
    {"", "DynamicQuantizeLinear", 11, 1, 1, 3, 3, quant_dynamic},
    {"", "RNN", 1, 3, 6, 0, 2, rnn_infer},
    {"", "GRU", 1, 3, 6, 0, 2, rnn_infer},
    {"", "LSTM", 1, 3, 8, 0, 3, rnn_infer},
};

const OpTable ops_quant_rnn_table = {ops_quant_rnn, sizeof ops_quant_rnn / sizeof ops_quant_rnn[0]};
