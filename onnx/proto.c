/* proto.c - TypeProto, ValueInfoProto and OperatorSetIdProto: read through
 * protobuf-c; tensor types written by hand (see proto_write_type). */
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

/* A tensor TypeProto is encoded here by hand rather than packed through
 * protobuf-c: infer-shapes writes one per value, a million in a
 * million-node model, and building protobuf-c's message tree for each and
 * walking it twice (size, then pack) took a few percent of such a run. The
 * bytes are those protobuf-c writes (fields in number order, an int32 or
 * int64 below zero as ten bytes, an unknown dimension as an empty
 * Dimension), which tests/output_digests.py holds to. */
enum { TAG_1_LEN = 0x0a, TAG_2_LEN = 0x12, TAG_1_VARINT = 0x08 };

/* A length-delimited field's size: tag, length, body. */
static size_t len_field(size_t body)
{
    return 1 + wire_varint_len(body) + body;
}

static const char *dim_param(const TypeInfo *t, size_t i)
{
    return t->dims[i] < 0 && t->dim_params ? t->dim_params[i] : NULL;
}

/* The body of dimension i's Dimension message. */
static size_t dim_body(const TypeInfo *t, size_t i)
{
    const char *param = dim_param(t, i);
    if (t->dims[i] >= 0)
        return 1 + wire_varint_len((uint64_t)t->dims[i]);
    return param ? len_field(strlen(param)) : 0;
}

static size_t shape_body(const TypeInfo *t)
{
    size_t n = 0;
    for (int i = 0; i < t->rank; i++)
        n += len_field(dim_body(t, (size_t)i));
    return n;
}

/* The body of t's tensor_type, its shape's body being shape. */
static size_t tensor_type_body(const TypeInfo *t, size_t shape)
{
    size_t n = 1 + wire_varint_len((uint64_t)(int64_t)t->elem_type);
    return t->rank >= 0 ? n + len_field(shape) : n;
}

/* The size of t's TypeProto (tensor_type: elem_type, then the shape when
 * the rank is known); *shape: the shape's body, for put_type_proto. */
static size_t type_proto_size(const TypeInfo *t, size_t *shape)
{
    *shape = shape_body(t);
    return len_field(tensor_type_body(t, *shape));
}

/* Writes t's TypeProto at p (type_proto_size bytes), returning the end. */
static uint8_t *put_type_proto(uint8_t *p, const TypeInfo *t, size_t shape)
{
    *p++ = TAG_1_LEN;
    p = wire_put_varint(p, tensor_type_body(t, shape));
    *p++ = TAG_1_VARINT;
    p = wire_put_varint(p, (uint64_t)(int64_t)t->elem_type);
    if (t->rank < 0)
        return p;
    *p++ = TAG_2_LEN;
    p = wire_put_varint(p, shape);
    for (size_t i = 0; i < (size_t)t->rank; i++) {
        const char *param = dim_param(t, i);
        *p++ = TAG_1_LEN;
        p = wire_put_varint(p, dim_body(t, i));
        if (t->dims[i] >= 0) {
            *p++ = TAG_1_VARINT;
            p = wire_put_varint(p, (uint64_t)t->dims[i]);
        } else if (param) {
            size_t n = strlen(param);
            *p++ = TAG_2_LEN;
            p = wire_put_varint(p, n);
            memcpy(p, param, n);
            p += n;
        }
    }
    return p;
}

void proto_write_type(Out *o, uint32_t num, const TypeInfo *t)
{
    size_t shape, n = type_proto_size(t, &shape);
    uint8_t *buf = arena_alloc(o->arena, n);
    if (buf)
        out_bytes_field(o, num, buf, (size_t)(put_type_proto(buf, t, shape) - buf));
    else
        o->failed = true;
}

void proto_write_value_info(Out *o, uint32_t num, const Var *v)
{
    /* name (field 1), then type (field 2), packed straight into the output's
     * copied bytes: no buffer of its own */
    size_t shape, name = strlen(v->name), type = type_proto_size(&v->type, &shape);
    size_t n = len_field(name) + len_field(type);
    out_tag(o, num, WT_LEN);
    out_varint(o, n);
    uint8_t *p = out_space(o, n);
    if (!p) {
        o->failed = true;
        return;
    }
    *p++ = TAG_1_LEN;
    p = wire_put_varint(p, name);
    memcpy(p, v->name, name);
    p += name;
    *p++ = TAG_2_LEN;
    p = wire_put_varint(p, type);
    put_type_proto(p, &v->type, shape);
}
