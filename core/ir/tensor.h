/* tensor.h - tensor values: dtype, dims and a view of the element bytes.
 *
 * A Tensor read from a file points into the mapped input (no copy) when the
 * file stores raw_data; typed fields (float_data, int32_data, ...) are decoded
 * once into little-endian bytes by the loader. Passes that compute new values
 * allocate fresh bytes in the arena and set `changed`. */
#ifndef PPQ_TENSOR_H
#define PPQ_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef struct Bytes {
    const uint8_t *ptr;
    size_t len;
} Bytes;

/* ONNX TensorProto.DataType values. */
enum {
    DT_UNDEFINED = 0, DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4,
    DT_INT16 = 5, DT_INT32 = 6, DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9,
    DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_UINT32 = 12, DT_UINT64 = 13,
    DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
    DT_FLOAT8E4M3FN = 17, DT_FLOAT8E4M3FNUZ = 18, DT_FLOAT8E5M2 = 19,
    DT_FLOAT8E5M2FNUZ = 20, DT_UINT4 = 21, DT_INT4 = 22, DT_FLOAT4E2M1 = 23,
    DT_FLOAT8E8M0 = 24, DT_UINT2 = 25, DT_INT2 = 26, DT_FLOAT6E2M3 = 27, DT_FLOAT6E3M2 = 28,
    DT_LAST = 28,
};

/* Element bytes computed on demand, such as a folded weight: written straight
 * into the output in chunks, never held whole in memory. fill writes bytes
 * [off, off+n) of the tensor's little-endian element bytes into buf; off and
 * n are multiples of the element size. */
typedef struct TensorGen {
    void (*fill)(const void *ctx, size_t off, uint8_t *buf, size_t n);
    const void *ctx;
} TensorGen;

/* Fields ordered so the flags share dtype's word: a large model holds one
 * Tensor per initializer (112 bytes padded, 96 packed). */
typedef struct Tensor {
    int32_t dtype;
    bool external;    /* data_location = EXTERNAL: bytes live in another file */
    bool sparse;      /* a graph's sparse_initializer: wire is the SparseTensorProto,
                       * dims its dense shape; no element bytes (data, gen NULL) */
    bool changed;     /* dtype, dims or data differ from wire */
    bool inexact;     /* fold computed it with roundings onnxruntime may do otherwise
                       * (core/ops/eval.h); only while fold decides, never stored */
    size_t ndims;
    int64_t *dims;
    const void *data; /* little-endian elements; NULL if not in memory */
    const TensorGen *gen; /* or: computed on demand (data is NULL then) */
    size_t nbytes;
    Bytes *strings;   /* DT_STRING elements */
    size_t n_strings;
    const char *location; /* that file, relative to the model's folder */
    const char *name; /* the name stored in the TensorProto */
    Bytes wire;       /* encoded TensorProto; empty for new tensors */
} Tensor;

/* Bytes per element; 0 for strings, sub-byte and unknown types. Sub-byte
 * tensors (4-, 2- and 6-bit) have no element bytes in memory: the loader
 * keeps their encoding as it is, so nothing computes with them. */
size_t dtype_size(int32_t dtype);
const char *dtype_name(int32_t dtype);
/* Bytes of numel packed elements as raw_data and external data store them:
 * numel * dtype_size, two 4-bit or four 2-bit elements a byte (low bits
 * first, the last byte padded); 0 for strings and types of no known
 * packing. */
size_t dtype_packed_bytes(int32_t dtype, int64_t numel);
bool dtype_is_known(int32_t dtype);
/* float, double, float16 or bfloat16. */
bool dtype_is_float(int32_t dtype);
/* Product of dims, or -1 on a negative dim or overflow. */
int64_t dims_numel(const int64_t *dims, size_t ndims);
int64_t tensor_numel(const Tensor *t);
/* A new tensor with zeroed, arena-owned, writable data. */
Tensor *tensor_new(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims);
/* tensor_new, and for the 4- and 2-bit types zeroed bytes of their packed
 * encoding (nbytes = dtype_packed_bytes), as the loader keeps them. */
Tensor *tensor_new_packed(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims);
/* A tensor whose bytes gen computes on demand. */
Tensor *tensor_new_lazy(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims,
                        const TensorGen *gen);
/* Are the element bytes available (in memory or on demand)? */
static inline bool tensor_has_bytes(const Tensor *t) { return t->data || t->gen; }
/* A copy sharing dtype, dims, data and original encoding: the writer emits
 * the original bytes again under the new owner's name. */
Tensor *tensor_share(Arena *a, const Tensor *t);
/* A new tensor holding t's elements under other dims (same count). */
Tensor *tensor_reshaped(Arena *a, const Tensor *t, size_t ndims, const int64_t *dims);
/* A new string tensor whose elements are strings[0..n) (not copied). */
Tensor *tensor_new_strings(Arena *a, size_t ndims, const int64_t *dims, Bytes *strings,
                           size_t n);
/* A new string tensor with src's dims and copies of its strings, all in a:
 * nothing points into src's memory. */
Tensor *tensor_copy_strings(Arena *a, const Tensor *src);
/* A copy of src's elements in a (strings one by one, packed types as
 * stored), unnamed; NULL when src's bytes are not in memory, or out of
 * memory. */
Tensor *tensor_copy(Arena *a, const Tensor *src);
/* Element i as a double (numeric dtypes with data only). */
double tensor_get_f64(const Tensor *t, size_t i);
/* Stores v into element i of a tensor made by tensor_new. */
void tensor_set_f64(Tensor *t, size_t i, double v);
/* Stores an integer exactly (doubles cannot hold every int64). */
void tensor_set_i64(Tensor *t, size_t i, int64_t v);

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);

#endif
