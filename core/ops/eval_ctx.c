/* eval_ctx.c - what kernels share (eval.h): element loads, stores and
 * conversions, reading inputs, making results, broadcasting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "../ir/lazy.h"

bool eval_dtype_ok(int32_t dt)
{
    switch (dt) {
    case DT_FLOAT: case DT_FLOAT16: case DT_BFLOAT16: case DT_DOUBLE: case DT_INT8:
    case DT_INT16: case DT_INT32: case DT_INT64: case DT_UINT8: case DT_UINT16:
    case DT_UINT32: case DT_UINT64: case DT_BOOL:
        return true;
    default:
        return false;
    }
}

/* Little-endian, possibly unaligned. */
static uint64_t eval_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Per element on every fold: each case reads its own width, with no table
 * lookup in the loop of a streamed Cast. */
EvalNum eval_load(int32_t dt, const uint8_t *p)
{
    EvalNum v;
    switch (dt) {
    case DT_FLOAT: {
        uint32_t b = (uint32_t)eval_le(p, 4);
        float f;
        memcpy(&f, &b, 4);
        v.f = f;
        return v;
    }
    case DT_DOUBLE: {
        uint64_t u = eval_le(p, 8);
        memcpy(&v.f, &u, 8);
        return v;
    }
    case DT_FLOAT16: v.f = half_to_float((uint16_t)eval_le(p, 2)); return v;
    case DT_BFLOAT16: v.f = bfloat16_to_float((uint16_t)eval_le(p, 2)); return v;
    case DT_INT8: v.i = (int8_t)p[0]; return v;
    case DT_INT16: v.i = (int16_t)eval_le(p, 2); return v;
    case DT_INT32: v.i = (int32_t)eval_le(p, 4); return v;
    case DT_BOOL: v.i = p[0] != 0; return v;
    case DT_UINT8: v.i = p[0]; return v;
    case DT_UINT16: v.i = (int64_t)eval_le(p, 2); return v;
    case DT_UINT32: v.i = (int64_t)eval_le(p, 4); return v;
    default: v.i = (int64_t)eval_le(p, 8); return v; /* int64, uint64: their bits */
    }
}

static void eval_put(uint8_t *p, size_t n, uint64_t u)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}

void eval_store(int32_t dt, uint8_t *p, EvalNum v)
{
    switch (dt) {
    case DT_FLOAT: {
        float f = (float)v.f;
        uint32_t b;
        memcpy(&b, &f, 4);
        eval_put(p, 4, b);
        return;
    }
    case DT_DOUBLE: {
        uint64_t u;
        memcpy(&u, &v.f, 8);
        eval_put(p, 8, u);
        return;
    }
    case DT_FLOAT16: eval_put(p, 2, float_to_half((float)v.f)); return;
    case DT_BFLOAT16: eval_put(p, 2, float_to_bfloat16((float)v.f)); return;
    case DT_BOOL: p[0] = v.i != 0; return;
    case DT_INT8: case DT_UINT8: p[0] = (uint8_t)v.i; return;
    case DT_INT16: case DT_UINT16: eval_put(p, 2, (uint64_t)v.i); return;
    case DT_INT32: case DT_UINT32: eval_put(p, 4, (uint64_t)v.i); return;
    default: eval_put(p, 8, (uint64_t)v.i); return;
    }
}

/* A float truncated to an integer of type to, saturating (C leaves the
 * out-of-range cast undefined; onnxruntime's result is then unspecified). */
static int64_t eval_trunc(double f, int32_t to)
{
    if (f != f)
        return 0;
    if (to == DT_UINT64)
        return f <= 0 ? 0 : f >= 18446744073709551615.0 ? -1 : (int64_t)(uint64_t)f;
    if (f <= -9223372036854775808.0)
        return INT64_MIN;
    return f >= 9223372036854775807.0 ? INT64_MAX : (int64_t)f;
}

EvalNum eval_convert(EvalNum v, int32_t from, int32_t to)
{
    bool ff = dtype_is_float(from), tf = dtype_is_float(to);
    EvalNum r;
    if (to == DT_BOOL)
        r.i = ff ? v.f != 0 : v.i != 0;
    else if (ff && tf)
        r.f = to == DT_FLOAT16 || to == DT_BFLOAT16 ? (double)(float)v.f : v.f;
    else if (ff)
        r.i = eval_trunc(v.f, to);
    else if (tf)
        r.f = from == DT_UINT64 ? (double)(uint64_t)v.i
              : to == DT_FLOAT ? (double)(float)v.i : (double)v.i; /* int64 to float: one rounding */
    else
        r.i = v.i;
    return r;
}

/* why and refused say the last decline's reason. */
static int decline_as(EvalCtx *c, EvalRefusal refused, const char *why)
{
    c->why = why;
    c->refused = refused;
    return EVAL_DECLINE;
}

bool eval_int_range(int32_t dt, int64_t *lo, int64_t *hi)
{
    int bits;
    bool is_signed = true;
    switch (dt) {
    case DT_BOOL: *lo = 0, *hi = 1; return true;
    case DT_INT2: bits = 2; break;
    case DT_INT4: bits = 4; break;
    case DT_INT8: bits = 8; break;
    case DT_INT16: bits = 16; break;
    case DT_INT32: bits = 32; break;
    case DT_INT64: *lo = INT64_MIN, *hi = INT64_MAX; return true;
    case DT_UINT2: bits = 2, is_signed = false; break;
    case DT_UINT4: bits = 4, is_signed = false; break;
    case DT_UINT8: bits = 8, is_signed = false; break;
    case DT_UINT16: bits = 16, is_signed = false; break;
    case DT_UINT32: bits = 32, is_signed = false; break;
    default: return false;
    }
    *lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
    *hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
    return true;
}

double eval_round_to(int32_t dt, double v)
{
    uint8_t tmp[8];
    eval_store(dt, tmp, (EvalNum){.f = v});
    return eval_load(dt, tmp).f;
}

int eval_decline(EvalCtx *c, const char *why)
{
    return decline_as(c, EVAL_REFUSED_OTHER, why);
}

int eval_decline_too_large(EvalCtx *c)
{
    return decline_as(c, EVAL_REFUSED_TOO_LARGE, "the result is larger than the fold limit");
}

bool eval_over_macs(const EvalCtx *c, double macs)
{
    return c->max_macs > 0 && macs > c->max_macs;
}

int eval_decline_step(EvalCtx *c)
{
    return decline_as(c, EVAL_REFUSED_NEAR_STEP, "an input computed with roundings "
                      "onnxruntime may do otherwise lies within 4 ulps of where the result jumps");
}

bool eval_any_inexact(const EvalCtx *c)
{
    for (size_t i = 0; i < c->n_in; i++)
        if (c->in[i] && c->in[i]->inexact)
            return true;
    return false;
}

/* The spacing of dt's values at 1 (2^-mantissa bits). */
static double eval_epsilon(int32_t dt)
{
    switch (dt) {
    case DT_FLOAT16: return 0x1p-10;
    case DT_BFLOAT16: return 0x1p-7;
    case DT_DOUBLE: return 0x1p-52;
    default: return 0x1p-23;
    }
}

bool eval_near_step(int32_t dt, double x, double step)
{
    double scale = fmax(fmax(fabs(x), fabs(step)), 1.0);
    return fabs(x - step) <= EVAL_STEP_ULPS * eval_epsilon(dt) * scale;
}

const Tensor *eval_in(const EvalCtx *c, size_t i)
{
    const Tensor *t = i < c->n_in ? c->in[i] : NULL;
    return t && eval_dtype_ok(t->dtype) && tensor_numel(t) >= 0 && tensor_has_bytes(t) &&
                   t->ndims <= EVAL_MAX_RANK
               ? t
               : NULL;
}

bool eval_index_type(const Tensor *t)
{
    return t && (t->dtype == DT_INT64 || t->dtype == DT_INT32);
}

int64_t eval_index_at(const Tensor *idx, const uint8_t *b, size_t k, int64_t d)
{
    int64_t v = eval_load(idx->dtype, b + k * dtype_size(idx->dtype)).i;
    v = v < 0 ? v + d : v;
    return v >= 0 && v < d ? v : -1;
}

int64_t eval_elements_offset(const Tensor *x, const Tensor *idx, const uint8_t *ib, int axis,
                             size_t k, const int64_t *xs, const int64_t *is)
{
    int64_t at = 0, j = eval_index_at(idx, ib, k, x->dims[axis]);
    if (j < 0)
        return -1;
    for (size_t a = 0; a < x->ndims; a++) {
        int64_t coord = (int64_t)k / is[a] % idx->dims[a];
        if ((int)a != axis && coord >= x->dims[a])
            return -1;
        at += ((int)a == axis ? j : coord) * xs[a];
    }
    return at;
}

const uint8_t *eval_bytes(EvalCtx *c, const Tensor *t)
{
    if (t->data)
        return t->data;
    if (t->nbytes > c->limit) {
        decline_as(c, EVAL_REFUSED_TOO_LARGE,
                   "an input computed while written is larger than the fold limit");
        return NULL;
    }
    uint8_t *buf = arena_alloc(c->arena, t->nbytes ? t->nbytes : 1);
    if (!buf) {
        c->why = NULL;
        return NULL;
    }
    lazy_read(t, 0, t->nbytes, buf);
    return buf;
}

long eval_ints(EvalCtx *c, size_t i, int64_t *v, size_t cap)
{
    const Tensor *t = eval_in(c, i);
    int64_t n = t ? tensor_numel(t) : -1;
    if (!t || n < 0 || (uint64_t)n > cap || dtype_is_float(t->dtype) || t->dtype == DT_BOOL)
        return -1;
    const uint8_t *b = eval_bytes(c, t);
    if (!b)
        return -1;
    for (int64_t k = 0; k < n; k++)
        v[k] = eval_load(t->dtype, b + (size_t)k * dtype_size(t->dtype)).i;
    return (long)n;
}

Tensor *eval_out(EvalCtx *c, size_t i, int32_t dt, size_t rank, const int64_t *dims)
{
    int64_t n = dims_numel(dims, rank);
    c->why = NULL;
    c->refused = EVAL_REFUSED_OTHER;
    if (n < 0 || (uint64_t)n > c->limit / (dtype_size(dt) ? dtype_size(dt) : 1)) {
        eval_decline_too_large(c);
        return NULL;
    }
    Tensor *t = tensor_new_packed(c->arena, dt, rank, dims);
    if (t && i < c->n_out)
        c->out[i] = t;
    return t;
}

int eval_out_failed(const EvalCtx *c)
{
    return c->why ? EVAL_DECLINE : EVAL_OOM;
}

int eval_axis(int64_t axis, int rank)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

int eval_broadcast(const Tensor *const *ts, size_t n, int64_t *dims)
{
    int rank = 0;
    for (size_t k = 0; k < n; k++)
        rank = (int)ts[k]->ndims > rank ? (int)ts[k]->ndims : rank;
    for (int a = 0; a < rank; a++) {
        dims[a] = 1;
        for (size_t k = 0; k < n; k++) {
            int j = a - (rank - (int)ts[k]->ndims);
            int64_t d = j >= 0 ? ts[k]->dims[j] : 1;
            if (d != 1 && dims[a] != 1 && d != dims[a])
                return -1;
            dims[a] = d != 1 ? d : dims[a];
        }
    }
    return rank;
}

void eval_strides(const int64_t *dims, size_t rank, int64_t *strides)
{
    int64_t s = 1;
    for (size_t a = rank; a-- > 0;) {
        strides[a] = s;
        s *= dims[a];
    }
}

int eval_attr_choice(const Op *op, const char *name, const char *const *names, size_t n)
{
    const Attr *a = op_attr(op, name);
    if (!a)
        return 0;
    for (size_t i = 0; a->type == ATTR_STRING && i < n; i++)
        if (a->s.len == strlen(names[i]) && memcmp(a->s.ptr, names[i], a->s.len) == 0)
            return (int)i;
    return (int)n;
}

int64_t eval_broadcast_offset(const Tensor *w, const int64_t *dims, size_t rank, size_t e)
{
    if (w->ndims > rank)
        return -1;
    int64_t off = 0, mul = 1;
    for (size_t a = rank; a-- > 0;) {
        int64_t coord = (int64_t)(e % (size_t)dims[a]);
        e /= (size_t)dims[a];
        if (a + w->ndims < rank)
            continue;
        int64_t wd = w->dims[a + w->ndims - rank];
        if (wd != 1 && wd != dims[a])
            return -1;
        off += (wd == 1 ? 0 : coord) * mul;
        mul *= wd;
    }
    return off;
}

double *eval_doubles(EvalCtx *c, const Tensor *t)
{
    const uint8_t *b = eval_bytes(c, t);
    size_t n = (size_t)tensor_numel(t), size = dtype_size(t->dtype);
    double *out = b ? arena_array(c->arena, n ? n : 1, sizeof *out) : NULL;
    for (size_t k = 0; out && k < n; k++)
        out[k] = eval_load(t->dtype, b + k * size).f;
    return out;
}
