/* load_function.c - what the loader reads of a model-local function
 * (ModelProto.functions): its name, domain, opset imports and the operator
 * of every default-domain node, those in subgraph attributes included. The
 * function itself stays bytes: raising the model's opset reads these to
 * decide whether the function can follow (formatter/opset.c), and the
 * encoder rewrites only its opset imports. */
#include <string.h>

#include "loader.h"
#include "proto.h"

enum { MAX_FUNCTION_DEPTH = 64 };

static int function_error(Loader *L, const ModelFunction *f)
{
    return loader_error(L, "model-local function '%s': malformed protobuf",
                        f->name ? f->name : "");
}

static int read_graph_nodes(Loader *L, ModelFunction *f, Bytes graph, int depth);

/* A node's subgraphs (attributes g and graphs), read like the function body. */
static int read_attr_graphs(Loader *L, ModelFunction *f, Bytes attr, int depth)
{
    WireReader r = wire_reader(attr);
    WireField x;
    int rc;
    while ((rc = wire_next(&r, &x)) == 1)
        if ((x.num == A_G || x.num == A_GRAPHS) && x.wt == WT_LEN &&
            read_graph_nodes(L, f, x.data, depth + 1))
            return -1;
    return rc < 0 ? function_error(L, f) : 0;
}

static bool is_default(Bytes domain)
{
    return !domain.len || (domain.len == 7 && memcmp(domain.ptr, "ai.onnx", 7) == 0);
}

static int read_node(Loader *L, ModelFunction *f, Bytes node, int depth)
{
    Bytes type = {0}, name = {0}, domain = {0};
    WireReader r = wire_reader(node);
    WireField x;
    int rc;
    while ((rc = wire_next(&r, &x)) == 1) {
        if (x.wt != WT_LEN)
            continue;
        type = x.num == N_OP_TYPE ? x.data : type;
        name = x.num == N_NAME ? x.data : name;
        domain = x.num == N_DOMAIN ? x.data : domain;
        if (x.num == N_ATTRIBUTE && read_attr_graphs(L, f, x.data, depth))
            return -1;
    }
    if (rc < 0)
        return function_error(L, f);
    if (!is_default(domain))
        return 0;
    FunctionNode n = {loader_intern(L, type), loader_str(L, name)};
    if (!n.type || !n.name)
        return -1;
    if (arena_grow(&L->m->arena, (void **)&f->nodes, &f->cap_nodes, f->n_nodes + 1,
                   sizeof *f->nodes))
        return loader_oom(L);
    f->nodes[f->n_nodes++] = n;
    return 0;
}

/* The nodes of a subgraph inside the function (GraphProto.node). */
static int read_graph_nodes(Loader *L, ModelFunction *f, Bytes graph, int depth)
{
    if (depth > MAX_FUNCTION_DEPTH)
        return loader_error(L, "model-local function '%s': subgraphs nest deeper than %d",
                            f->name, MAX_FUNCTION_DEPTH);
    WireReader r = wire_reader(graph);
    WireField x;
    int rc;
    while ((rc = wire_next(&r, &x)) == 1)
        if (x.num == G_NODE && x.wt == WT_LEN && read_node(L, f, x.data, depth))
            return -1;
    return rc < 0 ? function_error(L, f) : 0;
}

static int read_opset(Loader *L, ModelFunction *f, Bytes wire)
{
    if (arena_grow(&L->m->arena, (void **)&f->opsets, &f->cap_opsets, f->n_opsets + 1,
                   sizeof *f->opsets))
        return loader_oom(L);
    if (proto_opset(&L->m->arena, wire, &f->opsets[f->n_opsets++]))
        return loader_error(L, "model-local function '%s': malformed opset_import", f->name);
    return 0;
}

int load_function(Loader *L, Bytes wire)
{
    Model *m = L->m;
    if (arena_grow(&m->arena, (void **)&m->functions, &m->cap_functions, m->n_functions + 1,
                   sizeof *m->functions))
        return loader_oom(L);
    ModelFunction *f = &m->functions[m->n_functions++];
    *f = (ModelFunction){.name = "", .domain = "", .wire = wire};
    WireReader r = wire_reader(wire);
    WireField x;
    int rc;
    while ((rc = wire_next(&r, &x)) == 1) { /* the name first: messages name it */
        if (x.wt == WT_LEN && x.num == F_NAME && !(f->name = loader_str(L, x.data)))
            return -1;
        if (x.wt == WT_LEN && x.num == F_DOMAIN && !(f->domain = loader_intern(L, x.data)))
            return -1;
    }
    if (rc < 0)
        return function_error(L, f);
    r = wire_reader(wire);
    while (wire_next(&r, &x) == 1) {
        if (x.wt == WT_LEN && x.num == F_OPSET && read_opset(L, f, x.data))
            return -1;
        if (x.wt == WT_LEN && x.num == F_NODE && read_node(L, f, x.data, 1))
            return -1;
    }
    return 0;
}
