/* proto.c - ValueInfoProto and OperatorSetIdProto through protobuf-c. */
#include "proto.h"

#include <string.h>

#include "onnx.pb-c.h"

static void read_tensor_type(Arena *a, const Onnx__TypeProto *tp, TypeInfo *type)
{
    type->elem_type = 0;
    type->rank = -1;
    type->dims = NULL;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    type->elem_type = tt->elem_type;
    if (!tt->shape)
        return;
    int64_t *dims = arena_array(a, tt->shape->n_dim, sizeof *dims);
    if (!dims && tt->shape->n_dim)
        return;
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        dims[i] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                      ? d->dim_value
                      : -1;
    }
    type->rank = tt->shape->n_dim > 1024 ? -1 : (int)tt->shape->n_dim;
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

void proto_write_value_info(Out *o, uint32_t num, const Var *v)
{
    Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    size_t rank = v->type.rank > 0 ? (size_t)v->type.rank : 0;
    Onnx__TensorShapeProto__Dimension *dims = arena_array(o->arena, rank, sizeof *dims);
    Onnx__TensorShapeProto__Dimension **dimp = arena_array(o->arena, rank, sizeof *dimp);
    if (rank && (!dims || !dimp)) {
        o->failed = true;
        return;
    }
    for (size_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        if (v->type.dims[i] >= 0) {
            d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d.dim_value = v->type.dims[i];
        }
        dims[i] = d;
        dimp[i] = &dims[i];
    }
    shape.n_dim = rank;
    shape.dim = dimp;
    tt.has_elem_type = 1;
    tt.elem_type = v->type.elem_type;
    tt.shape = v->type.rank >= 0 ? &shape : NULL;
    tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp.tensor_type = &tt;
    vi.name = (char *)v->name;
    vi.type = &tp;
    size_t n = onnx__value_info_proto__get_packed_size(&vi);
    uint8_t *buf = arena_alloc(o->arena, n);
    if (!buf) {
        o->failed = true;
        return;
    }
    onnx__value_info_proto__pack(&vi, buf);
    out_bytes_field(o, num, buf, n);
}
