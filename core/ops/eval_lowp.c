/* eval_lowp.c - ONNX's low-precision element types for the reference
 * interpreter (eval.h): the float8 variants (E4M3FN, E4M3FNUZ, E5M2,
 * E5M2FNUZ, E8M0), FLOAT4E2M1 and the packed integers INT4, UINT4, INT2,
 * UINT2, and Cast/CastLike from and to them.
 *
 * A tensor of these types holds its elements as ONNX stores them: one byte
 * each for float8, two 4-bit or four 2-bit elements a byte, low bits first
 * (core/ir/tensor.h), so what the loader read is used as it is.
 *
 * Encoding a value rounds to nearest, ties to even, on the type's grid
 * (subnormals included). With saturation a value beyond the largest finite
 * one (an infinity too) becomes it; without, it becomes infinity (E5M2) or
 * NaN (the types without infinity). The FNUZ types have a single NaN (0x80)
 * and no negative zero. E8M0 (a power of two, no sign) rounds the float32
 * value's exponent up, down or to nearest (Cast-24's round_mode). FLOAT4E2M1
 * has neither infinity nor NaN and always saturates; a NaN cast to it is
 * declined, as its result is left open. Integers cast to the packed types
 * wrap to their low bits (the spec's rule for integers out of range); a
 * float out of their range is undefined, and declined. For E8M0 the spec
 * leaves negative values open, and its table for zero and infinity differs
 * from onnx's reference: those decline too. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

/* The layout of a float8 or float4 type. */
typedef struct LowpFormat {
    int mbits, bias;
    double max; /* largest finite value */
    bool has_inf, fnuz;
    uint8_t nan; /* the NaN code (sign clear); 0 when none */
} LowpFormat;

static bool lowp_format(int32_t dt, LowpFormat *f)
{
    switch (dt) {
    case DT_FLOAT8E4M3FN: *f = (LowpFormat){3, 7, 448, false, false, 0x7f}; return true;
    case DT_FLOAT8E4M3FNUZ: *f = (LowpFormat){3, 8, 240, false, true, 0x80}; return true;
    case DT_FLOAT8E5M2: *f = (LowpFormat){2, 15, 57344, true, false, 0x7e}; return true;
    case DT_FLOAT8E5M2FNUZ: *f = (LowpFormat){2, 16, 57344, false, true, 0x80}; return true;
    case DT_FLOAT4E2M1: *f = (LowpFormat){1, 1, 6, false, false, 0}; return true;
    default: return false;
    }
}

bool eval_lowp_type(int32_t dt)
{
    LowpFormat f;
    return lowp_format(dt, &f) || dt == DT_FLOAT8E8M0 || dt == DT_INT4 || dt == DT_UINT4 ||
           dt == DT_INT2 || dt == DT_UINT2;
}

bool eval_lowp_float(int32_t dt)
{
    LowpFormat f;
    return lowp_format(dt, &f) || dt == DT_FLOAT8E8M0;
}

/* Bits per element: 8, 4 or 2. */
static unsigned lowp_bits(int32_t dt)
{
    switch (dt) {
    case DT_INT4: case DT_UINT4: case DT_FLOAT4E2M1: return 4;
    case DT_INT2: case DT_UINT2: return 2;
    default: return 8;
    }
}

static unsigned lowp_code(int32_t dt, const uint8_t *b, size_t k)
{
    unsigned bits = lowp_bits(dt), per = 8 / bits;
    return (b[k / per] >> (k % per * bits)) & ((1u << bits) - 1);
}

static void lowp_put_code(int32_t dt, uint8_t *b, size_t k, unsigned code)
{
    unsigned bits = lowp_bits(dt), per = 8 / bits, shift = k % per * bits;
    unsigned mask = ((1u << bits) - 1) << shift;
    b[k / per] = (uint8_t)((b[k / per] & ~mask) | ((code << shift) & mask));
}

/* The value of a float8/float4 code. */
static double lowp_decode(const LowpFormat *f, unsigned code)
{
    unsigned width = f->mbits == 1 ? 4 : 8, ebits = width - 1 - (unsigned)f->mbits;
    unsigned sign = code >> (width - 1), e = (code >> f->mbits) & ((1u << ebits) - 1);
    unsigned m = code & ((1u << f->mbits) - 1);
    if (f->nan && (f->fnuz ? code == f->nan : (code & 0x7f) == (f->has_inf ? 0x7c : 0x7f)))
        return f->fnuz || !f->has_inf ? NAN : (sign ? -INFINITY : INFINITY);
    if (f->has_inf && e == 31 && m)
        return NAN;
    double v = e ? ldexp(1.0 + ldexp(m, -f->mbits), (int)e - f->bias)
                 : ldexp(m, 1 - f->bias - f->mbits);
    return sign ? -v : v;
}

/* The code of v rounded to f's grid (ties to even); the caller handled NaN. */
static unsigned lowp_encode(const LowpFormat *f, double v, bool saturate)
{
    unsigned width = f->mbits == 1 ? 4 : 8, sign = signbit(v) ? 1u << (width - 1) : 0;
    double a = fabs(v);
    if (saturate && a > f->max)
        a = f->max;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): the quantum is 2^(e-1-mbits) */
    int low = 1 - f->bias; /* the smallest normal exponent */
    int q = (e - 1 < low ? low : e - 1) - f->mbits;
    double r = a == INFINITY ? a : ldexp(nearbyint(ldexp(a, -q)), q);
    if (r > f->max) /* beyond the largest finite value: infinity or NaN */
        return f->has_inf ? sign | 0x7c : f->nan | (f->fnuz ? 0 : sign);
    if (r == 0)
        return f->fnuz ? 0 : sign;
    frexp(r, &e);
    unsigned code;
    if (e - 1 < low)
        code = (unsigned)ldexp(r, f->bias - 1 + f->mbits);
    else
        code = ((unsigned)(e - 1 + f->bias) << f->mbits) |
               ((unsigned)(ldexp(r, -(e - 1)) * (1 << f->mbits)) - (1u << f->mbits));
    return sign | code;
}

/* E8M0 from a float32 value: its exponent field, rounded as round_mode
 * says (0 up, 1 down, 2 nearest); 0xff is NaN, and an infinity. */
static unsigned e8m0_encode(double v, bool saturate, int mode)
{
    float x = (float)v;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned e = (bits >> 23) & 0xff;
    if (e == 0xff)
        return 0xff;
    bool up = false;
    if (mode == 0)
        up = (bits & 0x7fffff) != 0;
    else if (mode == 2) /* guard bit, and round, sticky or the exponent's own bit */
        up = (bits & 0x400000) && ((bits & 0x200000) || (bits & 0x1fffff) || e > 0);
    if (up && e == 0xfe && saturate)
        up = false;
    return e + up;
}

EvalNum eval_lowp_get(int32_t dt, const uint8_t *b, size_t k)
{
    unsigned code = lowp_code(dt, b, k);
    LowpFormat f;
    if (lowp_format(dt, &f))
        return (EvalNum){.f = lowp_decode(&f, code)};
    switch (dt) {
    case DT_FLOAT8E8M0: return (EvalNum){.f = code == 0xff ? NAN : ldexp(1.0, (int)code - 127)};
    case DT_INT4: return (EvalNum){.i = (int64_t)code - (code & 8 ? 16 : 0)};
    case DT_INT2: return (EvalNum){.i = (int64_t)code - (code & 2 ? 4 : 0)};
    default: return (EvalNum){.i = code};
    }
}

int eval_lowp_put_float(int32_t dt, uint8_t *b, size_t k, double v, bool saturate, int mode)
{
    LowpFormat f;
    if (dt == DT_FLOAT8E8M0) {
        lowp_put_code(dt, b, k, e8m0_encode(v, saturate, mode));
        return 0;
    }
    if (!lowp_format(dt, &f))
        return -1;
    if (isnan(v)) {
        if (!f.nan)
            return -1;
        lowp_put_code(dt, b, k, f.nan);
        return 0;
    }
    lowp_put_code(dt, b, k, lowp_encode(&f, v, saturate || !f.nan));
    return 0;
}

void eval_lowp_put_int(int32_t dt, uint8_t *b, size_t k, int64_t v)
{
    lowp_put_code(dt, b, k, (unsigned)((uint64_t)v & 0xff));
}

EvalNum eval_elem(int32_t dt, const uint8_t *b, size_t k)
{
    return eval_lowp_type(dt) ? eval_lowp_get(dt, b, k) : eval_load(dt, b + k * dtype_size(dt));
}

bool eval_elem_float(int32_t dt)
{
    return dtype_is_float(dt) || eval_lowp_float(dt);
}

const Tensor *eval_in_any(const EvalCtx *c, size_t i)
{
    const Tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (t && eval_lowp_type(t->dtype))
        return tensor_numel(t) >= 0 && tensor_has_bytes(t) && t->ndims <= EVAL_MAX_RANK ? t : NULL;
    return eval_in(c, i);
}

/* --- Cast and CastLike --- */

/* Does float f truncate into integer type dt's range (to is exclusive)? */
static bool fits_integer(int32_t dt, double f)
{
    double lo, to;
    switch (dt) {
    case DT_INT2: lo = -2, to = 2; break;
    case DT_UINT2: lo = 0, to = 4; break;
    case DT_INT4: lo = -8, to = 8; break;
    case DT_UINT4: lo = 0, to = 16; break;
    case DT_INT8: lo = -0x1p7, to = 0x1p7; break;
    case DT_UINT8: lo = 0, to = 0x1p8; break;
    case DT_INT16: lo = -0x1p15, to = 0x1p15; break;
    case DT_UINT16: lo = 0, to = 0x1p16; break;
    case DT_INT32: lo = -0x1p31, to = 0x1p31; break;
    case DT_UINT32: lo = 0, to = 0x1p32; break;
    case DT_INT64: lo = -0x1p63, to = 0x1p63; break;
    default: return false; /* uint64 is only moved (eval.h) */
    }
    return trunc(f) >= lo && trunc(f) < to;
}

/* Element k of x converted to `to` into y; NULL, or why the value has no
 * result the spec defines. */
static const char *cast_one(const Tensor *x, const uint8_t *xb, size_t k, Tensor *y,
                            bool saturate, int mode)
{
    int32_t from = x->dtype, to = y->dtype;
    EvalNum v = eval_elem(from, xb, k);
    bool from_float = eval_elem_float(from), to_int = !eval_elem_float(to) && to != DT_BOOL;
    uint8_t *yb = (uint8_t *)y->data;
    if (from_float && to_int && !fits_integer(to, v.f))
        return "a float out of the integer type's range (undefined)";
    if (!eval_lowp_type(to)) { /* from a low-precision type: its value, as double or int64 */
        EvalNum r = eval_convert(v, from_float ? DT_DOUBLE : DT_INT64, to);
        eval_store(to, yb + k * dtype_size(to), r);
        return NULL;
    }
    double f = from_float ? v.f : (double)v.i;
    if (to == DT_FLOAT8E8M0 && (signbit(f) || isinf(f) || (f == 0 && !saturate)))
        return "a negative, infinite or (not saturating) zero value to float8e8m0, which the "
               "spec leaves open";
    if (eval_lowp_float(to))
        return eval_lowp_put_float(to, yb, k, f, saturate, mode) ? "a NaN to float4e2m1, which "
                                                                   "has none" : NULL;
    eval_lowp_put_int(to, yb, k, from_float ? (int64_t)f : v.i);
    return NULL;
}

/* Cast of x to `to` where either is a low-precision type. */
int eval_lowp_cast(EvalCtx *c, const Tensor *x, int32_t to)
{
    if (c->folding)
        return eval_decline(c, "a low-precision cast is left to run time");
    if (!x || x != eval_in_any(c, 0) || x->dtype == DT_UINT64 ||
        !(eval_dtype_ok(to) || eval_lowp_type(to)))
        return eval_decline(c, "a cast from or to an unsupported element type");
    static const char *const modes[] = {"up", "down", "nearest"};
    int mode = c->opset >= 24 ? eval_attr_choice(c->op, "round_mode", modes, 3) : 0;
    bool saturate = c->opset < 19 || op_attr_int(c->op, "saturate", 1) != 0;
    const uint8_t *xb = eval_bytes(c, x);
    if (mode == 3 || !xb)
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unknown round_mode");
    Tensor *y = eval_out(c, 0, to, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    for (size_t k = 0, n = (size_t)tensor_numel(x); k < n; k++) {
        const char *why = cast_one(x, xb, k, y, saturate, mode);
        if (why)
            return eval_decline(c, why);
    }
    c->exact = EVAL_CHECKED;
    return EVAL_OK;
}
