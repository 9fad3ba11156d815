/* eval_quant.c - kernels of the integer and quantized linear operations for
 * the reference interpreter (eval.h): MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv and DynamicQuantizeLinear.
 *
 * The products of integers accumulate in int32 (the spec's arithmetic).
 * Each operand, less its zero point, becomes a double tensor, and the float
 * MatMul and Conv kernels (eval_reduce.c, eval_conv.c, found in their
 * tables: the registry lists this file's) add the products: 8- and 16-bit
 * products summed in double are exact integers in any order while below
 * 2^53, so the result is the int32 sum itself (a sum outside int32
 * declines). QLinear* then requantize as onnx's reference implementation
 * does: the multiplier x_scale * w_scale / y_scale in the scales' type, the
 * sum times it in double, plus the output zero point, rounded half to even
 * and saturated. Zero points and scales
 * broadcast numpy-wise, except a vector given for the left operand's rows,
 * where the spec (per row) and numpy (per column) part ways: it declines. */
#include <math.h>
#include <string.h>

#include "eval.h"

static bool quant_8bit(const Tensor *t)
{
    return t && (t->dtype == DT_INT8 || t->dtype == DT_UINT8);
}

/* Element k of t (numbers as double), or 0 when t is NULL. */
static double quant_at(const Tensor *t, const uint8_t *b, int64_t k)
{
    if (!t)
        return 0;
    EvalNum v = eval_load(t->dtype, b + (size_t)k * dtype_size(t->dtype));
    return dtype_is_float(t->dtype) ? v.f : (double)v.i;
}

/* Optional input i: 0 and *t NULL when omitted, -1 when unusable. */
static int quant_optional(EvalCtx *c, size_t i, const Tensor **t, const uint8_t **b)
{
    *t = NULL;
    *b = NULL;
    if (i >= c->n_in || !c->in[i])
        return 0;
    if (!(*t = eval_in(c, i)) || !(*b = eval_bytes(c, *t)))
        return -1;
    return 0;
}

/* x less its zero point z (absent: 0) as a double tensor. per_axis0: a
 * vector z holds one point per index of x's axis 0 (Conv weights' output
 * channels); else z broadcasts numpy-wise. NULL with c->why set, or out of
 * memory. */
static Tensor *quant_shifted(EvalCtx *c, const Tensor *x, const Tensor *z, const uint8_t *zb,
                             bool per_axis0)
{
    const uint8_t *xb = eval_bytes(c, x);
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    if (!xb)
        return NULL;
    if (n * sizeof(double) > c->limit) {
        eval_decline_too_large(c);
        return NULL;
    }
    bool by_channel = per_axis0 && z && z->ndims == 1 && tensor_numel(z) > 1;
    if (by_channel && (x->ndims < 1 || z->dims[0] != x->dims[0])) {
        eval_decline(c, "a zero point that is not one per output channel");
        return NULL;
    }
    Tensor *t = tensor_new(c->arena, DT_DOUBLE, x->ndims, x->dims);
    double *d = t ? (double *)t->data : NULL;
    size_t per = by_channel && x->dims[0] ? n / (size_t)x->dims[0] : 1;
    for (size_t e = 0; d && e < n; e++) {
        int64_t k = !z ? 0 : by_channel ? (int64_t)(e / per)
                                        : eval_broadcast_offset(z, x->dims, x->ndims, e);
        if (k < 0) {
            eval_decline(c, "a zero point that does not broadcast to its operand");
            return NULL;
        }
        d[e] = (double)eval_load(x->dtype, xb + e * size).i - quant_at(z, zb, k);
    }
    return t;
}

/* The float MatMul or Conv kernel, from eval_reduce.c's or eval_conv.c's
 * table (both have one version, since opset 1). */
static OpEvalFn quant_table_kernel(const char *type)
{
    const OpKernelTable *t = strcmp(type, "Conv") ? &eval_reduce_kernels : &eval_conv_kernels;
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->entries[i].type, type))
            return t->entries[i].eval;
    return NULL;
}

/* Runs the float kernel `type` on double operands ins[n] with c's op (its
 * attributes: Conv's geometry); the double result, or NULL (c->why set when
 * it declined). */
static Tensor *quant_float_kernel(EvalCtx *c, const char *type, const Tensor **ins, size_t n)
{
    OpEvalFn fn = quant_table_kernel(type);
    Tensor *out = NULL;
    EvalCtx sub = *c;
    sub.in = ins;
    sub.n_in = n;
    sub.out = &out;
    sub.n_out = 1;
    sub.why = NULL;
    if (!fn) {
        eval_decline(c, "no float kernel to accumulate with");
        return NULL;
    }
    int rc = fn(&sub);
    c->why = sub.why;
    c->refused = sub.refused;
    return rc == EVAL_OK ? out : NULL;
}

/* The double sums as int32 output 0 (MatMulInteger, ConvInteger). */
static int quant_store_int32(EvalCtx *c, const Tensor *sums)
{
    Tensor *y = eval_out(c, 0, DT_INT32, sums->ndims, sums->dims);
    if (!y)
        return eval_out_failed(c);
    const double *s = sums->data;
    for (size_t e = 0, n = (size_t)tensor_numel(sums); e < n; e++) {
        if (s[e] < -2147483648.0 || s[e] > 2147483647.0)
            return eval_decline(c, "a sum outside int32, where the accumulator wraps");
        eval_store(DT_INT32, (uint8_t *)y->data + e * 4, (EvalNum){.i = (int64_t)s[e]});
    }
    c->exact = EVAL_KEEPS;
    return EVAL_OK;
}

/* Declines a vector (more than one element, rank 1) for the left operand's
 * rows: the spec reads it per row, numpy broadcasting per column. */
static bool quant_row_vector(const Tensor *t)
{
    return t && t->ndims == 1 && tensor_numel(t) > 1;
}

/* MatMulInteger(A, B, a_zero_point, b_zero_point) and ConvInteger(X, W,
 * x_zero_point, w_zero_point): int32 sums of products of 8-bit operands. */
static int quant_integer(EvalCtx *c, bool conv)
{
    const Tensor *a = eval_in(c, 0), *b = eval_in(c, 1), *az, *bz;
    const uint8_t *azb, *bzb;
    if (!quant_8bit(a) || !quant_8bit(b) || quant_optional(c, 2, &az, &azb) ||
        quant_optional(c, 3, &bz, &bzb) || (az && az->dtype != a->dtype) ||
        (bz && bz->dtype != b->dtype) || quant_row_vector(az))
        return c->why ? EVAL_DECLINE : eval_decline(c, "unsupported operand or zero point types");
    const Tensor *ins[2] = {quant_shifted(c, a, az, azb, false), NULL};
    ins[1] = ins[0] ? quant_shifted(c, b, bz, bzb, conv) : NULL;
    Tensor *sums = ins[1] ? quant_float_kernel(c, conv ? "Conv" : "MatMul", ins, 2) : NULL;
    if (!sums)
        return c->why ? EVAL_DECLINE : EVAL_OOM;
    return quant_store_int32(c, sums);
}

static int eval_matmul_integer(EvalCtx *c) { return quant_integer(c, false); }
static int eval_conv_integer(EvalCtx *c) { return quant_integer(c, true); }

/* QLinear*'s operands: inputs a, a_scale, a_zp, b, b_scale, b_zp, y_scale,
 * y_zp (and QLinearConv's int32 bias). */
typedef struct QLinear {
    const Tensor *t[9];
    const uint8_t *b[9];
} QLinear;

static int qlinear_inputs(EvalCtx *c, QLinear *q)
{
    for (size_t i = 0; i < 9; i++)
        if (quant_optional(c, i, &q->t[i], &q->b[i]))
            return eval_decline(c, "an input of an unsupported type");
    const Tensor *a = q->t[0], *b = q->t[3], *yz = q->t[7];
    for (size_t i = 1; i < 7; i += 3)
        if (!q->t[i] || !dtype_is_float(q->t[i]->dtype))
            return eval_decline(c, "a scale that is absent or not a float");
    if (!quant_8bit(a) || !quant_8bit(b) || (q->t[2] && q->t[2]->dtype != a->dtype) ||
        (q->t[5] && q->t[5]->dtype != b->dtype) || (yz && !quant_8bit(yz)) ||
        (q->t[8] && q->t[8]->dtype != DT_INT32) || q->t[4]->dtype != q->t[1]->dtype ||
        q->t[6]->dtype != q->t[1]->dtype || quant_row_vector(q->t[1]) ||
        quant_row_vector(q->t[2]))
        return eval_decline(c, "unsupported operand, scale or zero point types or shapes");
    return EVAL_OK;
}

/* The scale of output element e: a per-output-channel vector (Conv's
 * w_scale, axis 1 of Y) or a numpy broadcast against Y; -1 when neither. */
static int64_t qlinear_scale_at(const Tensor *s, const Tensor *y, size_t e, bool conv)
{
    if (conv && s->ndims == 1 && tensor_numel(s) > 1) {
        int64_t plane = 1;
        for (size_t a = 2; a < y->ndims; a++)
            plane *= y->dims[a];
        return s->dims[0] == y->dims[1] ? (int64_t)e / plane % y->dims[1] : -1;
    }
    return eval_broadcast_offset(s, y->dims, y->ndims, e);
}

/* Requantizes the double sums: round(sum * (a_scale * b_scale / y_scale)) +
 * y_zero_point, saturated to the output type (y_zero_point's, else a's). */
static int qlinear_requantize(EvalCtx *c, const QLinear *q, const Tensor *sums, bool conv)
{
    int32_t out = q->t[7] ? q->t[7]->dtype : q->t[0]->dtype, st = q->t[1]->dtype;
    int64_t l = 0, h = 0;
    eval_int_range(out, &l, &h); /* int8 or uint8 (qlinear_inputs) */
    double lo = (double)l, hi = (double)h;
    Tensor *y = eval_out(c, 0, out, sums->ndims, sums->dims);
    if (!y)
        return eval_out_failed(c);
    const double *s = sums->data;
    for (size_t e = 0, n = (size_t)tensor_numel(sums); e < n; e++) {
        int64_t ka = qlinear_scale_at(q->t[1], sums, e, false);
        int64_t kb = qlinear_scale_at(q->t[4], sums, e, conv);
        int64_t ky = qlinear_scale_at(q->t[6], sums, e, false);
        int64_t kz = q->t[7] ? qlinear_scale_at(q->t[7], sums, e, false) : 0;
        if (ka < 0 || kb < 0 || ky < 0 || kz < 0)
            return eval_decline(c, "a scale or zero point that does not broadcast to the output");
        double m = quant_at(q->t[1], q->b[1], ka) * quant_at(q->t[4], q->b[4], kb);
        m = eval_round_to(st, m);
        m = eval_round_to(st, m / quant_at(q->t[6], q->b[6], ky));
        double v = nearbyint(s[e] * m + quant_at(q->t[7], q->b[7], kz));
        v = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
        eval_store(out, (uint8_t *)y->data + e, (EvalNum){.i = (int64_t)v});
    }
    c->exact = EVAL_CHECKED;
    return EVAL_OK;
}

static int qlinear_run(EvalCtx *c, bool conv)
{
    QLinear q;
    memset(&q, 0, sizeof q);
    if (c->n_in < 8 || c->n_in > (conv ? 9u : 8u) || qlinear_inputs(c, &q))
        return c->why ? EVAL_DECLINE : eval_decline(c, "unexpected inputs");
    const Tensor *ins[3] = {quant_shifted(c, q.t[0], q.t[2], q.b[2], false), NULL, NULL};
    ins[1] = ins[0] ? quant_shifted(c, q.t[3], q.t[5], q.b[5], conv) : NULL;
    if (ins[1] && q.t[8])
        ins[2] = quant_shifted(c, q.t[8], NULL, NULL, false);
    Tensor *sums = ins[1] && (ins[2] || !q.t[8])
                       ? quant_float_kernel(c, conv ? "Conv" : "MatMul", ins, q.t[8] ? 3 : 2)
                       : NULL;
    if (!sums)
        return c->why ? EVAL_DECLINE : EVAL_OOM;
    return qlinear_requantize(c, &q, sums, conv);
}

static int eval_qlinear_matmul(EvalCtx *c) { return qlinear_run(c, false); }
static int eval_qlinear_conv(EvalCtx *c) { return qlinear_run(c, true); }

/* DynamicQuantizeLinear on float32: the scale spans [min(x, 0), max(x, 0)]
 * over 255 steps, the zero point puts 0 on a step; all in float32 as the
 * spec's formulas (and onnxruntime) compute, quotients rounded half to even. */
static int eval_dynamic_quantize(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    const uint8_t *xb = x && x->dtype == DT_FLOAT ? eval_bytes(c, x) : NULL;
    if (!xb)
        return c->why ? EVAL_DECLINE : eval_decline(c, "an input other than float32");
    size_t n = (size_t)tensor_numel(x);
    double lo = 0, hi = 0;
    for (size_t e = 0; e < n; e++) {
        double v = eval_load(DT_FLOAT, xb + 4 * e).f;
        if (v != v || isinf(v))
            return eval_decline(c, "a NaN or infinite input");
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    double span = hi == lo ? 1.0 : eval_round_to(DT_FLOAT, hi - lo);
    double scale = eval_round_to(DT_FLOAT, span / 255.0);
    double zp = eval_round_to(DT_FLOAT, 0 - eval_round_to(DT_FLOAT, lo / scale));
    zp = nearbyint(zp < 0 ? 0 : zp > 255 ? 255 : zp);
    Tensor *y = eval_out(c, 0, DT_UINT8, x->ndims, x->dims);
    Tensor *ys = y ? eval_out(c, 1, DT_FLOAT, 0, NULL) : NULL;
    Tensor *yz = ys ? eval_out(c, 2, DT_UINT8, 0, NULL) : NULL;
    if (!yz)
        return eval_out_failed(c);
    for (size_t e = 0; e < n; e++) {
        double v = nearbyint(eval_round_to(DT_FLOAT, eval_load(DT_FLOAT, xb + 4 * e).f / scale));
        v += zp;
        v = v < 0 ? 0 : v > 255 ? 255 : v;
        eval_store(DT_UINT8, (uint8_t *)y->data + e, (EvalNum){.i = (int64_t)v});
    }
    eval_store(DT_FLOAT, (uint8_t *)ys->data, (EvalNum){.f = scale});
    eval_store(DT_UINT8, (uint8_t *)yz->data, (EvalNum){.i = (int64_t)zp});
    c->exact = EVAL_CHECKED;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "MatMulInteger", 10, eval_matmul_integer},
    {"", "ConvInteger", 10, eval_conv_integer},
    {"", "QLinearMatMul", 10, eval_qlinear_matmul},
    {"", "QLinearConv", 10, eval_qlinear_conv},
    {"", "DynamicQuantizeLinear", 11, eval_dynamic_quantize},
};

const OpKernelTable eval_quant_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
