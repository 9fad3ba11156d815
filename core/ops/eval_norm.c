/* eval_norm.c - kernels for normalization and quantization (eval.h):
 * LayerNormalization, InstanceNormalization, GroupNormalization,
 * QuantizeLinear and DequantizeLinear (8- and 16-bit integers, and the
 * float8, float4 and 4- and 2-bit integer types through eval_lowp.c's
 * element access). Computed in memory, in double, each
 * result rounded once to its type. The fold pass never folds these ops
 * (formatter/fold.c lists them): activations flow through them, and a
 * folded Q/DQ pair would lose what a quantizer reads; they serve the
 * reference interpreter (--check). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

/* Element k of bytes b of type dt (low-precision ones too) as a double. */
static double elem_f(int32_t dt, const uint8_t *b, size_t k)
{
    EvalNum v = eval_elem(dt, b, k);
    return eval_elem_float(dt) ? v.f : (double)v.i;
}

/* Element k of t (bytes b) as a double. */
static double load_f(const Tensor *t, const uint8_t *b, size_t k)
{
    return elem_f(t->dtype, b, k);
}

static void store_f(Tensor *t, size_t k, double v)
{
    eval_store(t->dtype, (uint8_t *)t->data + k * dtype_size(t->dtype), (EvalNum){.f = v});
}

/* Mean and 1/sqrt(variance + eps) of n elements of x from element at. */
static void moments(const Tensor *x, const uint8_t *xb, size_t at, size_t n, double eps,
                    double *mean, double *inv_std)
{
    double sum = 0, sq = 0;
    for (size_t j = 0; j < n; j++)
        sum += load_f(x, xb, at + j);
    *mean = sum / (double)n;
    for (size_t j = 0; j < n; j++) {
        double d = load_f(x, xb, at + j) - *mean;
        sq += d * d;
    }
    *inv_std = 1.0 / sqrt(sq / (double)n + eps);
}

/* Input i as bytes when it is a float tensor of n elements (n = 0: any),
 * or NULL when absent; *bad when present but unusable. */
static const uint8_t *param_bytes(EvalCtx *c, size_t i, int64_t n, bool *bad)
{
    const Tensor *t = eval_in(c, i);
    if (!t) {
        *bad = *bad || (i < c->n_in && c->in[i]);
        return NULL;
    }
    if (!dtype_is_float(t->dtype) || (n && tensor_numel(t) != n)) {
        *bad = true;
        return NULL;
    }
    const uint8_t *b = eval_bytes(c, t);
    *bad = *bad || !b;
    return b;
}

/* LayerNormalization-17: normalized over axes axis.., then Scale and B,
 * which cover the normalized shape (or one element). Mean and InvStdDev
 * keep the leading dims and ones after, in the stash type. */
static int eval_layer_norm(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *sc = eval_in(c, 1);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -1), (int)x->ndims) : -1;
    int32_t stash = (int32_t)op_attr_int(c->op, "stash_type", DT_FLOAT);
    if (!x || !sc || !dtype_is_float(x->dtype) || axis < 0 || !dtype_is_float(stash))
        return eval_decline(c, "an unsupported input, axis or stash_type");
    size_t inner = (size_t)dims_numel(x->dims + axis, x->ndims - (size_t)axis);
    size_t outer = (size_t)dims_numel(x->dims, (size_t)axis), ns = (size_t)tensor_numel(sc);
    const Tensor *bt = eval_in(c, 2);
    size_t nb = bt ? (size_t)tensor_numel(bt) : 1;
    bool bad = !inner || (ns != inner && ns != 1) || (nb != inner && nb != 1);
    const uint8_t *xb = eval_bytes(c, x), *sb = param_bytes(c, 1, 0, &bad),
                  *bb = param_bytes(c, 2, 0, &bad);
    if (bad || !xb)
        return c->why ? EVAL_DECLINE : eval_decline(c, "Scale or B does not cover the normalized shape");
    int64_t sdims[EVAL_MAX_RANK];
    for (size_t a = 0; a < x->ndims; a++)
        sdims[a] = (int)a < axis ? x->dims[a] : 1;
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, x->dims);
    Tensor *mt = y && c->n_out > 1 ? eval_out(c, 1, stash, x->ndims, sdims) : NULL;
    Tensor *it = y && c->n_out > 2 ? eval_out(c, 2, stash, x->ndims, sdims) : NULL;
    if (!y || (c->n_out > 1 && !mt) || (c->n_out > 2 && !it))
        return eval_out_failed(c);
    double eps = op_attr_float(c->op, "epsilon", 1e-5f);
    for (size_t r = 0; r < outer; r++) {
        double mean, inv;
        moments(x, xb, r * inner, inner, eps, &mean, &inv);
        for (size_t j = 0; j < inner; j++) {
            double v = (load_f(x, xb, r * inner + j) - mean) * inv * load_f(sc, sb, ns == 1 ? 0 : j);
            store_f(y, r * inner + j, v + (bb ? load_f(bt, bb, nb == 1 ? 0 : j) : 0));
        }
        if (mt)
            store_f(mt, r, mean);
        if (it)
            store_f(it, r, inv);
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* Normalizes each of x's (n, group) blocks of `per` elements; channel k's
 * scale and bias are element k / ch_per_param of scale and bias. */
static int norm_groups(EvalCtx *c, const Tensor *x, size_t groups, int64_t n_param,
                       size_t ch_per_param)
{
    const Tensor *sc = eval_in(c, 1), *bt = eval_in(c, 2);
    bool bad = false;
    const uint8_t *xb = eval_bytes(c, x), *sb = param_bytes(c, 1, n_param, &bad),
                  *bb = param_bytes(c, 2, n_param, &bad);
    if (bad || !xb || !sb || !bb)
        return c->why ? EVAL_DECLINE : eval_decline(c, "scale or B has not the expected size");
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    size_t ch = (size_t)x->dims[1], plane = (size_t)dims_numel(x->dims + 2, x->ndims - 2);
    size_t per = ch / groups * plane, n = (size_t)tensor_numel(x);
    double eps = op_attr_float(c->op, "epsilon", 1e-5f);
    for (size_t at = 0; per && at < n; at += per) {
        double mean, inv;
        moments(x, xb, at, per, eps, &mean, &inv);
        for (size_t j = 0; j < per; j++) {
            size_t k = (at + j) / plane % ch / ch_per_param;
            double v = (load_f(x, xb, at + j) - mean) * inv;
            store_f(y, at + j, v * load_f(sc, sb, k) + load_f(bt, bb, k));
        }
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static bool norm_input_ok(const Tensor *x)
{
    return x && dtype_is_float(x->dtype) && x->ndims >= 2 && x->dims[1] > 0;
}

/* InstanceNormalization: each (n, c) plane normalized, then scale[c], B[c]. */
static int eval_instance_norm(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    if (!norm_input_ok(x))
        return eval_decline(c, "the input is not a float tensor of rank 2 or more");
    return norm_groups(c, x, (size_t)x->dims[1], x->dims[1], 1);
}

/* GroupNormalization: channels in num_groups groups; scale and bias per
 * group at opset 18, per channel from 21. */
static int eval_group_norm(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t g = op_attr_int(c->op, "num_groups", 0);
    if (!norm_input_ok(x) || g <= 0 || x->dims[1] % g)
        return eval_decline(c, "the input or num_groups is unsupported");
    if (c->opset >= 21)
        return norm_groups(c, x, (size_t)g, x->dims[1], 1);
    return norm_groups(c, x, (size_t)g, g, (size_t)(x->dims[1] / g));
}

/* --- QuantizeLinear / DequantizeLinear --- */

/* Which scale element serves each element of x: one (per tensor), one per
 * index along axis (per axis) or one per block of block_size along axis
 * (blocked, same rank as x). */
typedef struct QuantMap {
    int axis, rank;
    int64_t block, len; /* block_size; x's length along axis */
    bool per_tensor, blocked;
    int64_t xs[EVAL_MAX_RANK], ss[EVAL_MAX_RANK]; /* strides of x and the scale */
} QuantMap;

static int quant_map(EvalCtx *c, const Tensor *x, const Tensor *s, QuantMap *q)
{
    memset(q, 0, sizeof *q);
    q->rank = (int)x->ndims;
    q->per_tensor = tensor_numel(s) == 1 && s->ndims <= 1;
    q->block = c->opset >= 21 ? op_attr_int(c->op, "block_size", 0) : 0;
    if (q->per_tensor)
        return 0;
    q->axis = eval_axis(c->opset >= 13 ? op_attr_int(c->op, "axis", 1) : 1, q->rank);
    if (q->axis < 0 || x->ndims > EVAL_MAX_RANK)
        return -1;
    eval_strides(x->dims, x->ndims, q->xs);
    q->len = x->dims[q->axis];
    if (q->block <= 0)
        return s->ndims == 1 && s->dims[0] == x->dims[q->axis] ? 0 : -1;
    q->blocked = true;
    if (s->ndims != x->ndims)
        return -1;
    for (int a = 0; a < q->rank; a++)
        if (a == q->axis ? s->dims[a] != (x->dims[a] + q->block - 1) / q->block
                         : s->dims[a] != x->dims[a])
            return -1;
    eval_strides(s->dims, s->ndims, q->ss);
    return 0;
}

static size_t quant_index(const QuantMap *q, size_t e)
{
    if (q->per_tensor)
        return 0;
    if (!q->blocked)
        return (size_t)((int64_t)e / q->xs[q->axis] % q->len);
    size_t k = 0;
    for (int a = 0; a < q->rank; a++) {
        int64_t coord = (int64_t)e / q->xs[a];
        e -= (size_t)(coord * q->xs[a]);
        k += (size_t)((a == q->axis ? coord / q->block : coord) * q->ss[a]);
    }
    return k;
}

/* The quantized types: 8- and 16-bit integers (int32 too for
 * DequantizeLinear's input), and the low-precision ones but E8M0 (a scale
 * type, not a quantized one). */
static bool quant_type(int32_t dt, bool with_int32)
{
    return dt == DT_INT8 || dt == DT_UINT8 || dt == DT_INT16 || dt == DT_UINT16 ||
           (with_int32 && dt == DT_INT32) || (eval_lowp_type(dt) && dt != DT_FLOAT8E8M0);
}

/* The output range Q/DQ saturates to: the integer type's, int32's for a
 * type that has none here. */
static void int_range(int32_t dt, double *lo, double *hi)
{
    int64_t l, h;
    if (!eval_int_range(dt, &l, &h))
        eval_int_range(DT_INT32, &l, &h);
    *lo = (double)l, *hi = (double)h;
}

/* The zero point of element k: 0 when absent. */
static double zero_at(const Tensor *z, const uint8_t *zb, size_t k)
{
    return z ? elem_f(z->dtype, zb, k) : 0;
}

/* Checks the zero point (absent, or shaped like the scale and of type dt;
 * zero for the float types, which onnx's reference does not subtract) and
 * returns its bytes in *zb; -1 when unusable. */
static int quant_zero(EvalCtx *c, const Tensor *s, int32_t dt, const Tensor **z,
                      const uint8_t **zb)
{
    *z = eval_in_any(c, 2);
    *zb = NULL;
    if (!*z)
        return c->n_in > 2 && c->in[2] ? -1 : 0;
    if (tensor_numel(*z) != tensor_numel(s) || (dt && (*z)->dtype != dt) ||
        !(*zb = eval_bytes(c, *z)))
        return -1;
    for (size_t k = 0, n = (size_t)tensor_numel(*z); eval_lowp_float((*z)->dtype) && k < n; k++)
        if (elem_f((*z)->dtype, *zb, k) != 0)
            return eval_decline(c, "a non-zero float zero point"), -1;
    return 0;
}

/* A scale: a float type, or E8M0 (opset 24). */
static bool scale_type(int32_t dt)
{
    return dtype_is_float(dt) || dt == DT_FLOAT8E8M0;
}

/* q = x / scale (integer result already rounded) stored as element e of y:
 * integers rounded half to even, plus the zero point, saturated; float8
 * and float4 rounded to their grid. -1 for a NaN float4 cannot hold. */
static int quant_store(Tensor *y, size_t e, double q, double zero, bool saturate)
{
    int32_t out = y->dtype;
    uint8_t *yb = (uint8_t *)y->data;
    if (eval_lowp_float(out))
        return eval_lowp_put_float(out, yb, e, q, saturate, 0);
    double lo, hi, v = nearbyint(q) + zero;
    int_range(out, &lo, &hi);
    v = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
    if (eval_lowp_type(out))
        eval_lowp_put_int(out, yb, e, (int64_t)v);
    else
        eval_store(out, yb + e * dtype_size(out), (EvalNum){.i = (int64_t)v});
    return 0;
}

/* The type QuantizeLinear divides in: `precision` (opset 23, x and the
 * scale rounded to it first), else x's float type (onnxruntime divides in
 * it), else the scale's. 0 when unsupported. */
static int32_t quant_division_type(const EvalCtx *c, const Tensor *x, const Tensor *s)
{
    int32_t p = c->opset >= 23 ? (int32_t)op_attr_int(c->op, "precision", 0) : 0;
    if (p)
        return dtype_is_float(p) ? p : 0;
    return dtype_is_float(x->dtype) ? x->dtype : dtype_is_float(s->dtype) ? s->dtype : DT_FLOAT;
}

/* The output type of QuantizeLinear: the zero point's, else output_dtype
 * (opset 21), else uint8. */
static int32_t quant_out_type(const EvalCtx *c)
{
    const Tensor *z = 2 < c->n_in ? c->in[2] : NULL;
    int32_t od = c->opset >= 21 ? (int32_t)op_attr_int(c->op, "output_dtype", 0) : 0;
    return z ? z->dtype : od ? od : DT_UINT8;
}

/* QuantizeLinear: saturate(round_half_even(x / scale) + zero_point) for
 * integers, x / scale rounded to the type for float8 and float4 (Cast's
 * saturate rules), the quotient rounded to its division type first. */
static int eval_quantize(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *s = eval_in_any(c, 1), *z;
    const uint8_t *xb, *sb, *zb;
    QuantMap q;
    int32_t out = quant_out_type(c), qt = x && s ? quant_division_type(c, x, s) : 0;
    if (!x || !s || !(dtype_is_float(x->dtype) || x->dtype == DT_INT32) || !qt ||
        !scale_type(s->dtype) || !quant_type(out, false) || quant_zero(c, s, out, &z, &zb) ||
        quant_map(c, x, s, &q))
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unsupported input, type or scale shape");
    if (!(xb = eval_bytes(c, x)) || !(sb = eval_bytes(c, s)))
        return EVAL_DECLINE;
    Tensor *y = eval_out(c, 0, out, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    bool saturate = c->opset < 19 || op_attr_int(c->op, "saturate", 1) != 0;
    bool rounds = c->opset >= 23 && op_attr_int(c->op, "precision", 0);
    for (size_t e = 0, n = (size_t)tensor_numel(x); e < n; e++) {
        size_t k = quant_index(&q, e);
        double xv = elem_f(x->dtype, xb, e), sv = elem_f(s->dtype, sb, k);
        if (rounds)
            xv = eval_round_to(qt, xv), sv = eval_round_to(qt, sv);
        if (quant_store(y, e, eval_round_to(qt, xv / sv), zero_at(z, zb, k), saturate))
            return eval_decline(c, "a NaN quantized to float4e2m1, which has none");
    }
    c->exact = EVAL_CHECKED;
    return EVAL_OK;
}

/* DequantizeLinear: (x - zero_point) * scale, in the scale's type (or
 * output_dtype from opset 23). */
static int eval_dequantize(EvalCtx *c)
{
    const Tensor *x = eval_in_any(c, 0), *s = eval_in_any(c, 1), *z;
    const uint8_t *xb, *sb, *zb;
    QuantMap q;
    if (!x || !s || !quant_type(x->dtype, true) || !scale_type(s->dtype) ||
        quant_zero(c, s, x->dtype, &z, &zb) || quant_map(c, x, s, &q) ||
        !(xb = eval_bytes(c, x)) || !(sb = eval_bytes(c, s)))
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unsupported input type or scale shape");
    int32_t out = c->opset >= 23 ? (int32_t)op_attr_int(c->op, "output_dtype", 0) : 0;
    out = out ? out : s->dtype;
    if (!dtype_is_float(out))
        return eval_decline(c, "an unsupported output_dtype");
    Tensor *y = eval_out(c, 0, out, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    for (size_t e = 0, n = (size_t)tensor_numel(x); e < n; e++) {
        size_t k = quant_index(&q, e);
        double d = elem_f(x->dtype, xb, e) - zero_at(z, zb, k);
        store_f(y, e, d * eval_round_to(out, elem_f(s->dtype, sb, k)));
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "LayerNormalization", 17, eval_layer_norm},
    {"", "InstanceNormalization", 1, eval_instance_norm},
    {"", "GroupNormalization", 18, eval_group_norm},
    {"", "QuantizeLinear", 10, eval_quantize},
    {"", "DequantizeLinear", 10, eval_dequantize},
};

const OpKernelTable eval_norm_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
