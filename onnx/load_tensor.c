/* load_tensor.c - TensorProto at the wire level.
 *
 * raw_data stays where it is in the input (the Tensor points at it); typed
 * fields (float_data, int32_data, ...) are decoded into little-endian element
 * bytes. Declared sizes are checked against the bytes present before anything
 * is allocated, so a hostile header cannot make us allocate without bound. */
#include "external.h"
#include "load_tensor.h"

#include <string.h>

enum {
    T_DIMS = 1, T_DATA_TYPE = 2, T_SEGMENT = 3, T_FLOAT_DATA = 4, T_INT32_DATA = 5,
    T_STRING_DATA = 6, T_INT64_DATA = 7, T_NAME = 8, T_RAW_DATA = 9, T_DOUBLE_DATA = 10,
    T_UINT64_DATA = 11, T_DATA_LOCATION = 14,
};

static const uint8_t TENSOR_WT[] = {
    [T_DIMS] = WTS_INTS, [T_DATA_TYPE] = WTS_VARINT, [T_SEGMENT] = WTS_LEN,
    [T_FLOAT_DATA] = WTS_FLOATS, [T_INT32_DATA] = WTS_INTS, [T_STRING_DATA] = WTS_LEN,
    [T_INT64_DATA] = WTS_INTS, [T_NAME] = WTS_LEN, [T_RAW_DATA] = WTS_LEN,
    [T_DOUBLE_DATA] = WTS_DOUBLES, [T_UINT64_DATA] = WTS_INTS, [12] = WTS_LEN, [13] = WTS_LEN,
    [T_DATA_LOCATION] = WTS_VARINT,
};

/* The typed field that stores dtype's values, their wire type, and how many
 * values one element takes (complex numbers take two). */
static uint32_t typed_field(int32_t dtype, int *wt, size_t *per_elem)
{
    *per_elem = 1;
    switch (dtype) {
    case DT_COMPLEX64: *per_elem = 2; /* fall through */
    case DT_FLOAT: *wt = WT_I32; return T_FLOAT_DATA;
    case DT_COMPLEX128: *per_elem = 2; /* fall through */
    case DT_DOUBLE: *wt = WT_I64; return T_DOUBLE_DATA;
    case DT_INT64: *wt = WT_VARINT; return T_INT64_DATA;
    case DT_UINT32: case DT_UINT64: *wt = WT_VARINT; return T_UINT64_DATA;
    default: *wt = WT_VARINT; return T_INT32_DATA;
    }
}

/* Visits each scalar of repeated field num, packed or not. Returns the count,
 * or -1 when the bytes are malformed. */
static int64_t each_scalar(Bytes wire, uint32_t num, int wt, uint8_t *dst, size_t size,
                           int64_t limit)
{
    WireReader r = wire_reader(wire);
    WireField f;
    int64_t count = 0;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num != num)
            continue;
        if (f.wt == wt) {
            if (dst && count < limit)
                for (size_t b = 0; b < size; b++)
                    dst[count * size + b] = (uint8_t)(f.u >> (8 * b));
            count++;
            continue;
        }
        if (f.wt != WT_LEN)
            return -1;
        WireReader p = wire_reader(f.data);
        while (p.p < p.end) {
            uint64_t v = 0;
            if (wt == WT_VARINT) {
                if (wire_varint(&p, &v))
                    return -1;
            } else {
                size_t n = wt == WT_I32 ? 4 : 8;
                if ((size_t)(p.end - p.p) < n)
                    return -1;
                for (size_t b = 0; b < n; b++)
                    v |= (uint64_t)p.p[b] << (8 * b);
                p.p += n;
            }
            if (dst && count < limit)
                for (size_t b = 0; b < size; b++)
                    dst[count * size + b] = (uint8_t)(v >> (8 * b));
            count++;
        }
    }
    return rc < 0 ? -1 : count;
}

static int read_dims(Loader *L, Tensor *t, Bytes wire, uint32_t field)
{
    int64_t n = each_scalar(wire, field, WT_VARINT, NULL, 0, 0);
    if (n < 0 || n > 64)
        return loader_error(L, "tensor '%s': malformed or too many dims", t->name);
    t->ndims = (size_t)n;
    t->dims = arena_array(&L->m->arena, t->ndims, sizeof *t->dims);
    if (!t->dims && n)
        return loader_oom(L);
    each_scalar(wire, field, WT_VARINT, (uint8_t *)t->dims, 8, n);
    for (size_t i = 0; i < t->ndims; i++)
        if (t->dims[i] < 0)
            return loader_error(L, "tensor '%s': negative dimension %lld", t->name,
                                (long long)t->dims[i]);
    if (tensor_numel(t) < 0)
        return loader_error(L, "tensor '%s': dimensions overflow", t->name);
    return 0;
}

static int read_strings(Loader *L, Tensor *t, Bytes wire, int64_t numel)
{
    WireReader r = wire_reader(wire);
    WireField f;
    size_t cap = 0;
    while (wire_next(&r, &f) == 1) {
        if (f.num != T_STRING_DATA || f.wt != WT_LEN)
            continue;
        if (arena_grow(&L->m->arena, (void **)&t->strings, &cap, t->n_strings + 1,
                       sizeof *t->strings))
            return loader_oom(L);
        t->strings[t->n_strings++] = f.data;
    }
    if ((int64_t)t->n_strings != numel)
        return loader_error(L, "tensor '%s': %zu strings for %lld elements", t->name,
                            t->n_strings, (long long)numel);
    return 0;
}

static int read_typed(Loader *L, Tensor *t, Bytes wire, int64_t numel)
{
    int wt;
    size_t per_elem, size = dtype_size(t->dtype);
    uint32_t num = typed_field(t->dtype, &wt, &per_elem);
    int64_t count = each_scalar(wire, num, wt, NULL, 0, 0);
    if (count < 0)
        return loader_error(L, "tensor '%s': malformed data field", t->name);
    if (numel > INT64_MAX / (int64_t)per_elem || count != numel * (int64_t)per_elem)
        return loader_error(L, "tensor '%s': %lld values stored, dims declare %lld x %zu",
                            t->name, (long long)count, (long long)numel, per_elem);
    uint8_t *data = arena_array(&L->m->arena, (size_t)numel, size);
    if (!data && numel)
        return loader_oom(L);
    each_scalar(wire, num, wt, data, size / per_elem, count);
    t->data = data;
    t->nbytes = (size_t)numel * size;
    return 0;
}

/* A 4- or 2-bit tensor's packed bytes, checked against the dims: raw_data
 * as it is, int32_data (one packed byte a value, as onnx writes it) decoded.
 * Nothing computes with them; a writer may move them to external data, and
 * the unchanged TensorProto is written back as read. Types of no known
 * packing stay encoded as read. */
static int read_packed(Loader *L, Tensor *t, Bytes wire, Bytes raw, bool has_raw,
                       int64_t numel)
{
    if (!dtype_packed_bytes(t->dtype, 1))
        return 0;
    size_t want = dtype_packed_bytes(t->dtype, numel);
    int64_t count = has_raw ? (int64_t)raw.len
                            : each_scalar(wire, T_INT32_DATA, WT_VARINT, NULL, 0, 0);
    if (count < 0 || (uint64_t)count != want)
        return loader_error(L, "tensor '%s': %s has %lld bytes, %lld %s elements pack into %zu",
                            t->name, has_raw ? "raw_data" : "int32_data", (long long)count,
                            (long long)numel, dtype_name(t->dtype), want);
    if (has_raw) {
        t->data = raw.ptr;
    } else {
        uint8_t *data = arena_array(&L->m->arena, want, 1);
        if (!data && want)
            return loader_oom(L);
        each_scalar(wire, T_INT32_DATA, WT_VARINT, data, 1, count);
        t->data = data;
    }
    t->nbytes = want;
    return 0;
}

int load_tensor(Loader *L, Bytes wire, Tensor **out)
{
    Tensor *t = arena_alloc(&L->m->arena, sizeof *t);
    if (!t)
        return loader_oom(L);
    t->wire = wire;
    t->name = "";
    Bytes raw = {0};
    bool has_raw = false, segmented = false;
    WireReader r = wire_reader_checked(wire, TENSOR_WT);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num == T_DATA_TYPE && f.wt == WT_VARINT)
            t->dtype = (int32_t)f.u;
        else if (f.num == T_NAME && f.wt == WT_LEN && !(t->name = loader_str(L, f.data)))
            return -1;
        else if (f.num == T_RAW_DATA && f.wt == WT_LEN)
            raw = f.data, has_raw = true;
        else if (f.num == T_DATA_LOCATION && f.wt == WT_VARINT)
            t->external = f.u == 1;
        else if (f.num == T_SEGMENT)
            segmented = true;
    }
    if (rc < 0)
        return loader_error(L, "tensor '%s': malformed protobuf", t->name);
    if (r.bad)
        return loader_error(L, "tensor '%s': malformed protobuf (field %u has the wrong wire "
                            "type)", t->name, r.bad);
    if (t->dtype == DT_UNDEFINED)
        return loader_error(L, "tensor '%s': data_type is UNDEFINED (0)", t->name);
    if (read_dims(L, t, wire, T_DIMS))
        return -1;
    *out = t;
    int64_t numel = tensor_numel(t);
    size_t size = dtype_size(t->dtype);
    if (segmented)
        return 0; /* a segment of a larger tensor: kept as it is */
    if (t->external)
        return load_external(L, t, wire);
    if (t->dtype == DT_STRING)
        return read_strings(L, t, wire, numel);
    if (!size)
        return read_packed(L, t, wire, raw, has_raw, numel);
    if (has_raw) {
        if ((uint64_t)numel > SIZE_MAX / size || raw.len != (size_t)numel * size)
            return loader_error(L, "tensor '%s': raw_data has %zu bytes, dims declare %lld x %zu",
                                t->name, raw.len, (long long)numel, size);
        t->data = raw.ptr;
        t->nbytes = raw.len;
        return 0;
    }
    return read_typed(L, t, wire, numel);
}

/* SparseTensorProto: values (a TensorProto, whose name is the tensor's),
 * indices, and the dense dims. */
enum { S_VALUES = 1, S_INDICES = 2, S_DIMS = 3 };
static const uint8_t SPARSE_WT[] = {[S_VALUES] = WTS_LEN, [S_INDICES] = WTS_LEN,
                                    [S_DIMS] = WTS_INTS};

int load_sparse_tensor(Loader *L, Bytes wire, Tensor **out)
{
    Bytes part[S_INDICES + 1] = {{0}};
    WireReader r = wire_reader_checked(wire, SPARSE_WT);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        if ((f.num == S_VALUES || f.num == S_INDICES) && f.wt == WT_LEN)
            part[f.num] = f.data;
    if (rc < 0 || r.bad)
        return loader_error(L, "sparse initializer: malformed protobuf");
    Tensor *values, *indices = NULL;
    if (!part[S_VALUES].ptr)
        return loader_error(L, "sparse initializer without values");
    if (load_tensor(L, part[S_VALUES], &values) ||
        (part[S_INDICES].ptr && load_tensor(L, part[S_INDICES], &indices)))
        return -1;
    if (values->external || (indices && indices->external))
        return loader_error(L, "sparse initializer '%s': values or indices in external data "
                            "are not supported", values->name);
    Tensor *t = arena_alloc(&L->m->arena, sizeof *t);
    if (!t)
        return loader_oom(L);
    *t = (Tensor){.dtype = values->dtype, .name = values->name, .sparse = true, .wire = wire};
    if (read_dims(L, t, wire, S_DIMS))
        return -1;
    *out = t;
    return 0;
}

bool load_tensor_external(Bytes wire)
{
    WireReader r = wire_reader(wire);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        if (f.num == T_DATA_LOCATION && (f.wt != WT_VARINT || f.u == 1))
            return true;
    return rc < 0;
}

Bytes load_tensor_name(Bytes wire)
{
    WireReader r = wire_reader(wire);
    WireField f;
    Bytes name = {0};
    while (wire_next(&r, &f) == 1)
        if (f.num == T_NAME && f.wt == WT_LEN)
            name = f.data;
    return name;
}
