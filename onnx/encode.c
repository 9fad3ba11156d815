/* encode.c - BaseGraph -> ONNX bytes, reusing every untouched byte.
 *
 * A message nothing changed is emitted as the bytes it was read from. A changed
 * message is re-encoded field by field in field-number order (the order
 * protobuf serializers use): the fields the IR models come from the IR, every
 * other field (doc strings, metadata, fields this onnx.proto does not know) is
 * copied from the original bytes. So a model read and written with no change
 * is byte-identical, and unknown fields survive edits. */
#include "encode.h"

#include <stdio.h>
#include <string.h>

#include "proto.h"

enum {
    M_IR_VERSION = 1, M_GRAPH = 7, M_OPSET = 8, M_METADATA = 14, M_TRAINING_INFO = 20,
    M_FUNCTIONS = 25,
};
enum { KV_KEY = 1, KV_VALUE = 2 }; /* StringStringEntryProto */
enum { F_OPSET = 9 }; /* FunctionProto.opset_import */
enum {
    G_NODE = 1, G_INITIALIZER = 5, G_INPUT = 11, G_OUTPUT = 12, G_VALUE_INFO = 13,
    G_SPARSE_INITIALIZER = 15,
};
enum { S_VALUES = 1 }; /* SparseTensorProto.values, whose name is the tensor's */
enum { N_INPUT = 1, N_OUTPUT = 2, N_NAME = 3, N_OP_TYPE = 4, N_ATTRIBUTE = 5, N_DOMAIN = 7 };
enum {
    A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_FLOATS = 7, A_INTS = 8,
    A_STRINGS = 9, A_TENSORS = 10, A_GRAPHS = 11, A_TYPE = 20,
};
enum {
    T_DIMS = 1, T_DATA_TYPE = 2, T_FLOAT_DATA = 4, T_INT32_DATA = 5, T_STRING_DATA = 6,
    T_INT64_DATA = 7, T_NAME = 8, T_RAW_DATA = 9, T_DOUBLE_DATA = 10, T_UINT64_DATA = 11,
    T_EXTERNAL_DATA = 13, T_DATA_LOCATION = 14,
};
enum { VI_NAME = 1, VI_TYPE = 2 };

typedef void (*EmitFn)(Out *o, uint32_t field, const void *ctx);

static bool in_set(uint32_t num, const uint32_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == num)
            return true;
    return false;
}

/* Was field num present in the original bytes? (proto2 keeps presence: an
 * explicit empty string must be written back.) */
static bool has_field(Bytes wire, uint32_t num)
{
    WireReader r = wire_reader(wire);
    WireField f;
    while (wire_next(&r, &f) == 1)
        if (f.num == num)
            return true;
    return false;
}

/* Copies the original fields numbered lo..hi that are not in `managed`. */
static void copy_fields(Out *o, Bytes wire, uint32_t lo, uint32_t hi, const uint32_t *managed,
                        size_t n)
{
    WireReader r = wire_reader(wire);
    WireField f;
    while (wire_next(&r, &f) == 1)
        if (f.num >= lo && f.num <= hi && !in_set(f.num, managed, n))
            out_ref(o, f.whole.ptr, f.whole.len);
}

/* An original field emit_merged copies: its number and bytes. */
typedef struct KeptField {
    uint32_t num;
    Bytes whole;
} KeptField;

/* copy_fields over the fields one scan of the wire kept. */
static void copy_kept(Out *o, const KeptField *kept, size_t n, uint32_t lo, uint32_t hi)
{
    for (size_t i = 0; i < n; i++)
        if (kept[i].num >= lo && kept[i].num <= hi)
            out_ref(o, kept[i].whole.ptr, kept[i].whole.len);
}

/* Writes a message whose `managed` fields (ascending) come from emit() and
 * whose other fields are copied from wire, all in field-number order. The
 * wire is read once for the fields to copy (a graph's is the whole model),
 * unless there are more of them than fit here: then once per gap between
 * managed fields. */
static void emit_merged(Out *o, Bytes wire, const uint32_t *managed, size_t n, EmitFn emit,
                        const void *ctx)
{
    enum { MAX_KEPT = 16 };
    KeptField kept[MAX_KEPT];
    size_t n_kept = 0;
    bool all_kept = true;
    WireReader r = wire_reader(wire);
    WireField f;
    while (all_kept && wire_next(&r, &f) == 1)
        if (!in_set(f.num, managed, n)) {
            if (n_kept < MAX_KEPT)
                kept[n_kept++] = (KeptField){f.num, f.whole};
            else
                all_kept = false;
        }
    uint32_t lo = 1;
    for (size_t i = 0; i < n; i++) {
        if (all_kept)
            copy_kept(o, kept, n_kept, lo, managed[i] - 1);
        else
            copy_fields(o, wire, lo, managed[i] - 1, managed, n);
        emit(o, managed[i], ctx);
        lo = managed[i] + 1;
    }
    if (all_kept)
        copy_kept(o, kept, n_kept, lo, UINT32_MAX);
    else
        copy_fields(o, wire, lo, UINT32_MAX, managed, n);
}

/* --- tensors --- */

typedef struct TensorCtx {
    const Tensor *t;
    const char *name;
} TensorCtx;

static void emit_tensor_field(Out *o, uint32_t field, const void *vctx)
{
    const TensorCtx *c = vctx;
    const Tensor *t = c->t;
    switch (field) {
    case T_DIMS:
        for (size_t i = 0; i < t->ndims; i++)
            out_varint_field(o, T_DIMS, (uint64_t)t->dims[i]);
        break;
    case T_DATA_TYPE: out_varint_field(o, T_DATA_TYPE, (uint64_t)t->dtype); break;
    case T_STRING_DATA:
        for (size_t i = 0; i < t->n_strings; i++)
            out_bytes_field(o, T_STRING_DATA, t->strings[i].ptr, t->strings[i].len);
        break;
    case T_NAME:
        if (*c->name || has_field(t->wire, T_NAME))
            out_string_field(o, T_NAME, c->name);
        break;
    case T_RAW_DATA:
        if (t->dtype != DT_STRING)
            out_tensor_bytes_field(o, T_RAW_DATA, t);
        break;
    }
}

bool tensor_moves_out(const Tensor *t, const EncodeOptions *opt)
{
    if (!opt || !opt->data || !tensor_has_bytes(t) || t->dtype == DT_STRING)
        return false;
    /* New values of tensors that were external stay external. */
    return t->nbytes >= opt->threshold || (t->external && t->changed);
}

static void entry(Out *o, const char *key, const char *value)
{
    Out kv;
    out_child(&kv, o);
    const char *copy = arena_strdup(o->arena, value); /* value may be on the stack */
    if (!copy) {
        o->failed = true;
        return;
    }
    out_string_field(&kv, 1, key);
    out_string_field(&kv, 2, copy);
    out_message_field(o, T_EXTERNAL_DATA, &kv);
}

typedef struct ExternalCtx {
    const Tensor *t;
    const char *name;
    size_t offset;
} ExternalCtx;

static void emit_external_field(Out *o, uint32_t field, const void *vctx)
{
    const ExternalCtx *c = vctx;
    char num[32];
    switch (field) {
    case T_DIMS: case T_DATA_TYPE:
        if (!c->t->wire.len)
            emit_tensor_field(o, field, &(TensorCtx){c->t, c->name});
        break;
    case T_NAME: out_string_field(o, T_NAME, c->name); break;
    case T_EXTERNAL_DATA:
        entry(o, "location", o->opt->location);
        snprintf(num, sizeof num, "%zu", c->offset);
        entry(o, "offset", num);
        snprintf(num, sizeof num, "%zu", c->t->nbytes);
        entry(o, "length", num);
        break;
    case T_DATA_LOCATION: out_varint_field(o, T_DATA_LOCATION, 1); break;
    }
}

/* Appends t's bytes to the data file (at an offset that is a multiple of
 * opt->align) and writes a TensorProto that points there; the original's
 * other fields (doc_string, ...) stay. */
static void encode_external(Out *o, const Tensor *t, const char *name)
{
    Out *data = o->opt->data;
    static const uint8_t zeros[EXTERNAL_ALIGN_MAX];
    size_t align = o->opt->align ? o->opt->align : EXTERNAL_ALIGN;
    out_ref(data, zeros, (align - data->size % align) % align);
    ExternalCtx c = {t, name, data->size};
    if (t->data)
        out_ref(data, t->data, t->nbytes);
    else
        out_gen(data, t->gen, t->nbytes);
    static const uint32_t from_wire[] = {T_FLOAT_DATA, T_INT32_DATA, T_INT64_DATA, T_NAME,
                                         T_RAW_DATA, T_DOUBLE_DATA, T_UINT64_DATA,
                                         T_EXTERNAL_DATA, T_DATA_LOCATION};
    static const uint32_t fresh[] = {T_DIMS, T_DATA_TYPE, T_NAME, T_EXTERNAL_DATA,
                                     T_DATA_LOCATION};
    if (t->wire.len && !t->changed)
        emit_merged(o, t->wire, from_wire, 9, emit_external_field, &c);
    else
        emit_merged(o, (Bytes){0}, fresh, 5, emit_external_field, &c);
}

void encode_tensor(Out *o, const Tensor *t, const char *name, bool initializer)
{
    TensorCtx c = {t, name};
    if (initializer && tensor_moves_out(t, o->opt)) {
        encode_external(o, t, name);
        return;
    }
    if (t->wire.len && !t->changed) {
        if (strcmp(t->name, name) == 0) {
            out_ref(o, t->wire.ptr, t->wire.len);
            return;
        }
        static const uint32_t only_name[] = {T_NAME};
        emit_merged(o, t->wire, only_name, 1, emit_tensor_field, &c);
        return;
    }
    static const uint32_t all[] = {T_DIMS, T_DATA_TYPE, T_STRING_DATA, T_NAME, T_RAW_DATA};
    emit_merged(o, (Bytes){0}, all, 5, emit_tensor_field, &c);
}

static void tensor_field(Out *o, uint32_t num, const Tensor *t, const char *name,
                         bool initializer)
{
    Out child;
    out_child(&child, o);
    encode_tensor(&child, t, name, initializer);
    out_message_field(o, num, &child);
}

/* A sparse initializer under name: its original bytes, or, for a copy
 * under another name (split-params), the same with the values renamed. */
static void emit_sparse_values(Out *o, uint32_t field, const void *vctx)
{
    const TensorCtx *c = vctx;
    WireReader r = wire_reader(c->t->wire);
    WireField f;
    while (wire_next(&r, &f) == 1)
        if (f.num == S_VALUES && f.wt == WT_LEN) {
            Tensor values = {.dtype = c->t->dtype, .name = c->t->name, .wire = f.data};
            tensor_field(o, field, &values, c->name, false);
            return;
        }
}

static void encode_sparse(Out *o, const Tensor *t, const char *name)
{
    if (strcmp(t->name, name) == 0) {
        out_ref(o, t->wire.ptr, t->wire.len);
        return;
    }
    static const uint32_t values_only[] = {S_VALUES};
    emit_merged(o, t->wire, values_only, 1, emit_sparse_values, &(TensorCtx){t, name});
}

static void emit_params(Out *o, uint32_t field, const Graph *g, bool sparse)
{
    for (size_t i = 0; i < g->n_params; i++) {
        const Var *v = g->params[i];
        if (v->param->sparse != sparse)
            continue;
        const Tensor *t = v->param;
        if (!sparse && t->wire.len && !t->changed && !strcmp(t->name, v->name) &&
            !tensor_moves_out(t, o->opt) && out_ref_field(o, field, t->wire, g->model->wire))
            continue;
        if (!sparse) {
            tensor_field(o, field, v->param, v->name, true);
            continue;
        }
        Out child;
        out_child(&child, o);
        encode_sparse(&child, v->param, v->name);
        out_message_field(o, field, &child);
    }
}

/* --- dirtiness: does a subtree need re-encoding? --- */

static bool graph_dirty(const Graph *g, const EncodeOptions *opt);

static bool attr_dirty(const Attr *a, const EncodeOptions *opt)
{
    if (!a->wire.len)
        return true;
    for (size_t i = 0; a->tensors && i < a->n; i++)
        if (a->tensors[i]->changed)
            return true;
    for (size_t i = 0; a->graphs && i < a->n; i++)
        if (graph_dirty(a->graphs[i], opt))
            return true;
    return false;
}

static bool op_dirty(const Op *op, const EncodeOptions *opt)
{
    if (op->changed || !op->wire.len)
        return true;
    for (size_t i = 0; i < op->n_attrs; i++)
        if (attr_dirty(&op->attrs[i], opt))
            return true;
    return false;
}

static bool graph_dirty(const Graph *g, const EncodeOptions *opt)
{
    if (g->changed)
        return true;
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed && op_dirty(g->ops[i], opt))
            return true;
    for (size_t i = 0; i < g->n_params; i++) {
        const Var *v = g->params[i];
        if (v->param->changed || strcmp(v->param->name, v->name) != 0 ||
            tensor_moves_out(v->param, opt))
            return true;
    }
    return false;
}

/* --- attributes and nodes --- */

static void encode_graph(Out *o, const Graph *g);

static void emit_attr_field(Out *o, uint32_t field, const void *vctx)
{
    const Attr *a = vctx;
    Out child;
    switch (field) {
    case A_NAME: out_string_field(o, A_NAME, a->name); break;
    case A_F:
        if (a->type == ATTR_FLOAT) {
            uint32_t bits;
            memcpy(&bits, &a->f, 4);
            out_fixed32_field(o, A_F, bits);
        }
        break;
    case A_I:
        if (a->type == ATTR_INT)
            out_varint_field(o, A_I, (uint64_t)a->i);
        break;
    case A_S:
        if (a->type == ATTR_STRING)
            out_bytes_field(o, A_S, a->s.ptr, a->s.len);
        break;
    case A_T: case A_TENSORS:
        if ((a->type == ATTR_TENSOR) == (field == A_T) && a->tensors)
            for (size_t i = 0; i < a->n; i++)
                tensor_field(o, field, a->tensors[i], a->tensors[i]->name, false);
        break;
    case A_G: case A_GRAPHS:
        if ((a->type == ATTR_GRAPH) == (field == A_G) && a->graphs)
            for (size_t i = 0; i < a->n; i++) {
                out_child(&child, o);
                encode_graph(&child, a->graphs[i]);
                out_message_field(o, field, &child);
            }
        break;
    case A_FLOATS:
        for (size_t i = 0; a->type == ATTR_FLOATS && i < a->n; i++) {
            uint32_t bits;
            memcpy(&bits, &a->floats[i], 4);
            out_fixed32_field(o, A_FLOATS, bits);
        }
        break;
    case A_INTS:
        for (size_t i = 0; a->type == ATTR_INTS && i < a->n; i++)
            out_varint_field(o, A_INTS, (uint64_t)a->ints[i]);
        break;
    case A_STRINGS:
        for (size_t i = 0; a->type == ATTR_STRINGS && i < a->n; i++)
            out_bytes_field(o, A_STRINGS, a->strings[i].ptr, a->strings[i].len);
        break;
    case A_TYPE: out_varint_field(o, A_TYPE, (uint64_t)a->type); break;
    }
}

static void encode_attr(Out *o, const Attr *a)
{
    if (!attr_dirty(a, o->opt)) {
        out_ref(o, a->wire.ptr, a->wire.len);
        return;
    }
    if (a->wire.len) { /* only nested tensors or graphs changed */
        static const uint32_t nested[] = {A_T, A_G, A_TENSORS, A_GRAPHS};
        emit_merged(o, a->wire, nested, 4, emit_attr_field, a);
        return;
    }
    static const uint32_t all[] = {A_NAME, A_F,       A_I,       A_S,      A_T, A_G,
                                   A_FLOATS, A_INTS, A_STRINGS, A_TENSORS, A_GRAPHS, A_TYPE};
    emit_merged(o, (Bytes){0}, all, sizeof all / sizeof *all, emit_attr_field, a);
}

static void emit_names(Out *o, uint32_t field, Var *const *vars, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out_string_field(o, field, vars[i] ? vars[i]->name : "");
}

static void emit_node_field(Out *o, uint32_t field, const void *vctx)
{
    const Op *op = vctx;
    Out child;
    switch (field) {
    case N_INPUT: emit_names(o, N_INPUT, op->inputs, op->n_inputs); break;
    case N_OUTPUT: emit_names(o, N_OUTPUT, op->outputs, op->n_outputs); break;
    case N_NAME:
        if (*op->name || has_field(op->wire, N_NAME))
            out_string_field(o, N_NAME, op->name);
        break;
    case N_OP_TYPE: out_string_field(o, N_OP_TYPE, op->type); break;
    case N_ATTRIBUTE:
        for (size_t i = 0; i < op->n_attrs; i++) {
            out_child(&child, o);
            encode_attr(&child, &op->attrs[i]);
            out_message_field(o, N_ATTRIBUTE, &child);
        }
        break;
    case N_DOMAIN:
        if (*op->domain || has_field(op->wire, N_DOMAIN))
            out_string_field(o, N_DOMAIN, op->domain);
        break;
    }
}

static void encode_node(Out *o, const Op *op)
{
    if (!op_dirty(op, o->opt)) {
        out_ref(o, op->wire.ptr, op->wire.len);
        return;
    }
    static const uint32_t managed[] = {N_INPUT, N_OUTPUT, N_NAME, N_OP_TYPE, N_ATTRIBUTE, N_DOMAIN};
    emit_merged(o, op->wire, managed, 6, emit_node_field, op);
}

/* --- graphs and the model --- */

/* Does an encoded ValueInfoProto still carry its value's name? */
static bool value_info_named(Bytes wire, const char *name)
{
    WireReader r = wire_reader(wire);
    WireField f;
    while (wire_next(&r, &f) == 1)
        if (f.num == VI_NAME && f.wt == WT_LEN)
            return f.data.len == strlen(name) && memcmp(f.data.ptr, name, f.data.len) == 0;
    return !*name;
}

static void emit_value_info_field(Out *o, uint32_t field, const void *vctx)
{
    const Var *v = vctx;
    if (field == VI_NAME)
        out_string_field(o, field, v->name);
    else
        proto_write_type(o, field, &v->type);
}

static void emit_value_infos(Out *o, uint32_t field, const ValueInfo *vi, size_t n)
{
    static const uint32_t name_only[] = {VI_NAME}, name_and_type[] = {VI_NAME, VI_TYPE};
    for (size_t i = 0; i < n; i++) {
        if (vi[i].removed)
            continue;
        if (!vi[i].wire.len) {
            proto_write_value_info(o, field, vi[i].var);
        } else if (!vi[i].var ||
                   (!vi[i].retyped && value_info_named(vi[i].wire, vi[i].var->name))) {
            out_bytes_field(o, field, vi[i].wire.ptr, vi[i].wire.len);
        } else { /* renamed by de-inplace, or retyped: the other fields stay */
            Out child;
            out_child(&child, o);
            emit_merged(&child, vi[i].wire, vi[i].retyped ? name_and_type : name_only,
                        vi[i].retyped ? 2 : 1, emit_value_info_field, vi[i].var);
            out_message_field(o, field, &child);
        }
    }
}

static void emit_graph_field(Out *o, uint32_t field, const void *vctx)
{
    const Graph *g = vctx;
    Out child;
    switch (field) {
    case G_NODE:
        for (size_t i = 0; i < g->n_ops; i++) {
            const Op *op = g->ops[i];
            if (op->removed || (!op_dirty(op, o->opt) &&
                                out_ref_field(o, G_NODE, op->wire, g->model->wire)))
                continue;
            out_child(&child, o);
            encode_node(&child, g->ops[i]);
            out_message_field(o, G_NODE, &child);
        }
        break;
    case G_INITIALIZER: emit_params(o, G_INITIALIZER, g, false); break;
    case G_SPARSE_INITIALIZER: emit_params(o, G_SPARSE_INITIALIZER, g, true); break;
    case G_INPUT: emit_value_infos(o, G_INPUT, g->inputs, g->n_inputs); break;
    case G_OUTPUT: emit_value_infos(o, G_OUTPUT, g->outputs, g->n_outputs); break;
    case G_VALUE_INFO: emit_value_infos(o, G_VALUE_INFO, g->value_info, g->n_value_info); break;
    }
}

static void encode_graph(Out *o, const Graph *g)
{
    if (!graph_dirty(g, o->opt)) {
        out_ref(o, g->wire.ptr, g->wire.len);
        return;
    }
    static const uint32_t managed[] = {G_NODE,   G_INITIALIZER, G_INPUT,
                                       G_OUTPUT, G_VALUE_INFO,  G_SPARSE_INITIALIZER};
    emit_merged(o, g->wire, managed, 6, emit_graph_field, g);
}

/* A function's opset imports, for emit_merged. */
static void emit_function_field(Out *o, uint32_t field, const void *vctx)
{
    const ModelFunction *f = vctx;
    for (size_t i = 0; field == F_OPSET && i < f->n_opsets; i++)
        proto_write_opset(o, F_OPSET, &f->opsets[i]);
}

/* ModelProto.functions: each as it was read, but for new opset imports. */
static void emit_functions(Out *o, const Model *m)
{
    static const uint32_t managed[] = {F_OPSET};
    for (size_t i = 0; i < m->n_functions; i++) {
        const ModelFunction *f = &m->functions[i];
        if (!f->changed && out_ref_field(o, M_FUNCTIONS, f->wire, m->wire))
            continue;
        Out child;
        out_child(&child, o);
        emit_merged(&child, f->wire, managed, 1, emit_function_field, f);
        out_message_field(o, M_FUNCTIONS, &child);
    }
}

/* The input's metadata_props but the entry model_set_metadata replaces, then
 * that entry. */
static void emit_metadata(Out *o, const Model *m)
{
    WireReader r = wire_reader(m->wire);
    WireField f, k;
    size_t key_len = strlen(m->metadata_key);
    while (wire_next(&r, &f) == 1) {
        if (f.num != M_METADATA || f.wt != WT_LEN)
            continue;
        bool same = false;
        WireReader e = wire_reader(f.data);
        while (wire_next(&e, &k) == 1)
            same |= k.num == KV_KEY && k.wt == WT_LEN && k.data.len == key_len &&
                    memcmp(k.data.ptr, m->metadata_key, key_len) == 0;
        if (!same)
            out_ref(o, f.whole.ptr, f.whole.len);
    }
    Out child;
    out_child(&child, o);
    out_string_field(&child, KV_KEY, m->metadata_key);
    out_string_field(&child, KV_VALUE, m->metadata_value);
    out_message_field(o, M_METADATA, &child);
}

static void emit_model_field(Out *o, uint32_t field, const void *vctx)
{
    const Model *m = vctx;
    Out child;
    switch (field) {
    case M_IR_VERSION: out_varint_field(o, M_IR_VERSION, (uint64_t)m->ir_version); break;
    case M_GRAPH:
        out_child(&child, o);
        encode_graph(&child, m->graph);
        out_message_field(o, M_GRAPH, &child);
        break;
    case M_OPSET:
        for (size_t i = 0; i < m->n_opsets; i++)
            proto_write_opset(o, M_OPSET, &m->opsets[i]);
        break;
    case M_METADATA: emit_metadata(o, m); break;
    case M_TRAINING_INFO: break; /* only managed when dropped */
    case M_FUNCTIONS: emit_functions(o, m); break;
    }
}

int onnx_encode(const Model *m, Out *o)
{
    if (!m->changed && !graph_dirty(m->graph, o->opt)) {
        out_ref(o, m->wire.ptr, m->wire.len);
    } else if (m->changed) {
        uint32_t managed[6] = {M_IR_VERSION, M_GRAPH, M_OPSET};
        size_t n = 3;
        if (m->metadata_key)
            managed[n++] = M_METADATA;
        if (m->drop_training_info)
            managed[n++] = M_TRAINING_INFO;
        if (m->n_functions)
            managed[n++] = M_FUNCTIONS;
        emit_merged(o, m->wire, managed, n, emit_model_field, m);
    } else {
        static const uint32_t managed[] = {M_GRAPH};
        emit_merged(o, m->wire, managed, 1, emit_model_field, m);
    }
    return o->failed ? -1 : 0;
}
