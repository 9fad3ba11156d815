/* decl.c - ValueInfoProto -> InferDecl with dim_param names (decl.h). */
#include "decl.h"

#include "onnx.pb-c.h"
#include "proto.h"

/* Fills out from a tensor type's shape: values, and names where symbolic. */
static int decl_shape(Arena *a, const Onnx__TensorShapeProto *s, InferDecl *out)
{
    if (s->n_dim > 1024)
        return -1;
    int64_t *dims = arena_array(a, s->n_dim, sizeof *dims);
    const char **names = arena_array(a, s->n_dim, sizeof *names);
    if ((!dims || !names) && s->n_dim)
        return -1;
    for (size_t i = 0; i < s->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = s->dim[i];
        bool has_value = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[i] = has_value && d->dim_value >= 0 ? d->dim_value : -1;
        names[i] = NULL;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
            *d->dim_param && !(names[i] = arena_strdup(a, d->dim_param)))
            return -1;
    }
    out->rank = (int)s->n_dim;
    out->dims = dims;
    out->names = names;
    return 0;
}

int onnx_infer_decl(void *ctx, Arena *a, Bytes wire, InferDecl *out)
{
    (void)ctx;
    const char *name;
    TypeInfo ti;
    /* proto_value_info first: it bounds the nesting depth before protobuf-c
     * recurses into a hostile TypeProto. */
    if (proto_value_info(a, wire, &name, &ti))
        return -1;
    Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, wire.len, wire.ptr);
    if (!vi)
        return -1;
    const Onnx__TypeProto *tp = vi->type;
    int rc = 0;
    *out = (InferDecl){0, -1, NULL, NULL};
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type) {
        out->dtype = tp->tensor_type->elem_type;
        if (tp->tensor_type->shape)
            rc = decl_shape(a, tp->tensor_type->shape, out);
    }
    onnx__value_info_proto__free_unpacked(vi, NULL);
    return rc;
}
