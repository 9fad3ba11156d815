/* load.c - ModelProto / GraphProto / NodeProto / AttributeProto -> BaseGraph.
 *
 * A graph is read in three steps so that names resolve whatever the order of
 * fields in the file: (1) inputs, initializers and every node with its outputs
 * define the graph's names; (2) node inputs are linked to the names visible
 * from the graph (its own, then outer scopes); (3) each node's subgraphs are
 * read right after its inputs are linked, so their outer-scope names resolve
 * as they stand at that node (where a name is written twice, the write
 * before it); then outputs and value_info. */
#include "load.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "load_tensor.h"
#include "loader.h"
#include "proto.h"

enum { MAX_SUBGRAPH_DEPTH = 64 };

/* The wire types onnx.proto gives the fields of each message (wire_reader_checked). */
static const uint8_t MODEL_WT[] = {
    [M_IR_VERSION] = WTS_VARINT, [2] = WTS_LEN, [3] = WTS_LEN, [4] = WTS_LEN, [5] = WTS_VARINT,
    [6] = WTS_LEN, [M_GRAPH] = WTS_LEN, [M_OPSET] = WTS_LEN, [14] = WTS_LEN, [M_TRAINING_INFO] = WTS_LEN,
    [M_FUNCTIONS] = WTS_LEN,
};
static const uint8_t GRAPH_WT[] = {
    [G_NODE] = WTS_LEN, [G_NAME] = WTS_LEN, [G_INITIALIZER] = WTS_LEN, [10] = WTS_LEN,
    [G_INPUT] = WTS_LEN, [G_OUTPUT] = WTS_LEN, [G_VALUE_INFO] = WTS_LEN, [14] = WTS_LEN,
    [G_SPARSE_INITIALIZER] = WTS_LEN,
};
static const uint8_t NODE_WT[] = {
    [N_INPUT] = WTS_LEN, [N_OUTPUT] = WTS_LEN, [N_NAME] = WTS_LEN, [N_OP_TYPE] = WTS_LEN,
    [N_ATTRIBUTE] = WTS_LEN, [6] = WTS_LEN, [N_DOMAIN] = WTS_LEN,
};
static const uint8_t ATTR_WT[] = {
    [A_NAME] = WTS_LEN, [A_F] = WTS_I32, [A_I] = WTS_VARINT, [A_S] = WTS_LEN, [A_T] = WTS_LEN,
    [A_G] = WTS_LEN, [A_FLOATS] = WTS_FLOATS, [A_INTS] = WTS_INTS, [A_STRINGS] = WTS_LEN,
    [A_TENSORS] = WTS_LEN, [A_GRAPHS] = WTS_LEN, [13] = WTS_LEN, [14] = WTS_LEN, [15] = WTS_LEN,
    [A_TYPE] = WTS_VARINT, [21] = WTS_LEN, [22] = WTS_LEN, [23] = WTS_LEN,
};

/* b as a C string for a lookup or for a function that copies it: in buf
 * when it fits, else copied to the arena. NULL (error set) on a NUL byte. */
static const char *loader_key(Loader *L, Bytes b, char *buf, size_t size)
{
    if (b.len >= size || memchr(b.ptr, 0, b.len))
        return loader_str(L, b);
    memcpy(buf, b.ptr, b.len);
    buf[b.len] = 0;
    return buf;
}

/* Appends v to a list growing in the arena. */
#define PUSH(L, arr, n, cap, v)                                                        \
    (arena_grow(&(L)->m->arena, (void **)&(arr), &(cap), (n) + 1, sizeof *(arr)) \
         ? loader_oom(L)                                                               \
         : ((arr)[(n)++] = (v), 0))

static int read_packed(Loader *L, Attr *a, WireField *f, size_t *n, size_t *cap)
{
    WireReader r = f->wt == WT_LEN ? wire_reader(f->data) : (WireReader){0};
    bool single = f->wt != WT_LEN;
    while (single || r.p < r.end) {
        uint64_t v = f->u;
        if (!single && f->num == A_INTS && wire_varint(&r, &v))
            return loader_error(L, "attribute '%s': malformed ints", a->name);
        if (!single && f->num == A_FLOATS) {
            if (r.end - r.p < 4)
                return loader_error(L, "attribute '%s': malformed floats", a->name);
            v = r.p[0] | (uint32_t)r.p[1] << 8 | (uint32_t)r.p[2] << 16 | (uint32_t)r.p[3] << 24;
            r.p += 4;
        }
        if (f->num == A_INTS && PUSH(L, a->ints, *n, *cap, (int64_t)v))
            return -1;
        if (f->num == A_FLOATS) {
            uint32_t bits = (uint32_t)v;
            float x;
            memcpy(&x, &bits, 4);
            if (PUSH(L, a->floats, *n, *cap, x))
                return -1;
        }
        single = false;
    }
    return 0;
}

/* Old models may omit the type field: the first value field present decides. */
static AttrType infer_attr_type(const size_t counts[])
{
    static const AttrType by_field[] = {
        [A_F] = ATTR_FLOAT, [A_I] = ATTR_INT, [A_S] = ATTR_STRING, [A_T] = ATTR_TENSOR,
        [A_G] = ATTR_GRAPH, [A_FLOATS] = ATTR_FLOATS, [A_INTS] = ATTR_INTS,
        [A_STRINGS] = ATTR_STRINGS, [A_TENSORS] = ATTR_TENSORS, [A_GRAPHS] = ATTR_GRAPHS,
    };
    for (int f = A_F; f <= A_GRAPHS; f++)
        if (counts[f])
            return by_field[f];
    return ATTR_UNDEFINED;
}

static size_t attr_count(const Attr *a, const size_t counts[])
{
    switch (a->type) {
    case ATTR_FLOATS: return counts[A_FLOATS];
    case ATTR_INTS: return counts[A_INTS];
    case ATTR_STRINGS: return counts[A_STRINGS];
    case ATTR_TENSOR: case ATTR_TENSORS: return counts[A_T] + counts[A_TENSORS];
    case ATTR_GRAPH: case ATTR_GRAPHS: return counts[A_G] + counts[A_GRAPHS];
    default: return 0;
    }
}

static int read_attr_field(Loader *L, Op *op, Attr *a, WireField *f, size_t counts[],
                           size_t caps[])
{
    Model *m = L->m;
    switch (f->num) {
    case A_NAME: return f->wt == WT_LEN && !(a->name = loader_intern(L, f->data)) ? -1 : 0;
    case A_TYPE: a->type = (AttrType)f->u; return 0;
    case A_F: {
        uint32_t bits = (uint32_t)f->u;
        memcpy(&a->f, &bits, 4);
        counts[A_F]++;
        return 0;
    }
    case A_I: a->i = (int64_t)f->u; counts[A_I]++; return 0;
    case A_S: a->s = f->data; counts[A_S]++; return 0;
    case A_STRINGS: return PUSH(L, a->strings, counts[A_STRINGS], caps[A_STRINGS], f->data);
    case A_INTS: case A_FLOATS: return read_packed(L, a, f, &counts[f->num], &caps[f->num]);
    case A_T: case A_TENSORS: {
        Tensor *t;
        size_t n = counts[A_T] + counts[A_TENSORS];
        if (f->wt != WT_LEN || load_tensor(L, f->data, &t) ||
            arena_grow(&m->arena, (void **)&a->tensors, &caps[A_T], n + 1, sizeof t))
            return L->d->code ? -1 : loader_error(L, "node '%s': malformed tensor", op->name);
        a->tensors[n] = t;
        counts[f->num]++;
        return 0;
    }
    case A_G: case A_GRAPHS: {
        Graph *sub = graph_new(m, op->graph, op);
        size_t n = counts[A_G] + counts[A_GRAPHS];
        if (!sub || f->wt != WT_LEN ||
            arena_grow(&m->arena, (void **)&a->graphs, &caps[A_G], n + 1, sizeof sub))
            return L->d->code ? -1 : loader_error(L, "node '%s': malformed graph", op->name);
        sub->wire = f->data; /* read in step 3, once the outer scope is complete */
        a->graphs[n] = sub;
        counts[f->num]++;
        return 0;
    }
    default: return 0; /* other fields stay in the wire bytes */
    }
}

int load_attr(Loader *L, Op *op, Bytes wire)
{
    Attr *a = op_add_attr(op, "", ATTR_UNDEFINED);
    if (!a)
        return loader_oom(L);
    a->wire = wire;
    size_t counts[A_GRAPHS + 1] = {0}, caps[A_GRAPHS + 1] = {0};
    WireReader r = wire_reader_checked(wire, ATTR_WT);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        if (read_attr_field(L, op, a, &f, counts, caps))
            return -1;
    if (rc < 0)
        return loader_error(L, "node '%s': malformed attribute", op->name);
    if (r.bad)
        return loader_error(L, "node '%s': attribute '%s': malformed protobuf (field %u has the "
                            "wrong wire type)", op->name, a->name, r.bad);
    if (a->type == ATTR_UNDEFINED)
        a->type = infer_attr_type(counts);
    a->n = attr_count(a, counts);
    if ((a->type == ATTR_TENSOR || a->type == ATTR_GRAPH) && a->n == 0)
        return loader_error(L, "node '%s': attribute '%s' has no %s", op->name, a->name,
                            a->type == ATTR_TENSOR ? "tensor" : "graph");
    /* Keep only the list the type declares, so n always counts it: a stray
     * field of another kind stays in the wire bytes only. */
    bool graph = a->type == ATTR_GRAPH || a->type == ATTR_GRAPHS;
    bool tensor = a->type == ATTR_TENSOR || a->type == ATTR_TENSORS;
    if (!graph || !a->n)
        a->graphs = NULL;
    if (!tensor || !a->n)
        a->tensors = NULL;
    if (a->type != ATTR_FLOATS)
        a->floats = NULL;
    if (a->type != ATTR_INTS)
        a->ints = NULL;
    if (a->type != ATTR_STRINGS)
        a->strings = NULL;
    return 0;
}

/* Cast's `to` must name an ONNX element type (Cast-1's string form aside). */
int load_check_attr(Loader *L, const Op *op)
{
    const Attr *to = op->n_attrs ? &op->attrs[op->n_attrs - 1] : NULL;
    if (!to || strcmp(op->type, "Cast") || (*op->domain && strcmp(op->domain, "ai.onnx")) ||
        strcmp(to->name, "to") || to->type != ATTR_INT || dtype_is_known((int32_t)to->i))
        return 0;
    return loader_error(L, "node '%s' (Cast): 'to' is %lld, not an ONNX element type", op->name,
                        (long long)to->i);
}

/* Checks onnx.checker makes too, on nodes whose invalid form a pass would
 * otherwise rewrite into another invalid model: refused at load, naming the
 * node, rather than written out with exit 0. */
static bool is_default_domain(const Op *op)
{
    return !*op->domain || strcmp(op->domain, "ai.onnx") == 0;
}

/* If needs both branches; Loop and Scan need a body. */
static int check_required_graphs(Loader *L, const Op *op)
{
    static const char *const NEEDS[][3] = {
        {"If", "then_branch", "else_branch"}, {"Loop", "body", NULL}, {"Scan", "body", NULL},
    };
    for (size_t i = 0; i < sizeof NEEDS / sizeof *NEEDS; i++) {
        if (strcmp(op->type, NEEDS[i][0]))
            continue;
        for (int k = 1; k < 3 && NEEDS[i][k]; k++) {
            const Attr *a = op_attr(op, NEEDS[i][k]);
            if (!a || a->type != ATTR_GRAPH)
                return loader_error(L, "node '%s' (%s): required graph attribute '%s' is "
                                    "missing", op_label(op), op->type, NEEDS[i][k]);
        }
    }
    return 0;
}

/* Pad-2's pads attribute holds a begin and an end for every axis. */
static int check_pad_attr(Loader *L, const Op *op)
{
    const Attr *pads = strcmp(op->type, "Pad") ? NULL : op_attr(op, "pads");
    if (!pads || (pads->type == ATTR_INTS && pads->n % 2 == 0))
        return 0;
    if (pads->type != ATTR_INTS)
        return loader_error(L, "node '%s' (Pad): attribute 'pads' is not a list of ints",
                            op_label(op));
    return loader_error(L, "node '%s' (Pad): attribute 'pads' has %zu values; it needs a begin "
                        "and an end per axis (an even count)", op_label(op), pads->n);
}

int load_check_node(Loader *L, const Op *op)
{
    return is_default_domain(op) && (check_required_graphs(L, op) || check_pad_attr(L, op)) ? -1
                                                                                            : 0;
}

bool load_layernorm_without_scale(const Op *op, size_t n_inputs, bool has_scale)
{
    return is_default_domain(op) && strcmp(op->type, "LayerNormalization") == 0 &&
           n_inputs >= 1 && !has_scale;
}

/* torch 1.13 exports LayerNorm(elementwise_affine=False) with an empty scale,
 * which onnx's checker and onnxruntime refuse: the passes would write it on. */
static int check_layernorm_scale(Loader *L, const Op *op)
{
    if (!load_layernorm_without_scale(op, op->n_inputs, op->n_inputs > 1 && op->inputs[1]))
        return 0;
    return loader_error(L, "node '%s' (LayerNormalization): its scale (input 1) is empty, "
                        "which the onnx checker and onnxruntime refuse (torch 1.13 exports "
                        "LayerNorm without elementwise_affine so): give it a scale of ones",
                        op_label(op));
}

/* Conv and ConvTranspose compute in floating point only: an integer input or
 * weight (declared, or an initializer's) is no valid model. */
static int check_nodes(Loader *L, const Graph *g)
{
    for (size_t i = 0; i < g->n_ops; i++)
        if (load_check_node(L, g->ops[i]) || check_layernorm_scale(L, g->ops[i]))
            return -1;
    return graph_check_conv_types(g, "", L->d);
}

/* Is op before `at` in their graph's node order? */
static bool op_precedes(const Op *op, const Op *at)
{
    const Graph *g = at->graph;
    for (size_t i = 0; i < g->n_ops && g->ops[i] != at; i++)
        if (g->ops[i] == op)
            return true;
    return false;
}

/* The enclosing graph of g that defines name where g's node stands (a graph
 * input, an initializer, or an output of an earlier node), or NULL. onnx
 * wants single assignment across scopes: a subgraph node may not write it. */
static const Graph *outer_definer(const Graph *g, const char *name)
{
    for (const Op *at = g->owner; at; at = at->graph->owner) {
        const Var *v = namemap_get(&at->graph->by_name, name);
        if (v && (v->is_input || v->param || (v->producer && op_precedes(v->producer, at))))
            return at->graph;
    }
    return NULL;
}

/* Step 1 for a node: its type, name, attributes and the names it defines. */
static int load_node(Loader *L, Graph *g, Bytes wire)
{
    /* type and name are copied by graph_insert_op: read into buffers */
    char type_buf[64], name_buf[256], out_buf[256];
    const char *type = "", *name = "", *domain = "";
    WireReader r = wire_reader_checked(wire, NODE_WT);
    WireField f;
    int rc;
    size_t count[N_ATTRIBUTE + 1] = {0}; /* inputs, outputs, attributes */
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num == N_INPUT || f.num == N_OUTPUT || f.num == N_ATTRIBUTE)
            count[f.num]++;
        if (f.wt != WT_LEN)
            continue;
        if (f.num == N_OP_TYPE && !(type = loader_key(L, f.data, type_buf, sizeof type_buf)))
            return -1;
        if (f.num == N_NAME && !(name = loader_key(L, f.data, name_buf, sizeof name_buf)))
            return -1;
        if (f.num == N_DOMAIN && !(domain = loader_intern(L, f.data)))
            return -1;
        if (f.num == N_OUTPUT && f.data.len < sizeof out_buf) {
            /* its slots are fetched while the rest is read (see below) */
            memcpy(out_buf, f.data.ptr, f.data.len);
            out_buf[f.data.len] = 0;
            graph_prefetch_name(g, out_buf, true);
        }
    }
    if (rc < 0)
        return loader_error(L, "graph '%s': malformed node", g->name);
    if (r.bad)
        return loader_error(L, "node '%s': malformed protobuf (field %u has the wrong wire type)",
                            name, r.bad);
    if (!*type)
        return loader_error(L, "node '%s' has no op_type", name);
    Op *op = graph_insert_op(g, NULL, type, name);
    if (!op || op_reserve(op, count[N_INPUT], count[N_OUTPUT], count[N_ATTRIBUTE]))
        return loader_oom(L);
    op->domain = domain;
    op->wire = wire;
    r = wire_reader(wire);
    while (wire_next(&r, &f) == 1) {
        if (f.num == N_ATTRIBUTE && f.wt == WT_LEN && load_attr(L, op, f.data))
            return -1;
        if (f.num == N_ATTRIBUTE && load_check_attr(L, op))
            return -1;
        if (f.num != N_OUTPUT || f.wt != WT_LEN)
            continue;
        char buf[256];
        const char *out = loader_key(L, f.data, buf, sizeof buf);
        Var *v = NULL;
        if (!out)
            return -1;
        const Graph *outer = *out && g->parent ? outer_definer(g, out) : NULL;
        if (outer)
            return loader_error(L, "node '%s' (%s): output '%s' is already defined in the "
                                "enclosing graph '%s' (not single-assignment)", name, type, out,
                                outer->name);
        if (*out && !(v = graph_new_var(g, out))) {
            Var *prev = namemap_get(&g->by_name, out);
            if (!prev)
                return loader_oom(L);
            if (!prev->producer)
                return loader_error(L, "node '%s' (%s): output '%s' is already a graph input "
                                    "or initializer of graph '%s'", name, type, out, g->name);
            /* A name written twice (in-place style) is kept as two
             * variables; pass de-inplace renames the earlier one. */
            if (!(v = graph_shadow_var(g, out)))
                return loader_oom(L);
        }
        if (op_append_output(op, v))
            return loader_oom(L);
    }
    return 0;
}

/* The names visible while a graph is linked: its own, then those of the
 * graphs around it. Where a graph writes a name twice, `latest` maps each
 * name to its definition so far in file order, so a reader (or a subgraph,
 * read at its node) sees the value written before it. */
struct LinkScope {
    const Graph *g;
    NameMap *latest; /* NULL: every name of g is written once, or g is linked */
    LinkScope *outer;
};

static Var *scope_find(const LinkScope *s, const char *name)
{
    for (; s; s = s->outer) {
        Var *v = s->latest ? namemap_get(s->latest, name) : NULL;
        if (!v)
            v = namemap_get(&s->g->by_name, name);
        if (v)
            return v;
    }
    return NULL;
}

/* Starts fetching the slots scope_find will read first for name. */
static void scope_prefetch(const LinkScope *s, const char *name)
{
    if (s->latest)
        namemap_prefetch(s->latest, name);
    graph_prefetch_name(s->g, name, false);
}

/* The next (up to) LINK_AHEAD input names of a node, their map slots being
 * fetched: at a million nodes each lookup misses the caches, and a node's
 * lookups then wait for memory together instead of one after another. */
enum { LINK_AHEAD = 8 };
typedef struct LinkBatch {
    char bufs[LINK_AHEAD][256];
    const char *names[LINK_AHEAD];
    Var *vars[LINK_AHEAD]; /* found without a lookup (prev_output), or NULL */
    size_t n;
} LinkBatch;

/* The output of prev (the node before the one linked, in g) named name, or
 * NULL. A chain's node reads what the node before it wrote, and that value
 * is the one the scope would find: prev's graph defines the name, and prev
 * wrote it last before the reader (its last output of that name, should it
 * write one twice). Found there, its lookup is no probe of a map far larger
 * than the caches. */
static Var *prev_output(const Op *prev, const char *name)
{
    for (size_t i = prev ? prev->n_outputs : 0; i-- > 0;)
        if (prev->outputs[i] && strcmp(prev->outputs[i]->name, name) == 0)
            return prev->outputs[i];
    return NULL;
}

/* Fills b from r; 1 while more fields may follow, 0 at the end, -1 on error. */
static int link_batch(Loader *L, const Op *prev, WireReader *r, LinkBatch *b)
{
    WireField f;
    int rc = 0;
    b->n = 0;
    while (b->n < LINK_AHEAD && (rc = wire_next(r, &f)) == 1) {
        if (f.num != N_INPUT || f.wt != WT_LEN)
            continue;
        const char *in = loader_key(L, f.data, b->bufs[b->n], sizeof b->bufs[b->n]);
        if (!in)
            return -1;
        b->vars[b->n] = *in ? prev_output(prev, in) : NULL;
        if (*in && !b->vars[b->n])
            scope_prefetch(L->scope, in);
        b->names[b->n++] = in;
    }
    return rc == 1;
}

static int link_input(Loader *L, Op *op, const char *in, Var *v)
{
    if (!v && *in)
        v = scope_find(L->scope, in);
    if (*in && !v)
        return loader_error(L, "node '%s' (%s): input '%s' is not produced by any node, graph "
                            "input or initializer", op->name, op->type, in);
    if (op_append_input(op, v))
        return loader_oom(L);
    return 0;
}

/* Step 2 for a node: link its inputs to the names visible at it. */
static int link_inputs(Loader *L, const Op *prev, Op *op)
{
    WireReader r = wire_reader(op->wire);
    LinkBatch b;
    int more;
    do {
        if ((more = link_batch(L, prev, &r, &b)) < 0)
            return -1;
        for (size_t i = 0; i < b.n; i++)
            if (link_input(L, op, b.names[i], b.vars[i]))
                return -1;
    } while (more);
    return 0;
}

/* The node's outputs become the latest definitions of their names. */
static int link_outputs(Loader *L, const Op *op, NameMap *latest)
{
    for (size_t i = 0; latest && i < op->n_outputs; i++)
        if (op->outputs[i] && namemap_put(latest, op->outputs[i]->name, op->outputs[i]))
            return loader_oom(L);
    return 0;
}

static int load_graph(Loader *L, Graph *g);

static int load_subgraphs(Loader *L, Op *op)
{
    Graph *sub;
    for (size_t s = 0; (sub = op_subgraph(op, s)); s++)
        if (load_graph(L, sub))
            return -1;
    return 0;
}

/* Steps 2 and 3 in file order: each node's inputs, then its subgraphs, which
 * see the outer names as they are at that node, then its outputs. */
static int link_graph(Loader *L, Graph *g, NameMap *latest)
{
    bool in_place = false;
    for (size_t i = 0; i < g->n_vars && !in_place; i++)
        in_place = g->vars[i]->shadowed;
    LinkScope *scope = L->scope;
    scope->latest = in_place ? latest : NULL;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (link_inputs(L, i ? g->ops[i - 1] : NULL, op) || load_subgraphs(L, op) ||
            link_outputs(L, op, scope->latest))
            return -1;
    }
    scope->latest = NULL; /* from here on (outputs): the last definitions */
    return 0;
}

/* A sequence or optional type declared for v is kept for inference
 * (tensor types are v->type; other types hold nothing inference reads). */
static int load_held_decl(Loader *L, Graph *g, Var *v, const TypeInfo *type, Bytes wire)
{
    if (!v || type->elem_type || type->rank >= 0)
        return 0;
    TypeInfo inner;
    int kind = proto_value_info_held(&L->m->arena, wire, &inner);
    if (kind == TYPE_TENSOR)
        return 0;
    return graph_add_held_decl(g, v, kind, inner) ? loader_oom(L) : 0;
}

static int load_input(Loader *L, Graph *g, Bytes wire)
{
    const char *name;
    TypeInfo type;
    if (proto_value_info(&L->m->arena, wire, &name, &type))
        return loader_error(L, "graph '%s': malformed input (or its type nests deeper than 32)", g->name);
    Var *v = graph_new_var(g, name);
    if (!v)
        return loader_error(L, "graph '%s': input '%s' is listed twice", g->name, name);
    v->type = type;
    if (load_held_decl(L, g, v, &type, wire))
        return -1;
    return graph_add_input(g, v, wire) ? loader_oom(L) : 0;
}

/* The graph input (or, in a graph with many inputs, the variable) named
 * name: a few inputs are compared in place, sparing each of a million
 * initializers a probe of a map far larger than the caches. */
static Var *input_or_var_named(const Graph *g, const char *name)
{
    enum { FEW_INPUTS = 16 };
    if (g->n_inputs > FEW_INPUTS)
        return namemap_get(&g->by_name, name);
    for (size_t i = 0; i < g->n_inputs; i++)
        if (g->inputs[i].var && strcmp(g->inputs[i].var->name, name) == 0)
            return g->inputs[i].var;
    return NULL;
}

/* An initializer (dense or sparse) becomes a parameter of g. */
static int add_initializer(Loader *L, Graph *g, Tensor *t)
{
    /* the name is new but for a graph input (old IR style) or an error:
     * try to add it first, which looks the name up once */
    Var *v = input_or_var_named(g, t->name);
    if (!v && graph_add_param_named(g, t))
        return 0;
    if (!v && !(v = namemap_get(&g->by_name, t->name)))
        return loader_oom(L);
    if (!v->is_input || v->param)
        return loader_error(L, "graph '%s': initializer '%s' is defined twice", g->name,
                            t->name);
    /* Old IR style: the initializer gives a graph input its default value. */
    v->param = t;
    return graph_append_param(g, v) ? loader_oom(L) : 0;
}

static int add_initializers(Loader *L, Graph *g, Tensor **batch, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (add_initializer(L, g, batch[i]))
            return -1;
    return 0;
}

/* The graph's initializers, LINK_AHEAD at a time: each batch's names are
 * prefetched in the name maps before they are added (see LinkBatch). */
static int load_initializers(Loader *L, Graph *g)
{
    WireReader r = wire_reader(g->wire);
    WireField f;
    Tensor *batch[LINK_AHEAD];
    size_t n = 0;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num != G_INITIALIZER)
            continue;
        if (f.wt != WT_LEN)
            return loader_error(L, "graph '%s': malformed field %u", g->name, G_INITIALIZER);
        if (load_tensor(L, f.data, &batch[n]))
            return -1;
        graph_prefetch_name(g, batch[n]->name, true);
        if (++n == LINK_AHEAD && add_initializers(L, g, batch, n))
            return -1;
        n %= LINK_AHEAD;
    }
    if (rc < 0)
        return loader_error(L, "graph '%s': malformed protobuf", g->name);
    return add_initializers(L, g, batch, n);
}

/* Sparse initializers are parameters too; they stay sparse (see encode.c). */
static int load_sparse_initializer(Loader *L, Graph *g, Bytes wire)
{
    Tensor *t;
    return load_sparse_tensor(L, wire, &t) ? -1 : add_initializer(L, g, t);
}

static int load_output(Loader *L, Graph *g, Bytes wire, bool is_output)
{
    const char *name;
    TypeInfo type;
    if (proto_value_info(&L->m->arena, wire, &name, &type))
        return loader_error(L, "graph '%s': malformed %s", g->name,
                            is_output ? "output" : "value_info");
    if (!is_output) { /* value_info describes a value of this graph, if any */
        Var *v = namemap_get(&g->by_name, name);
        if (v && !v->type.elem_type)
            v->type = type;
        if (load_held_decl(L, g, v, &type, wire))
            return -1;
        return graph_add_value_info(g, v, wire) ? loader_oom(L) : 0;
    }
    Var *v = scope_find(L->scope, name);
    if (!v)
        return loader_error(L, "graph '%s': output '%s' is not produced by any node, "
                               "input or initializer", g->name, name);
    if (!v->type.elem_type)
        v->type = type;
    if (load_held_decl(L, g, v, &type, wire))
        return -1;
    return graph_add_output(g, v, wire) ? loader_oom(L) : 0;
}

/* Runs fn on every field numbered num of g's wire bytes. */
static int each_field(Loader *L, Graph *g, uint32_t num, int (*fn)(Loader *, Graph *, Bytes))
{
    WireReader r = wire_reader(g->wire);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        if (f.num == num && (f.wt != WT_LEN || fn(L, g, f.data)))
            return f.wt != WT_LEN ? loader_error(L, "graph '%s': malformed field %u", g->name,
                                                 num)
                                  : -1;
    return rc < 0 ? loader_error(L, "graph '%s': malformed protobuf", g->name) : 0;
}

static int load_output_field(Loader *L, Graph *g, Bytes b) { return load_output(L, g, b, true); }
static int load_vi_field(Loader *L, Graph *g, Bytes b) { return load_output(L, g, b, false); }

static int load_graph(Loader *L, Graph *g)
{
    if (++L->depth > MAX_SUBGRAPH_DEPTH)
        return loader_error(L, "subgraphs nested deeper than %d", MAX_SUBGRAPH_DEPTH);
    WireReader r = wire_reader_checked(g->wire, GRAPH_WT);
    WireField f;
    size_t values = 0, nodes = 0; /* at least one value per node, most often */
    while (wire_next(&r, &f) == 1) {
        if (f.num == G_NAME && f.wt == WT_LEN && !(g->name = loader_str(L, f.data)))
            return -1;
        values += f.num == G_INPUT || f.num == G_INITIALIZER || f.num == G_NODE;
        nodes += f.num == G_NODE;
    }
    if (r.bad)
        return loader_error(L, "graph '%s': malformed protobuf (field %u has the wrong wire type)",
                            g->name, r.bad);
    if (graph_reserve_names(g, values, nodes))
        return loader_oom(L);
    if (each_field(L, g, G_INPUT, load_input) || load_initializers(L, g) ||
        each_field(L, g, G_SPARSE_INITIALIZER, load_sparse_initializer) ||
        each_field(L, g, G_NODE, load_node))
        return -1;
    LinkScope scope = {g, NULL, L->scope};
    NameMap latest = {0};
    L->scope = &scope;
    int rc = link_graph(L, g, &latest) || each_field(L, g, G_OUTPUT, load_output_field) ||
             each_field(L, g, G_VALUE_INFO, load_vi_field);
    L->scope = scope.outer;
    namemap_free(&latest);
    if (rc || check_nodes(L, g) || graph_check_acyclic(g, L->d))
        return -1;
    /* What was just read is the baseline: nothing has changed yet. */
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->changed = false;
    g->changed = false;
    L->depth--;
    return 0;
}

static int load_model_fields(Loader *L, Bytes bytes, bool *has_graph)
{
    Model *m = L->m;
    size_t cap = 0;
    WireReader r = wire_reader_checked(bytes, MODEL_WT);
    WireField f;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1) {
        if (f.num == M_IR_VERSION && f.wt == WT_VARINT)
            m->ir_version = (int64_t)f.u;
        m->n_training_info += f.num == M_TRAINING_INFO;
        if (f.num == M_GRAPH && f.wt == WT_LEN) {
            m->graph->wire = f.data;
            *has_graph = true;
        }
        if (f.num == M_FUNCTIONS && f.wt == WT_LEN && load_function(L, f.data))
            return -1;
        if (f.num == M_OPSET && f.wt == WT_LEN) {
            if (arena_grow(&m->arena, (void **)&m->opsets, &cap, m->n_opsets + 1,
                           sizeof *m->opsets))
                return loader_oom(L);
            if (proto_opset(&m->arena, f.data, &m->opsets[m->n_opsets++]))
                return loader_error(L, "malformed opset_import");
        }
    }
    if (rc < 0)
        return loader_error(L, "not an ONNX model: malformed protobuf");
    return r.bad ? loader_error(L, "not an ONNX model: malformed protobuf (field %u has the wrong "
                                   "wire type)", r.bad)
                 : 0;
}

int load_model_head(Loader *L, Bytes bytes)
{
    bool has_graph = false;
    L->m->wire = bytes;
    if (load_model_fields(L, bytes, &has_graph))
        return -1;
    if (!has_graph)
        return loader_error(L, "not an ONNX model: no graph");
    /* As onnx.checker: before IR 3 the operator set was implied. */
    if (L->m->ir_version >= 3 && !L->m->n_opsets)
        return loader_error(L, "model has no opset_import (required from IR version 3; this "
                            "is %lld)", (long long)L->m->ir_version);
    return 0;
}

WireReader load_graph_reader(Bytes wire)
{
    return wire_reader_checked(wire, GRAPH_WT);
}

WireReader load_node_reader(Bytes wire)
{
    return wire_reader_checked(wire, NODE_WT);
}

bool onnx_head_ok(Bytes head)
{
    return wire_head_ok(wire_reader_checked(head, MODEL_WT));
}

int onnx_load(Bytes bytes, const char *dir, Model **out, Diag *d)
{
    Model *m = model_new();
    if (!m)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    Loader L = {m, d, 0, dir, NULL, NULL};
    if (!load_model_head(&L, bytes))
        load_graph(&L, m->graph);
    if (d->code) {
        model_free(m);
        return d->code;
    }
    *out = m;
    return 0;
}
