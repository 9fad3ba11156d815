/* load_check.c - the loader's checks without the graph, for a byte copy.
 *
 * With no pass to run, the output is the input byte for byte: all the tool
 * has to do is refuse what onnx_load refuses. This file makes onnx_load's
 * checks in one sweep over the bytes, keeping per value name only a small
 * record (its bytes stay in the input) instead of Operations, Variables and
 * use lists. It covers the common form of a model: one graph without
 * subgraphs or sparse initializers, tensors inside the file, every name
 * written once and read after it is written (file order is then a
 * topological order, so there is no cycle). Whatever falls outside that form
 * is not judged here: the caller loads the model in full, so every refusal
 * and its message come from onnx_load itself. */
#include "load_check.h"

#include <stdlib.h>
#include <string.h>

#include "load_tensor.h"
#include "loader.h"
#include "proto.h"

/* A name the graph defines: a graph input, an initializer or a node output. */
typedef struct CheckName {
    const char *p; /* in the input, or in CopyCheck.keep for graph inputs */
    uint32_t len;
    int32_t param_dtype; /* the initializer's element type; 0 when none */
    int32_t decl_dtype;  /* declared by an input, output or value_info; 0 unknown */
    bool is_input, is_param;
} CheckName;

enum { NO_NAME = UINT32_MAX, SCRATCH_LIMIT = 1 << 20 };

typedef struct CopyCheck {
    Loader scratch;   /* reads tensors and attributes into a model reset often */
    Model scratch_m;
    Graph scratch_g;
    Arena keep;       /* copies of names decoded by protobuf-c */
    CheckName *names;
    size_t n_names, cap_names;
    uint64_t *slots;  /* see slot_of; 0: free */
    size_t cap_slots;
    uint32_t *conv;   /* three name indices per Conv/ConvTranspose (NO_NAME: none) */
    size_t n_conv, cap_conv;
} CopyCheck;

static uint64_t check_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/* A slot holds the high half of the name's hash and 1 + its index: a probe
 * reads the record (and the name, in the input) only when the hashes agree. */
static uint64_t slot_of(uint64_t hash, uint32_t k) { return (hash & ~0xffffffffull) | (k + 1); }

/* The slot holding name b, or the free slot where it would go. */
static size_t check_probe(const CopyCheck *c, Bytes b, uint64_t hash)
{
    size_t mask = c->cap_slots - 1, i = hash & mask;
    for (uint64_t s; (s = c->slots[i]); i = (i + 1) & mask) {
        if ((s ^ hash) >> 32)
            continue;
        const CheckName *e = &c->names[(uint32_t)s - 1];
        if (e->len == b.len && (!b.len || memcmp(e->p, b.ptr, b.len) == 0))
            break;
    }
    return i;
}

static uint32_t check_find(const CopyCheck *c, Bytes b)
{
    if (!c->cap_slots)
        return NO_NAME;
    uint64_t s = c->slots[check_probe(c, b, check_hash(b.ptr, b.len))];
    return s ? (uint32_t)s - 1 : NO_NAME;
}

static int check_rehash(CopyCheck *c)
{
    size_t cap = c->cap_slots ? c->cap_slots * 2 : 1024;
    uint64_t *old = c->slots;
    size_t old_cap = c->cap_slots;
    if (!(c->slots = calloc(cap, sizeof *c->slots))) {
        c->slots = old;
        return -1;
    }
    c->cap_slots = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i])
            continue;
        const CheckName *e = &c->names[(uint32_t)old[i] - 1];
        Bytes b = {(const uint8_t *)e->p, e->len};
        c->slots[check_probe(c, b, check_hash(b.ptr, b.len))] = old[i];
    }
    free(old);
    return 0;
}

/* Grows a malloc'd array of *cap elements of size to hold need of them. */
static int check_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 1024;
    void *p = n >= need && n < SIZE_MAX / size ? realloc(*arr, n * size) : NULL;
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* The index of name b, defining it (*added) when nothing did yet; NO_NAME
 * when out of memory. */
static uint32_t check_define(CopyCheck *c, Bytes b, bool *added)
{
    *added = false;
    if (b.len > UINT32_MAX || c->n_names >= NO_NAME - 1)
        return NO_NAME;
    if ((c->n_names + 1) * 4 >= c->cap_slots * 3 && check_rehash(c))
        return NO_NAME;
    uint64_t hash = check_hash(b.ptr, b.len);
    size_t i = check_probe(c, b, hash);
    if (c->slots[i])
        return (uint32_t)c->slots[i] - 1;
    if (check_grow((void **)&c->names, &c->cap_names, c->n_names + 1, sizeof *c->names))
        return NO_NAME;
    uint32_t k = (uint32_t)c->n_names++;
    c->names[k] = (CheckName){.p = (const char *)b.ptr, .len = (uint32_t)b.len};
    c->slots[i] = slot_of(hash, k);
    *added = true;
    return k;
}

/* Scratch objects are thrown away in batches, so memory stays flat. */
static void check_scratch_trim(CopyCheck *c)
{
    if (c->scratch_m.arena.total > SCRATCH_LIMIT) {
        namemap_free(&c->scratch_m.interned); /* its keys live in the arena */
        arena_free(&c->scratch_m.arena);
    }
}

static bool check_input(CopyCheck *c, Bytes wire)
{
    const char *name;
    TypeInfo type;
    if (proto_value_info(&c->keep, wire, &name, &type))
        return false;
    bool added;
    uint32_t k = check_define(c, (Bytes){(const uint8_t *)name, strlen(name)}, &added);
    if (!added)
        return false; /* listed twice, or out of memory */
    c->names[k].is_input = true;
    c->names[k].decl_dtype = type.elem_type;
    return true;
}

static bool check_initializer(CopyCheck *c, Bytes wire)
{
    Tensor *t;
    if (load_tensor_external(wire) || load_tensor(&c->scratch, wire, &t) || t->sparse)
        return false;
    bool added;
    uint32_t k = check_define(c, load_tensor_name(wire), &added);
    if (k == NO_NAME || (!added && (!c->names[k].is_input || c->names[k].is_param)))
        return false; /* defined twice, or out of memory */
    c->names[k].is_param = true;
    c->names[k].param_dtype = t->dtype;
    check_scratch_trim(c);
    return true;
}

/* An output or value_info entry: the first declared type of a value counts. */
static bool check_declared(CopyCheck *c, Bytes wire, bool is_output)
{
    const char *name;
    TypeInfo type;
    if (proto_value_info(&c->scratch_m.arena, wire, &name, &type))
        return false;
    uint32_t k = check_find(c, (Bytes){(const uint8_t *)name, strlen(name)});
    check_scratch_trim(c);
    if (k == NO_NAME)
        return !is_output;
    if (!c->names[k].decl_dtype)
        c->names[k].decl_dtype = type.elem_type;
    return true;
}

/* An attribute this file reads: no subgraph, no tensor kept in another file. */
static bool check_attr_plain(Bytes wire)
{
    WireReader r = wire_reader(wire);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num == A_G || f.num == A_GRAPHS)
            return false;
        if ((f.num == A_T || f.num == A_TENSORS) && f.wt == WT_LEN &&
            load_tensor_external(f.data))
            return false;
    }
    return rc == 0;
}

/* op_type, name and domain as the loader reads them: the last of each. */
static bool check_node_head(CopyCheck *c, Bytes wire, Op *op, size_t *n_attrs)
{
    WireReader r = load_node_reader(wire);
    WireField f;
    int rc;
    *op = (Op){.type = "", .name = "", .domain = "", .graph = &c->scratch_g, .wire = wire};
    *n_attrs = 0;
    while ((rc = wire_next(&r, &f)) == 1) {
        const char **dst = f.num == N_OP_TYPE ? &op->type
                         : f.num == N_NAME    ? &op->name
                         : f.num == N_DOMAIN  ? &op->domain
                                              : NULL;
        if (dst && f.wt == WT_LEN && !(*dst = loader_str(&c->scratch, f.data)))
            return false;
        *n_attrs += f.num == N_ATTRIBUTE;
    }
    return rc == 0 && !r.bad && *op->type && !op_reserve(op, 0, 0, *n_attrs);
}

static bool is_conv(const Op *op)
{
    return (!*op->domain || strcmp(op->domain, "ai.onnx") == 0) &&
           (strcmp(op->type, "Conv") == 0 || strcmp(op->type, "ConvTranspose") == 0);
}

/* A Conv's first three inputs, whose types are checked once all are declared. */
static bool check_conv_record(CopyCheck *c, const uint32_t in[3])
{
    if (check_grow((void **)&c->conv, &c->cap_conv, c->n_conv + 3, sizeof *c->conv))
        return false;
    memcpy(c->conv + c->n_conv, in, 3 * sizeof *in);
    c->n_conv += 3;
    return true;
}

/* A node input: written before this node (an input, an initializer, or an
 * earlier node's output), or omitted (""). */
static bool check_node_input(CopyCheck *c, Bytes name, uint32_t *k)
{
    *k = NO_NAME;
    if (name.len && memchr(name.ptr, 0, name.len))
        return false;
    return !name.len || (*k = check_find(c, name)) != NO_NAME;
}

/* A node output: a name nothing defined yet (or omitted). */
static bool check_node_output(CopyCheck *c, Bytes name)
{
    bool added = false;
    if (!name.len)
        return true;
    return !memchr(name.ptr, 0, name.len) && (check_define(c, name, &added), added);
}

static bool check_node(CopyCheck *c, Bytes wire)
{
    Op op;
    size_t n_attrs;
    uint32_t in[3] = {NO_NAME, NO_NAME, NO_NAME};
    size_t n_in = 0;
    if (!check_node_head(c, wire, &op, &n_attrs))
        return false;
    WireReader r = wire_reader(wire);
    WireField f;
    bool ok = true;
    while (ok && wire_next(&r, &f) == 1) {
        uint32_t k;
        if (f.num == N_ATTRIBUTE)
            ok = check_attr_plain(f.data) && !load_attr(&c->scratch, &op, f.data) &&
                 !load_check_attr(&c->scratch, &op);
        else if (f.num == N_INPUT)
            ok = check_node_input(c, f.data, &k) && (n_in >= 3 || (in[n_in++] = k, true));
    }
    /* Outputs after every input, so that a node reading its own output is
     * left to onnx_load. */
    r = wire_reader(wire);
    while (ok && wire_next(&r, &f) == 1)
        if (f.num == N_OUTPUT)
            ok = check_node_output(c, f.data);
    ok = ok && !load_check_node(&c->scratch, &op) && (!is_conv(&op) || check_conv_record(c, in)) &&
         !load_layernorm_without_scale(&op, n_in, in[1] != NO_NAME);
    check_scratch_trim(c);
    return ok;
}

/* As load.c's check_conv_types: an initializer's type, else the declared one. */
static bool check_conv_types(const CopyCheck *c)
{
    for (size_t i = 0; i < c->n_conv; i++) {
        if (c->conv[i] == NO_NAME)
            continue;
        const CheckName *e = &c->names[c->conv[i]];
        int32_t dt = e->is_param ? e->param_dtype : e->decl_dtype;
        if (dt && dt != DT_FLOAT && dt != DT_DOUBLE && dt != DT_FLOAT16 && dt != DT_BFLOAT16)
            return false;
    }
    return true;
}

/* Runs fn on every field numbered num of the graph, in file order. */
static bool check_each(CopyCheck *c, Bytes graph, uint32_t num, bool (*fn)(CopyCheck *, Bytes))
{
    WireReader r = wire_reader(graph);
    WireField f;
    while (wire_next(&r, &f) == 1)
        if (f.num == num && !fn(c, f.data))
            return false;
    return true;
}

static bool check_output(CopyCheck *c, Bytes b) { return check_declared(c, b, true); }
static bool check_value_info(CopyCheck *c, Bytes b) { return check_declared(c, b, false); }

/* The graph's own fields: wire types, its name, no sparse initializer. */
static bool check_graph_fields(CopyCheck *c, Bytes graph)
{
    WireReader r = load_graph_reader(graph);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num == G_SPARSE_INITIALIZER)
            return false;
        if (f.num == G_NAME &&
            (f.wt != WT_LEN || (f.data.len && memchr(f.data.ptr, 0, f.data.len))))
            return false; /* the full load says what is wrong */
    }
    (void)c;
    return rc == 0 && !r.bad;
}

/* In the order onnx_load reads them: inputs, initializers, nodes, outputs,
 * value_info. */
static bool check_graph(CopyCheck *c, Bytes graph)
{
    return check_graph_fields(c, graph) && check_each(c, graph, G_INPUT, check_input) &&
           check_each(c, graph, G_INITIALIZER, check_initializer) &&
           check_each(c, graph, G_NODE, check_node) &&
           check_each(c, graph, G_OUTPUT, check_output) &&
           check_each(c, graph, G_VALUE_INFO, check_value_info) && check_conv_types(c);
}

static void check_free(CopyCheck *c)
{
    namemap_free(&c->scratch_m.interned);
    arena_free(&c->scratch_m.arena);
    arena_free(&c->keep);
    free(c->names);
    free(c->slots);
    free(c->conv);
}

int onnx_load_for_copy(Bytes bytes, const char *dir, Model **out, Diag *d)
{
    *out = NULL;
    Model *m = model_new();
    if (!m)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    Diag head = {0};
    Loader L = {m, &head, 0, dir, NULL, NULL};
    CopyCheck *c = calloc(1, sizeof *c);
    Diag scratch = {0};
    bool ok = c && !load_model_head(&L, bytes);
    if (ok) {
        c->scratch_g.model = &c->scratch_m;
        c->scratch = (Loader){&c->scratch_m, &scratch, 0, dir, NULL, NULL};
        ok = check_graph(c, m->graph->wire);
    }
    if (c)
        check_free(c);
    free(c);
    if (!ok) {
        model_free(m);
        return 0;
    }
    m->graph->changed = false;
    *out = m;
    return 0;
}
