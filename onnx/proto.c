/* proto.c - ValueInfoProto and OperatorSetIdProto through protobuf-c. */
#include "proto.h"

#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* The dim_param of dimension i, recorded in type->dim_params (made on the
 * first one). -1 when out of memory. */
static int read_dim_param(Arena *a, TypeInfo *type, size_t n, size_t i, const char *param)
{
    if (!param || !*param)
        return 0;
    if (!type->dim_params && !(type->dim_params = arena_array(a, n, sizeof *type->dim_params)))
        return -1;
    return (type->dim_params[i] = arena_strdup(a, param)) ? 0 : -1;
}

static void read_tensor_type(Arena *a, const Onnx__TypeProto *tp, TypeInfo *type)
{
    *type = (TypeInfo){0, -1, NULL, NULL};
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    type->elem_type = tt->elem_type;
    if (!tt->shape || tt->shape->n_dim > 1024)
        return;
    size_t n = tt->shape->n_dim;
    int64_t *dims = arena_array(a, n, sizeof *dims);
    if (!dims && n)
        return;
    for (size_t i = 0; i < n; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        bool has_value = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[i] = has_value ? d->dim_value : -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
            read_dim_param(a, type, n, i, d->dim_param))
            type->dim_params = NULL; /* out of memory: the names are lost, not the shape */
    }
    type->rank = (int)n;
    type->dims = dims;
}

/* protobuf-c unpacks nested messages by recursion: a hostile TypeProto
 * nested thousands deep would overflow the stack. Types nest through
 * sequence (4 -> 1), map (5 -> 2) and optional (9 -> 1). */
enum { MAX_TYPE_DEPTH = 32 };

static bool type_depth_ok(Bytes tp, int depth)
{
    if (depth > MAX_TYPE_DEPTH)
        return false;
    WireReader r = wire_reader(tp);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        uint32_t inner = f.num == 4 || f.num == 9 ? 1 : f.num == 5 ? 2 : 0;
        if (!inner || f.wt != WT_LEN)
            continue;
        WireReader c = wire_reader(f.data);
        WireField g;
        while ((rc = wire_next(&c, &g)) == 1)
            if (g.num == inner && g.wt == WT_LEN && !type_depth_ok(g.data, depth + 1))
                return false;
        if (rc < 0)
            return false;
    }
    return rc == 0;
}

static bool value_info_depth_ok(Bytes wire)
{
    WireReader r = wire_reader(wire);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        if (f.num == 2 && f.wt == WT_LEN && !type_depth_ok(f.data, 0))
            return false;
    return rc == 0;
}

int proto_value_info(Arena *a, Bytes wire, const char **name, TypeInfo *type)
{
    if (!value_info_depth_ok(wire))
        return -1;
    Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, wire.len, wire.ptr);
    if (!vi)
        return -1;
    *name = arena_strdup(a, vi->name ? vi->name : "");
    read_tensor_type(a, vi->type, type);
    onnx__value_info_proto__free_unpacked(vi, NULL);
    return *name ? 0 : -1;
}

/* The kind (TYPE_*) of a sequence or optional type holding tensors, with
 * the tensors' type in *inner; TYPE_TENSOR for any other type. */
static int read_held_type(Arena *a, const Onnx__TypeProto *tp, TypeInfo *inner)
{
    int kind = TYPE_TENSOR;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
        kind = TYPE_OPTIONAL;
        tp = tp->optional_type->elem_type;
    }
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
        kind = kind == TYPE_OPTIONAL ? TYPE_OPTIONAL_SEQUENCE : TYPE_SEQUENCE;
        tp = tp->sequence_type->elem_type;
    }
    read_tensor_type(a, tp, inner);
    return kind != TYPE_TENSOR && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
               ? kind
               : TYPE_TENSOR;
}

int proto_value_info_held(Arena *a, Bytes wire, TypeInfo *inner)
{
    *inner = (TypeInfo){0, -1, NULL, NULL};
    if (!value_info_depth_ok(wire))
        return TYPE_TENSOR;
    Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, wire.len, wire.ptr);
    if (!vi)
        return TYPE_TENSOR;
    int kind = read_held_type(a, vi->type, inner);
    onnx__value_info_proto__free_unpacked(vi, NULL);
    return kind;
}

int proto_opset(Arena *a, Bytes wire, Opset *out)
{
    Onnx__OperatorSetIdProto *os = onnx__operator_set_id_proto__unpack(NULL, wire.len, wire.ptr);
    if (!os)
        return -1;
    out->domain = arena_strdup(a, os->domain ? os->domain : "");
    out->version = os->version;
    onnx__operator_set_id_proto__free_unpacked(os, NULL);
    return out->domain ? 0 : -1;
}

void proto_write_opset(Out *o, uint32_t num, const Opset *op)
{
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    os.domain = (char *)op->domain;
    os.has_version = 1;
    os.version = op->version;
    size_t n = onnx__operator_set_id_proto__get_packed_size(&os);
    uint8_t *buf = arena_alloc(o->arena, n);
    if (!buf) {
        o->failed = true;
        return;
    }
    onnx__operator_set_id_proto__pack(&os, buf);
    out_bytes_field(o, num, buf, n);
}

/* A TypeProto for t in o's arena (NULL when out of memory). */
/* The protobuf-c messages a TypeProto is packed from. They live only until
 * it is packed (the output keeps the packed bytes): on the stack up to
 * TYPE_DIMS dims, else in dims_heap, which type_scaffold_free releases. A
 * million value_info entries would otherwise leave ~250 bytes each in the
 * output's arena. */
enum { TYPE_DIMS = 8 };
typedef struct TypeScaffold {
    Onnx__TypeProto tp;
    Onnx__TypeProto__Tensor tt;
    Onnx__TensorShapeProto shape;
    Onnx__TensorShapeProto__Dimension dims[TYPE_DIMS], *dimp[TYPE_DIMS];
    void *dims_heap;
} TypeScaffold;

static void type_scaffold_free(TypeScaffold *s) { free(s->dims_heap); }

/* t as a TypeProto built in s; NULL when out of memory. */
static Onnx__TypeProto *type_proto(TypeScaffold *s, const TypeInfo *t)
{
    size_t rank = t->rank > 0 ? (size_t)t->rank : 0;
    Onnx__TensorShapeProto__Dimension *dims = s->dims, **dimp = s->dimp;
    s->dims_heap = NULL;
    if (rank > TYPE_DIMS) {
        if (rank > SIZE_MAX / (sizeof *dims + sizeof *dimp) ||
            !(s->dims_heap = malloc(rank * (sizeof *dims + sizeof *dimp))))
            return NULL;
        dims = s->dims_heap;
        dimp = (Onnx__TensorShapeProto__Dimension **)(dims + rank);
    }
    s->shape = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
    for (size_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        if (t->dims[i] >= 0) {
            d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d.dim_value = t->dims[i];
        } else if (t->dim_params && t->dim_params[i]) {
            d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d.dim_param = (char *)t->dim_params[i];
        }
        dims[i] = d;
        dimp[i] = &dims[i];
    }
    s->shape.n_dim = rank;
    s->shape.dim = dimp;
    s->tt = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
    s->tt.has_elem_type = 1;
    s->tt.elem_type = t->elem_type;
    s->tt.shape = t->rank >= 0 ? &s->shape : NULL;
    s->tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
    s->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    s->tp.tensor_type = &s->tt;
    return &s->tp;
}

void proto_write_type(Out *o, uint32_t num, const TypeInfo *t)
{
    TypeScaffold s;
    Onnx__TypeProto *tp = type_proto(&s, t);
    uint8_t *buf = tp ? arena_alloc(o->arena, onnx__type_proto__get_packed_size(tp)) : NULL;
    if (buf)
        out_bytes_field(o, num, buf, onnx__type_proto__pack(tp, buf));
    else
        o->failed = true;
    type_scaffold_free(&s);
}

void proto_write_value_info(Out *o, uint32_t num, const Var *v)
{
    Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
    TypeScaffold s;
    vi.name = (char *)v->name;
    vi.type = type_proto(&s, &v->type);
    /* packed straight into the output's copied bytes: no buffer of its own */
    size_t n = vi.type ? onnx__value_info_proto__get_packed_size(&vi) : 0;
    if (n) {
        out_tag(o, num, WT_LEN);
        out_varint(o, n);
    }
    uint8_t *buf = out_space(o, n);
    if (buf)
        onnx__value_info_proto__pack(&vi, buf);
    else
        o->failed = true;
    type_scaffold_free(&s);
}
