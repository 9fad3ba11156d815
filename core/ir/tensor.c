/* tensor.c - dtype facts, element access and half-precision conversions. */
#include "tensor.h"

#include <math.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} DTYPES[DT_LAST + 1] = {
    [DT_UNDEFINED] = {"undefined", 0}, [DT_FLOAT] = {"float", 4},
    [DT_UINT8] = {"uint8", 1},         [DT_INT8] = {"int8", 1},
    [DT_UINT16] = {"uint16", 2},       [DT_INT16] = {"int16", 2},
    [DT_INT32] = {"int32", 4},         [DT_INT64] = {"int64", 8},
    [DT_STRING] = {"string", 0},       [DT_BOOL] = {"bool", 1},
    [DT_FLOAT16] = {"float16", 2},     [DT_DOUBLE] = {"double", 8},
    [DT_UINT32] = {"uint32", 4},       [DT_UINT64] = {"uint64", 8},
    [DT_COMPLEX64] = {"complex64", 8}, [DT_COMPLEX128] = {"complex128", 16},
    [DT_BFLOAT16] = {"bfloat16", 2},   [DT_FLOAT8E4M3FN] = {"float8e4m3fn", 1},
    [DT_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 1},
    [DT_FLOAT8E5M2] = {"float8e5m2", 1},
    [DT_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 1},
    [DT_UINT4] = {"uint4", 0},         [DT_INT4] = {"int4", 0},
    [DT_FLOAT4E2M1] = {"float4e2m1", 0}, [DT_FLOAT8E8M0] = {"float8e8m0", 1},
    [DT_UINT2] = {"uint2", 0},         [DT_INT2] = {"int2", 0},
    [DT_FLOAT6E2M3] = {"float6e2m3", 0}, [DT_FLOAT6E3M2] = {"float6e3m2", 0},
};

bool dtype_is_known(int32_t dtype)
{
    return dtype > DT_UNDEFINED && dtype <= DT_LAST;
}

bool dtype_is_float(int32_t dtype)
{
    return dtype == DT_FLOAT || dtype == DT_DOUBLE || dtype == DT_FLOAT16 || dtype == DT_BFLOAT16;
}

size_t dtype_size(int32_t dtype)
{
    return dtype_is_known(dtype) ? DTYPES[dtype].size : 0;
}

size_t dtype_packed_bytes(int32_t dtype, int64_t numel)
{
    if (numel < 0)
        return 0;
    switch (dtype) {
    case DT_UINT4: case DT_INT4: case DT_FLOAT4E2M1: return (size_t)numel / 2 + numel % 2;
    case DT_UINT2: case DT_INT2: return (size_t)numel / 4 + (numel % 4 != 0);
    default: return (size_t)numel * dtype_size(dtype);
    }
}

const char *dtype_name(int32_t dtype)
{
    return dtype >= 0 && dtype <= DT_LAST ? DTYPES[dtype].name : "unknown";
}

int64_t dims_numel(const int64_t *dims, size_t ndims)
{
    int64_t n = 1;
    for (size_t i = 0; i < ndims; i++) {
        if (dims[i] < 0 || (dims[i] && n > INT64_MAX / dims[i]))
            return -1;
        n *= dims[i];
    }
    return n;
}

int64_t tensor_numel(const Tensor *t)
{
    return dims_numel(t->dims, t->ndims);
}

Tensor *tensor_new_lazy(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims,
                        const TensorGen *gen)
{
    int64_t n = dims_numel(dims, ndims);
    size_t size = dtype_size(dtype);
    if (n < 0 || !size || (uint64_t)n > SIZE_MAX / size)
        return NULL;
    Tensor *t = arena_alloc(a, sizeof *t);
    int64_t *d = arena_array(a, ndims, sizeof *d);
    if (!t || (!d && ndims))
        return NULL;
    if (ndims)
        memcpy(d, dims, ndims * sizeof *d);
    t->dtype = dtype;
    t->ndims = ndims;
    t->dims = d;
    t->gen = gen;
    t->nbytes = (size_t)n * size;
    t->name = "";
    t->changed = true;
    return t;
}

Tensor *tensor_new(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims)
{
    Tensor *t = tensor_new_lazy(a, dtype, ndims, dims, NULL);
    void *data = t ? arena_alloc(a, t->nbytes) : NULL;
    if (!data)
        return NULL;
    t->data = data;
    return t;
}

Tensor *tensor_new_packed(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims)
{
    if (dtype_size(dtype) || !dtype_packed_bytes(dtype, 1))
        return tensor_new(a, dtype, ndims, dims);
    /* one byte per element: room enough for the packed ones */
    Tensor *t = tensor_new(a, DT_UINT8, ndims, dims);
    if (t) {
        t->dtype = dtype;
        t->nbytes = dtype_packed_bytes(dtype, tensor_numel(t));
    }
    return t;
}

Tensor *tensor_share(Arena *a, const Tensor *src)
{
    Tensor *t = arena_alloc(a, sizeof *t);
    if (!t)
        return NULL;
    *t = *src;
    return t;
}

/* New tensors are encoded from their fields: no original bytes to reuse. */
static Tensor *tensor_with_dims(Arena *a, Tensor *t, size_t ndims, const int64_t *dims)
{
    int64_t *copy = ndims ? arena_array(a, ndims, sizeof *copy) : NULL;
    if (ndims && !copy)
        return NULL;
    for (size_t i = 0; i < ndims; i++)
        copy[i] = dims[i];
    t->dims = copy;
    t->ndims = ndims;
    t->changed = true;
    t->wire = (Bytes){0};
    return t;
}

Tensor *tensor_reshaped(Arena *a, const Tensor *src, size_t ndims, const int64_t *dims)
{
    Tensor *t = tensor_share(a, src);
    return t ? tensor_with_dims(a, t, ndims, dims) : NULL;
}

Tensor *tensor_new_strings(Arena *a, size_t ndims, const int64_t *dims, Bytes *strings,
                           size_t n)
{
    Tensor *t = arena_alloc(a, sizeof *t);
    if (!t)
        return NULL;
    *t = (Tensor){.dtype = DT_STRING, .name = "", .strings = strings, .n_strings = n};
    return tensor_with_dims(a, t, ndims, dims);
}

Tensor *tensor_copy_strings(Arena *a, const Tensor *src)
{
    Bytes *s = src->n_strings ? arena_array(a, src->n_strings, sizeof *s) : NULL;
    if (src->n_strings && !s)
        return NULL;
    for (size_t i = 0; i < src->n_strings; i++) {
        uint8_t *p = arena_alloc(a, src->strings[i].len ? src->strings[i].len : 1);
        if (!p)
            return NULL;
        if (src->strings[i].len)
            memcpy(p, src->strings[i].ptr, src->strings[i].len);
        s[i] = (Bytes){p, src->strings[i].len};
    }
    return tensor_new_strings(a, src->ndims, src->dims, s, src->n_strings);
}

Tensor *tensor_copy(Arena *a, const Tensor *src)
{
    if (src->dtype == DT_STRING)
        return tensor_copy_strings(a, src);
    if (!src->data && src->nbytes)
        return NULL;
    Tensor *c = tensor_new_packed(a, src->dtype, src->ndims, src->dims);
    if (!c || c->nbytes != src->nbytes)
        return NULL;
    if (src->nbytes)
        memcpy((void *)c->data, src->data, src->nbytes);
    return c;
}

/* Little-endian loads: the host may not be, and data may be unaligned. */
static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void store_le(uint8_t *p, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

double tensor_get_f64(const Tensor *t, size_t i)
{
    size_t size = dtype_size(t->dtype);
    uint8_t buf[16];
    const uint8_t *p = (const uint8_t *)t->data + i * size;
    if (!t->data) { /* computed on demand */
        t->gen->fill(t->gen->ctx, i * size, buf, size);
        p = buf;
    }
    uint64_t u = load_le(p, size);
    switch (t->dtype) {
    case DT_FLOAT: {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    case DT_DOUBLE: {
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    case DT_FLOAT16: return half_to_float((uint16_t)u);
    case DT_BFLOAT16: return bfloat16_to_float((uint16_t)u);
    case DT_INT8: return (int8_t)u;
    case DT_INT16: return (int16_t)u;
    case DT_INT32: return (int32_t)u;
    case DT_INT64: return (double)(int64_t)u;
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64: case DT_BOOL:
        return (double)u;
    default: return NAN;
    }
}

/* An integer element for v: NaN becomes 0 and out-of-range values saturate
 * (a plain cast would be undefined). Narrower types keep the low bytes. */
static uint64_t int_bits(double v, bool is_unsigned)
{
    if (v != v)
        return 0;
    if (is_unsigned)
        return v <= 0 ? 0 : v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
    if (v <= -9223372036854775808.0)
        return (uint64_t)INT64_MIN;
    return v >= 9223372036854775807.0 ? (uint64_t)INT64_MAX : (uint64_t)(int64_t)v;
}

void tensor_set_f64(Tensor *t, size_t i, double v)
{
    size_t size = dtype_size(t->dtype);
    uint8_t *p = (uint8_t *)t->data + i * size;
    uint64_t u;
    switch (t->dtype) {
    case DT_FLOAT: {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        u = b;
        break;
    }
    case DT_DOUBLE: memcpy(&u, &v, 8); break;
    case DT_FLOAT16: u = float_to_half((float)v); break;
    case DT_BFLOAT16: u = float_to_bfloat16((float)v); break;
    default: u = int_bits(v, t->dtype == DT_UINT64); break;
    }
    store_le(p, size, u);
}

void tensor_set_i64(Tensor *t, size_t i, int64_t v)
{
    size_t size = dtype_size(t->dtype);
    store_le((uint8_t *)t->data + i * size, size, (uint64_t)v);
}

float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man) { /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ff) << 13);
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Round to nearest even, with overflow to infinity and gradual underflow. */
uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return sign | 0x7c00;
    if (absx < 0x38800000u) { /* below the smallest normal half */
        if (absx < 0x33000000u)
            return sign;
        /* value = man * 2^(e-150); in units of 2^-24 that is man >> (126-e) */
        uint32_t man = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(absx >> 23);
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return sign | (uint16_t)half;
    }
    uint32_t r = absx - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t half = r >> 13, rem = r & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
        half++;
    return sign | (uint16_t)half;
}

float bfloat16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_bfloat16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40); /* keep nan a quiet nan */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
