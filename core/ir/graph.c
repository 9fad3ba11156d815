/* graph.c - BaseGraph construction and the edit API the passes use.
 *
 * Invariant kept by every function here: for every live operation `op` and
 * input slot `s`, if op->inputs[s] is a variable v then v->uses holds exactly
 * one entry {op, s}; and v->producer / producer_slot name the one live
 * operation whose outputs hold v. graph_verify() checks it. */
#include "graph.h"
#include "graph_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROW(g_arena, arr, cap, need) \
    arena_grow((g_arena), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* arena_grow for the lists that count in 32 bits (an Op's, a Var's uses). */
static int grow32(Arena *a, void **arr, uint32_t *cap, size_t need, size_t size)
{
    size_t n = *cap;
    if (need > UINT32_MAX || arena_grow(a, arr, &n, need, size) || n > UINT32_MAX)
        return -1;
    *cap = (uint32_t)n;
    return 0;
}

#define GROW32(g_arena, arr, cap, need) \
    grow32((g_arena), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* graph_compact sweeps a graph's lists only when something left them. */
static void op_mark_removed(Op *op)
{
    op->removed = true;
    op->graph->has_removed = true;
}

Model *model_new(void)
{
    Model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->copy = calloc(1, sizeof *m->copy);
    m->graph = m->copy ? graph_new(m, NULL, NULL) : NULL;
    if (!m->graph) {
        free(m->copy);
        free(m);
        return NULL;
    }
    return m;
}

static void inline_names_drop(Model *m)
{
    namemap_free(&m->inline_names.values);
    namemap_free(&m->inline_names.nodes);
    m->inline_names.counted = false;
}

void model_free(Model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_all_graphs; i++) {
        Graph *g = m->all_graphs[i];
        namemap_free(&g->by_name);
        free(g->ops);
        free(g->vars);
        free(g->params);
        free(g->pending);
        free(g->inputs);
        free(g->outputs);
        free(g->value_info);
    }
    if (m->release)
        m->release(m->release_ctx);
    deferred_free(&m->value_names);
    deferred_free(&m->node_names);
    namemap_free(&m->next_suffix);
    namemap_free(&m->warned);
    namemap_free(&m->interned);
    inline_names_drop(m);
    free(m->log.items);
    arena_free(&m->arena);
    free(m->copy->buf);
    free(m->copy);
    free(m);
}

Graph *graph_new(Model *m, Graph *parent, Op *owner)
{
    Graph *g = arena_alloc(&m->arena, sizeof *g);
    if (!g || GROW(&m->arena, m->all_graphs, m->cap_all_graphs, m->n_all_graphs + 1))
        return NULL;
    m->all_graphs[m->n_all_graphs++] = g;
    g->model = m;
    g->parent = parent;
    g->owner = owner;
    g->name = "";
    return g;
}

Var *graph_find_var(const Graph *g, const char *name)
{
    for (; g; g = g->parent) {
        Var *v = namemap_get(&g->by_name, name);
        if (v)
            return v;
    }
    return NULL;
}

Var *graph_shadow_var(Graph *g, const char *name)
{
    Var *prev = namemap_get(&g->by_name, name);
    if (prev) {
        namemap_del(&g->by_name, name);
        prev->shadowed = true;
        g->model->shadowed = true;
    }
    Var *v = graph_new_var(g, name);
    if (v)
        v->shadows = prev;
    return v;
}

/* v no longer holds its name (dropped or renamed; name is the one it held):
 * the latest earlier write of that name still present is its only write now.
 * Leaving it shadowed would make passes treat it as written twice. */
static void var_unshadow_earlier(Var *v, const char *name)
{
    for (Var *p = v->shadows; p; p = p->shadows) {
        if (p->removed || !p->shadowed || strcmp(p->name, name) != 0)
            continue;
        if (namemap_put(&v->graph->by_name, p->name, p))
            v->graph->model->oom = true;
        p->shadowed = false;
        return;
    }
}

/* How var_create takes its name: copied into the arena and added to the
 * model's value names; kept as it is (the caller's arena copy) and added;
 * or kept, as model_fresh_value_name made and registered it. */
typedef enum { NAME_COPY, NAME_KEEP, NAME_FRESH } NameUse;

/* A new variable named name (see NameUse). */
static Var *var_create(Graph *g, const char *name, NameUse use)
{
    Model *m = g->model;
    Var *v = arena_alloc(&m->arena, sizeof *v);
    if (!v || LIST_GROW(g->vars, g->cap_vars, g->n_vars + 1))
        return NULL;
    /* a name already defined wastes the copy and v (a rare failure) but
     * spares every success a second probe of the map */
    v->name = use == NAME_COPY ? arena_strdup(&m->arena, name) : name;
    if (!v->name || namemap_add(&g->by_name, v->name, v) != 0 ||
        (use != NAME_FRESH && deferred_add(&m->value_names, v->name)))
        return NULL;
    v->graph = g;
    v->type.rank = -1;
    g->vars[g->n_vars++] = v;
    return v;
}

int graph_reserve_names(Graph *g, size_t values, size_t nodes)
{
    /* a count read from a file is a hint: a hostile one asking for billions
     * gets the ordinary growth instead */
    enum { RESERVE_MAX = 1 << 24 };
    values = values < RESERVE_MAX ? values : RESERVE_MAX;
    nodes = nodes < RESERVE_MAX ? nodes : RESERVE_MAX;
    Model *m = g->model;
    return namemap_reserve(&g->by_name, values, false) ||
           deferred_reserve(&m->value_names, values) ||
           deferred_reserve(&m->node_names, nodes) ? -1 : 0;
}

void graph_prefetch_name(const Graph *g, const char *name, bool defining)
{
    namemap_prefetch(&g->by_name, name);
    if (defining)
        namemap_prefetch(&g->model->value_names.set, name);
}

Var *graph_new_var(Graph *g, const char *name)
{
    return var_create(g, name, NAME_COPY);
}

const char *model_intern(Model *m, const char *s)
{
    const char *kept = namemap_get(&m->interned, s);
    if (kept)
        return kept;
    kept = arena_strdup(&m->arena, s);
    return kept && !namemap_put(&m->interned, kept, (void *)kept) ? kept : NULL;
}

/* "_<i>" into buf (room for 22 bytes), as snprintf "_%lu" writes it: its
 * length. Split-params names a million copies of one weight w_1, w_2, ...,
 * and snprintf's format parsing cost more than the rest of the name. */
static int suffix(char *buf, unsigned long i)
{
    char digits[20];
    int n = 0;
    do
        digits[n++] = (char)('0' + i % 10);
    while ((i /= 10) != 0);
    buf[0] = '_';
    for (int k = 0; k < n; k++)
        buf[1 + k] = digits[n - 1 - k];
    buf[1 + n] = '\0';
    return 1 + n;
}

static const char *fresh_name(Model *m, DeferredSet *used, const char *base)
{
    if (deferred_settle(used))
        return NULL;
    NameMap *names = &used->set;
    size_t n = strlen(base);
    /* Names are copied at their exact length: most fresh names are their
     * base (bn-to-conv's million weights), and room for a suffix would add
     * 24 bytes to each. The probe before the copy is in the cache after. */
    if (!namemap_get(names, base)) {
        char *copy = arena_strndup(&m->arena, base, n);
        return copy && !nameset_add(names, copy) ? copy : NULL;
    }
    /* Where the last search for this base stopped: many copies of one
     * weight would otherwise probe base_1, base_2, ... again each time. */
    uintptr_t known = (uintptr_t)namemap_get(&m->next_suffix, base), i = known ? known : 1;
    char *buf, num[24];
    int taken;
    /* each candidate is reserved as it is found free, so two fresh names
     * never collide */
    do {
        int k = suffix(num, (unsigned long)i++);
        if (!(buf = arena_concat(&m->arena, base, n, num, (size_t)k)))
            return NULL;
    } while ((taken = nameset_add_new(names, buf)) == 1);
    /* a base already there keeps its key (namemap_put then stores none) */
    const char *key = known ? base : arena_strdup(&m->arena, base);
    if (taken < 0 || !key || namemap_put(&m->next_suffix, key, (void *)i))
        return NULL;
    return buf;
}

void graph_prefetch_fresh_name(const Graph *g, const char *base, size_t ahead)
{
    uintptr_t next = (uintptr_t)namemap_get(&g->model->next_suffix, base);
    char buf[128];
    size_t n = strlen(base);
    if (!next || n + 22 > sizeof buf)
        return;
    memcpy(buf, base, n);
    suffix(buf + n, (unsigned long)(next + ahead));
    graph_prefetch_name(g, buf, true);
}

const char *model_fresh_value_name(Model *m, const char *base)
{
    return fresh_name(m, &m->value_names, base);
}

const char *model_fresh_node_name(Model *m, const char *base)
{
    return fresh_name(m, &m->node_names, base);
}

Op *graph_insert_op(Graph *g, Op *after, const char *type, const char *name)
{
    Arena *a = &g->model->arena;
    Op *op = arena_alloc(a, sizeof *op);
    if (!op || LIST_GROW(g->ops, g->cap_ops, g->n_ops + 1))
        return NULL;
    /* An op that takes the name of the one it follows (bn-to-conv's Conv,
     * an upgraded op) shares the string, already among the node names. */
    bool named_after = after && name == after->name;
    op->type = model_intern(g->model, type);
    op->name = named_after ? name : arena_strdup(a, name);
    op->domain = "";
    op->graph = g;
    op->changed = true;
    if (!op->type || !op->name)
        return NULL;
    if (*op->name && !named_after && deferred_add(&g->model->node_names, op->name))
        return NULL;
    g->changed = true;
    if (after && !(g->n_ops && g->ops[g->n_ops - 1] == after && !g->n_pending)) {
        if (LIST_GROW(g->pending, g->cap_pending, g->n_pending + 1))
            return NULL;
        g->pending[g->n_pending++] = (PendingOp){after, op};
        return op;
    }
    g->ops[g->n_ops++] = op;
    return op;
}

static int var_add_use(Arena *a, Var *v, Op *op, size_t slot)
{
    /* Most values have one reader: start with room for one, not four. */
    if (!v->cap_uses && (v->uses = arena_alloc(a, sizeof *v->uses)))
        v->cap_uses = 1;
    if (GROW32(a, v->uses, v->cap_uses, (size_t)v->n_uses + 1))
        return -1;
    v->uses[v->n_uses++] = (Use){op, slot};
    return 0;
}

static bool use_is(const Use *u, const Op *op, size_t slot)
{
    return u->op == op && u->slot == slot;
}

/* Searches from both ends at once and closes the gap from the nearer one
 * (at the front by moving the list's start: arena memory is never freed
 * piecemeal). Most edits remove the latest use (var_replace_all_uses); a
 * pass that replaces every reader of a wide fan-out in order removes the
 * oldest (bn-to-conv on 40k BatchNormalizations reading one input was
 * quadratic): both are O(1). The order of the remaining uses is kept (it
 * decides, for example, which copy split-params names w_1). */
static void var_del_use(Var *v, const Op *op, size_t slot)
{
    size_t n = v->n_uses, i = n;
    for (size_t lo = 0, hi = n; lo < hi && i == n; lo++) {
        if (use_is(&v->uses[--hi], op, slot))
            i = hi;
        else if (use_is(&v->uses[lo], op, slot))
            i = lo;
    }
    if (i == n)
        return;
    if (i < n / 2) {
        memmove(v->uses + 1, v->uses, i * sizeof *v->uses);
        v->uses++;
        v->cap_uses--;
    } else {
        memmove(v->uses + i, v->uses + i + 1, (n - i - 1) * sizeof *v->uses);
    }
    v->n_uses--;
}

int op_reserve(Op *op, size_t n_inputs, size_t n_outputs, size_t n_attrs)
{
    Arena *a = &op->graph->model->arena;
    if (n_inputs > UINT32_MAX || n_outputs > UINT32_MAX || n_attrs > UINT32_MAX)
        return -1;
    if (!op->cap_inputs && n_inputs) {
        if (!(op->inputs = arena_array(a, n_inputs, sizeof *op->inputs)))
            return -1;
        op->cap_inputs = (uint32_t)n_inputs;
    }
    if (!op->cap_outputs && n_outputs) {
        if (!(op->outputs = arena_array(a, n_outputs, sizeof *op->outputs)))
            return -1;
        op->cap_outputs = (uint32_t)n_outputs;
    }
    if (!op->cap_attrs && n_attrs) {
        if (!(op->attrs = arena_array(a, n_attrs, sizeof *op->attrs)))
            return -1;
        op->cap_attrs = (uint32_t)n_attrs;
    }
    return 0;
}

int op_append_input(Op *op, Var *v)
{
    Arena *a = &op->graph->model->arena;
    if (GROW32(a, op->inputs, op->cap_inputs, (size_t)op->n_inputs + 1))
        return -1;
    size_t slot = op->n_inputs++;
    op->inputs[slot] = v;
    return v ? var_add_use(a, v, op, slot) : 0;
}

int op_append_output(Op *op, Var *v)
{
    Arena *a = &op->graph->model->arena;
    if (v && v->producer)
        return -1;
    if (GROW32(a, op->outputs, op->cap_outputs, (size_t)op->n_outputs + 1))
        return -1;
    size_t slot = op->n_outputs++;
    op->outputs[slot] = v;
    if (v) {
        v->producer = op;
        v->producer_slot = slot;
    }
    return 0;
}

void op_mark_changed(Op *op)
{
    op->changed = true;
    op->graph->changed = true;
    op->graph->model->n_op_edits++;
}

size_t model_op_edits(const Model *m)
{
    return m->n_op_edits;
}

Attr *op_add_attr(Op *op, const char *name, AttrType type)
{
    Arena *a = &op->graph->model->arena;
    if (GROW32(a, op->attrs, op->cap_attrs, (size_t)op->n_attrs + 1))
        return NULL;
    Attr *at = &op->attrs[op->n_attrs++];
    memset(at, 0, sizeof *at);
    at->name = model_intern(op->graph->model, name);
    at->type = type;
    op->changed = true;
    return at->name ? at : NULL;
}

static int add_value_info(ValueInfo **arr, size_t *n, size_t *cap, Var *v, Bytes w)
{
    if (list_grow((void **)arr, cap, *n + 1, sizeof **arr))
        return -1;
    (*arr)[(*n)++] = (ValueInfo){v, false, false, w};
    return 0;
}

int graph_add_input(Graph *g, Var *v, Bytes wire)
{
    v->is_input = true;
    return add_value_info(&g->inputs, &g->n_inputs, &g->cap_inputs, v, wire);
}

int graph_add_output(Graph *g, Var *v, Bytes wire)
{
    v->n_output_lists++;
    return add_value_info(&g->outputs, &g->n_outputs, &g->cap_outputs, v, wire);
}

int graph_add_value_info(Graph *g, Var *v, Bytes wire)
{
    if (v && v->value_info_at)
        v->value_info_dup = true;
    else if (v && g->n_value_info < UINT32_MAX)
        v->value_info_at = (uint32_t)g->n_value_info + 1;
    else if (v)
        v->value_info_dup = true; /* past the index range: found by a scan */
    return add_value_info(&g->value_info, &g->n_value_info, &g->cap_value_info, v, wire);
}

int graph_add_held_decl(Graph *g, Var *v, int kind, TypeInfo type)
{
    if (arena_grow(&g->model->arena, (void **)&g->held, &g->cap_held, g->n_held + 1,
                   sizeof *g->held))
        return -1;
    g->held[g->n_held++] = (HeldDecl){v, kind, type};
    return 0;
}

bool model_may_have_op_type(const Model *m, const char *type)
{
    return namemap_get(&m->interned, type) != NULL;
}

bool op_is(const Op *op, const char *type)
{
    /* the first letter settles most mismatches without a call to strcmp:
     * passes ask each node of a million-node graph about dozens of types */
    return !op->removed && op->type[0] == type[0] && strcmp(op->type, type) == 0 &&
           (!*op->domain || strcmp(op->domain, "ai.onnx") == 0);
}

static bool domain_is_default(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/* Does the opset import of domain d name `domain` ("" and "ai.onnx" alike)? */
static bool opset_names(const char *d, const char *domain)
{
    return domain_is_default(domain) ? domain_is_default(d) : strcmp(d, domain) == 0;
}

int64_t opsets_version(const Opset *opsets, size_t n, const char *domain)
{
    for (size_t i = 0; i < n; i++)
        if (opset_names(opsets[i].domain, domain))
            return opsets[i].version;
    return 0;
}

int64_t model_domain_opset(const Model *m, const char *domain)
{
    return opsets_version(m->opsets, m->n_opsets, domain);
}

int64_t model_opset(const Model *m)
{
    return model_domain_opset(m, "");
}

Attr *op_attr(const Op *op, const char *name)
{
    for (size_t i = 0; i < op->n_attrs; i++)
        if (strcmp(op->attrs[i].name, name) == 0)
            return &op->attrs[i];
    return NULL;
}

int64_t op_attr_int(const Op *op, const char *name, int64_t fallback)
{
    Attr *a = op_attr(op, name);
    return a && a->type == ATTR_INT ? a->i : fallback;
}

long op_attr_ints(const Op *op, const char *name, int64_t *v, size_t cap)
{
    const Attr *a = op_attr(op, name);
    if (!a || a->type != ATTR_INTS || a->n > cap)
        return -1;
    attr_copy_ints(a, v);
    return (long)a->n;
}

int op_attr_ints_or(const Op *op, const char *name, int64_t *v, size_t n, int64_t fallback)
{
    const Attr *a = op_attr(op, name);
    for (size_t i = 0; i < n; i++)
        v[i] = fallback;
    if (!a)
        return 0;
    if (a->type != ATTR_INTS || a->n != n)
        return -1;
    attr_copy_ints(a, v);
    return 0;
}

void attr_copy_ints(const Attr *a, int64_t *v)
{
    if (a->n)
        memcpy(v, a->ints, a->n * sizeof *v);
}

float op_attr_float(const Op *op, const char *name, float fallback)
{
    Attr *a = op_attr(op, name);
    return a && a->type == ATTR_FLOAT ? a->f : fallback;
}

const char *op_label(const Op *op)
{
    if (*op->name || !op->n_outputs || !op->outputs[0])
        return *op->name ? op->name : op->type;
    Arena *a = &op->graph->model->arena;
    size_t n = strlen(op->type) + strlen(op->outputs[0]->name) + 2;
    char *s = arena_alloc(a, n);
    if (!s)
        return op->type;
    snprintf(s, n, "%s:%s", op->type, op->outputs[0]->name);
    return s;
}

Graph *op_subgraph(const Op *op, size_t i)
{
    for (size_t k = 0; k < op->n_attrs; k++) {
        const Attr *a = &op->attrs[k];
        if (a->graphs && i < a->n)
            return a->graphs[i];
        i -= a->graphs ? a->n : 0;
    }
    return NULL;
}

/* The declared type of a new parameter: its tensor's dtype and dims. */
static void type_from_tensor(Var *v, const Tensor *t)
{
    v->type.elem_type = t->dtype;
    v->type.rank = (int)t->ndims;
    v->type.dims = t->dims;
    v->type.dim_params = NULL;
}

static Var *param_create(Graph *g, const char *name, Tensor *t, NameUse use);

Var *graph_new_param(Graph *g, const char *base, Tensor *t)
{
    bool as_input = model_params_are_inputs(g->model);
    const char *name = model_fresh_value_name(g->model, base);
    if ((as_input && g->parent) || !name)
        return NULL;
    Var *v = param_create(g, name, t, NAME_FRESH);
    if (v && as_input && graph_add_input(g, v, (Bytes){0}))
        return NULL;
    return v;
}

/* Removes v's value_info entries (not its graph input/output entries). */
static void var_drop_value_info(Var *v)
{
    Graph *g = v->graph;
    if (v->value_info_dup) {
        for (size_t i = 0; i < g->n_value_info; i++)
            if (g->value_info[i].var == v)
                g->value_info[i].removed = true;
    } else if (v->value_info_at && v->value_info_at <= g->n_value_info &&
               g->value_info[v->value_info_at - 1].var == v) {
        g->value_info[v->value_info_at - 1].removed = true;
    }
    g->changed = true;
}

int graph_set_value_type(Var *v, TypeInfo t)
{
    Graph *g = v->graph;
    v->type = t;
    g->changed = true;
    if (v->value_info_dup) {
        for (size_t i = 0; i < g->n_value_info; i++)
            if (g->value_info[i].var == v && !g->value_info[i].removed)
                g->value_info[i].retyped = true;
        return 0;
    }
    if (v->value_info_at && v->value_info_at <= g->n_value_info &&
        g->value_info[v->value_info_at - 1].var == v &&
        !g->value_info[v->value_info_at - 1].removed) {
        g->value_info[v->value_info_at - 1].retyped = true;
        return 0;
    }
    v->value_info_at = 0;
    return graph_add_value_info(g, v, (Bytes){0});
}

static void retype_entry(Graph *g, ValueInfo *e, TypeInfo t)
{
    e->var->type = t;
    e->retyped = true;
    g->changed = true;
}

void graph_retype_input(Graph *g, size_t index, TypeInfo t)
{
    retype_entry(g, &g->inputs[index], t);
}

void graph_retype_output(Graph *g, size_t index, TypeInfo t)
{
    retype_entry(g, &g->outputs[index], t);
}

void graph_remove_input(Graph *g, size_t index)
{
    g->inputs[index].removed = true;
    g->inputs[index].var->is_input = false;
    g->changed = true;
}

void graph_remove_output(Graph *g, size_t index)
{
    ValueInfo *e = &g->outputs[index];
    if (e->removed)
        return;
    e->removed = true;
    e->var->n_output_lists--;
    g->changed = true;
}

/* Does the declared type ty say exactly t's dtype and dims? */
static bool type_is_tensor(const TypeInfo *ty, const Tensor *t)
{
    if (ty->elem_type != t->dtype || ty->rank != (int)t->ndims)
        return false;
    for (size_t i = 0; i < t->ndims; i++)
        if (ty->dims[i] != t->dims[i])
            return false;
    return true;
}

/* v becomes (or stays) a parameter holding t: a value_info entry that does
 * not declare t's exact type and shape goes, since an initializer carries its
 * own. A stale one makes the checker refuse the model (a folded bias [N]
 * under a value_info [1,N]), and one without a shape makes onnx's shape
 * inference ignore the values (Slice axes read as absent). An entry that
 * agrees stays, byte for byte. */
static void param_take_type(Var *v, const Tensor *t)
{
    if ((v->value_info_at || v->value_info_dup) && !type_is_tensor(&v->type, t))
        var_drop_value_info(v);
    type_from_tensor(v, t);
}

void param_set_value(Var *v, Tensor *t)
{
    param_take_type(v, t);
    v->param = t;
    v->graph->changed = true;
}

/* The attribute called name, emptied for a new value, or a new one. */
static Attr *attr_for_update(Op *op, const char *name, AttrType type)
{
    Attr *a = op_attr(op, name);
    if (!a) {
        a = op_add_attr(op, name, type);
    } else {
        const char *keep = a->name;
        memset(a, 0, sizeof *a);
        a->name = keep;
        a->type = type;
    }
    if (a)
        op_mark_changed(op);
    return a;
}

Attr *op_set_attr_int(Op *op, const char *name, int64_t v)
{
    Attr *a = attr_for_update(op, name, ATTR_INT);
    if (a)
        a->i = v;
    return a;
}

Attr *op_set_attr_float(Op *op, const char *name, float v)
{
    Attr *a = attr_for_update(op, name, ATTR_FLOAT);
    if (a)
        a->f = v;
    return a;
}

Attr *op_set_attr_ints(Op *op, const char *name, const int64_t *v, size_t n)
{
    Attr *a = attr_for_update(op, name, ATTR_INTS);
    int64_t *copy = a ? arena_array(&op->graph->model->arena, n, sizeof *copy) : NULL;
    if (!copy && n)
        return NULL;
    if (n)
        memcpy(copy, v, n * sizeof *copy);
    a->ints = copy;
    a->n = n;
    return a;
}

Attr *op_set_attr_string(Op *op, const char *name, const char *v)
{
    Attr *a = attr_for_update(op, name, ATTR_STRING);
    const char *copy = a ? arena_strdup(&op->graph->model->arena, v) : NULL;
    if (!copy)
        return NULL;
    a->s = (Bytes){(const uint8_t *)copy, strlen(copy)};
    return a;
}

void op_remove_attr(Op *op, const char *name)
{
    Attr *a = op_attr(op, name);
    if (!a)
        return;
    size_t i = (size_t)(a - op->attrs);
    memmove(op->attrs + i, op->attrs + i + 1, (op->n_attrs - i - 1) * sizeof *op->attrs);
    op->n_attrs--;
    op_mark_changed(op);
}

int op_set_type(Op *op, const char *type)
{
    const char *copy = model_intern(op->graph->model, type);
    if (!copy)
        return -1;
    op->type = copy;
    op_mark_changed(op);
    return 0;
}

int op_recreate_as(Op *op, const char *type)
{
    if (op_set_type(op, type))
        return -1;
    op->domain = "";
    op->n_attrs = 0; /* their array stays, room for the new ones */
    op->wire = (Bytes){0};
    return 0;
}

int graph_append_param(Graph *g, Var *v)
{
    if (LIST_GROW(g->params, g->cap_params, g->n_params + 1))
        return -1;
    g->params[g->n_params++] = v;
    return 0;
}

static Var *param_create(Graph *g, const char *name, Tensor *t, NameUse use)
{
    Var *v = var_create(g, name, use);
    if (!v || graph_append_param(g, v))
        return NULL;
    v->param = t;
    type_from_tensor(v, t);
    g->changed = true;
    return v;
}

Var *graph_add_param(Graph *g, const char *name, Tensor *t)
{
    return param_create(g, name, t, NAME_COPY);
}

Var *graph_add_param_named(Graph *g, Tensor *t)
{
    return param_create(g, t->name, t, NAME_KEEP);
}


void op_set_input(Op *op, size_t slot, Var *v)
{
    Var *old = op->inputs[slot];
    if (old == v)
        return;
    if (old)
        var_del_use(old, op, slot);
    op->inputs[slot] = v;
    if (v && var_add_use(&op->graph->model->arena, v, op, slot))
        op->graph->model->oom = true; /* pass_run turns this into an error */
    op_mark_changed(op);
}

void var_replace_all_uses(Var *from, Var *to)
{
    while (from != to && from->n_uses) {
        Use u = from->uses[from->n_uses - 1];
        op_set_input(u.op, u.slot, to);
    }
}

int var_take_over(Var *to, Var *v)
{
    Op *p = v->producer;
    if (to->producer || to->is_input || to->param || !p)
        return -1;
    var_replace_all_uses(v, to);
    p->outputs[v->producer_slot] = to;
    to->producer = p;
    to->producer_slot = v->producer_slot;
    if (to->type.elem_type == 0)
        to->type = v->type;
    v->producer = NULL;
    op_mark_changed(p);
    return v->n_output_lists ? 0 : graph_drop_var(v);
}

/* A subgraph going away no longer reads outer values, as inputs of its
 * nodes or as its outputs. */
static int detach_graph(Graph *g, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t s = 0; s < g->ops[i]->n_inputs; s++)
            op_set_input(g->ops[i], s, NULL);
    for (size_t i = 0; i < g->n_outputs; i++) {
        ValueInfo *o = &g->outputs[i];
        if (!o->removed && o->var->graph != g) {
            o->var->n_output_lists--;
            o->removed = true;
        }
    }
    return 0;
}

/* Detaches every input of op and of the operations in its subgraphs. */
static void op_detach_inputs(Op *op)
{
    Graph *sub;
    for (size_t i = 0; (sub = op_subgraph(op, i)); i++)
        graph_walk_post(sub, detach_graph, NULL);
    for (size_t s = 0; s < op->n_inputs; s++)
        op_set_input(op, s, NULL);
}

int graph_remove_op(Op *op, Var *repl)
{
    /* Check everything first: a refusal leaves the graph as it was. */
    if (repl && (op->n_outputs != 1 || !op->outputs[0] || op->outputs[0] == repl))
        return -1;
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *out = op->outputs[i];
        if (out && (out->n_output_lists || (out->n_uses && !repl)))
            return -1;
    }
    if (repl)
        var_replace_all_uses(op->outputs[0], repl);
    op_detach_inputs(op);
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *out = op->outputs[i];
        if (out) {
            out->producer = NULL;
            graph_drop_var(out);
        }
    }
    op_mark_removed(op);
    op->graph->changed = true;
    return 0;
}

bool model_params_are_inputs(const Model *m)
{
    return m->ir_version < 4;
}

bool graph_takes_new_params(const Graph *g)
{
    return !g->parent || !model_params_are_inputs(g->model);
}

int op_outputs_to_params(Op *op, Tensor *const *ts)
{
    Graph *g = op->graph;
    bool as_input = model_params_are_inputs(g->model);
    if ((as_input && g->parent) || LIST_GROW(g->params, g->cap_params, g->n_params + op->n_outputs))
        return -1;
    op_detach_inputs(op);
    op_mark_removed(op);
    g->changed = true;
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *v = op->outputs[i];
        if (!v)
            continue;
        v->producer = NULL;
        param_take_type(v, ts[i]);
        v->param = ts[i];
        g->params[g->n_params++] = v;
        if (as_input && graph_add_input(g, v, (Bytes){0}))
            return -1;
    }
    return 0;
}

bool graph_output_move_keeps_order(const Op *op, const Var *x)
{
    const Graph *g = op->graph;
    if (!g->model->shadowed || !x || !x->producer || op->n_outputs != 1 || !op->outputs[0])
        return true;
    const char *name = op->outputs[0]->name;
    bool between = false;
    for (size_t i = 0; i < g->n_ops && g->ops[i] != op; i++) {
        const Op *o = g->ops[i];
        between |= o == x->producer;
        for (size_t k = 0; between && o != x->producer && !o->removed && k < o->n_outputs; k++)
            if (o->outputs[k] && !strcmp(o->outputs[k]->name, name))
                return false;
    }
    return true;
}

OutputMoveRefusal graph_output_move_refusal(const Op *op, const Var *x)
{
    if (x->n_output_lists)
        return MOVE_X_IS_OUTPUT;
    if (x->is_input)
        return MOVE_X_IS_INPUT;
    if (x->param)
        return MOVE_X_IS_INITIALIZER;
    return !x->producer || x->graph != op->graph ? MOVE_X_OUTER_SCOPE : MOVE_OK;
}

int graph_remove_op_into_output(Op *op, Var *x)
{
    Var *y = op->n_outputs == 1 ? op->outputs[0] : NULL;
    /* y a graph input or initializer: only in a model the loader refuses */
    if (!x || !y || graph_output_move_refusal(op, x) || y->graph != x->graph || y->is_input ||
        y->param)
        return -1;
    op_detach_inputs(op);
    op_mark_removed(op);
    y->producer = NULL;
    return var_take_over(y, x);
}

static void mark_output_renamed(Graph *g, const Var *v)
{
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i].var == v)
            g->changed = true;
}

/* Is v listed among its own graph's outputs? (n_output_lists also counts the
 * outputs of subgraphs that return v from the outer scope.) */
static bool var_is_own_output(const Var *v)
{
    for (size_t i = 0; v->n_output_lists && i < v->graph->n_outputs; i++)
        if (v->graph->outputs[i].var == v && !v->graph->outputs[i].removed)
            return true;
    return false;
}

int var_rename(Var *v, const char *name)
{
    Graph *g = v->graph;
    Model *m = g->model;
    if (v->is_input || var_is_own_output(v) || v->param || namemap_get(&g->by_name, name))
        return -1;
    const char *copy = arena_strdup(&m->arena, name);
    if (!copy)
        return -1;
    const char *was = v->name;
    bool held = namemap_get(&g->by_name, was) == v;
    if (held)
        namemap_del(&g->by_name, was);
    v->name = copy;
    v->shadowed = false;
    if (held)
        var_unshadow_earlier(v, was);
    if (namemap_put(&g->by_name, copy, v) || deferred_add(&m->value_names, copy))
        return -1;
    if (v->producer)
        op_mark_changed(v->producer);
    for (size_t i = 0; i < v->n_uses; i++)
        op_mark_changed(v->uses[i].op);
    if (v->n_output_lists) /* subgraphs returning v list it under the new name */
        for (size_t i = 0; i < m->n_all_graphs; i++)
            mark_output_renamed(m->all_graphs[i], v);
    return 0;
}

int op_drop_outputs(Op *op, size_t n)
{
    for (size_t i = n; i < op->n_outputs; i++)
        if (op->outputs[i] && (op->outputs[i]->n_uses || op->outputs[i]->n_output_lists))
            return -1;
    for (size_t i = n; i < op->n_outputs; i++) {
        Var *v = op->outputs[i];
        if (v) {
            v->producer = NULL;
            graph_drop_var(v);
        }
    }
    if (op->n_outputs > n)
        op->n_outputs = n;
    op_mark_changed(op);
    return 0;
}

void op_drop_inputs(Op *op, size_t n)
{
    for (size_t i = op->n_inputs; i > n; i--)
        op_set_input(op, i - 1, NULL);
    if (op->n_inputs > n)
        op->n_inputs = n;
    op_mark_changed(op);
}

void model_function_set_opset(Model *m, ModelFunction *f, int64_t version)
{
    for (size_t i = 0; i < f->n_opsets; i++)
        if (domain_is_default(f->opsets[i].domain))
            f->opsets[i].version = version;
    f->changed = m->changed = true;
}

int model_set_opset(Model *m, const char *domain, int64_t version, int64_t min_ir)
{
    bool found = false;
    for (size_t i = 0; i < m->n_opsets; i++) {
        if (opset_names(m->opsets[i].domain, domain)) {
            m->opsets[i].version = version;
            found = true;
        }
    }
    if (!found) {
        Opset *grown = arena_array(&m->arena, m->n_opsets + 1, sizeof *grown);
        const char *name = model_intern(m, domain);
        if (!grown || !name)
            return -1;
        if (m->n_opsets)
            memcpy(grown, m->opsets, m->n_opsets * sizeof *grown);
        grown[m->n_opsets++] = (Opset){name, version};
        m->opsets = grown;
    }
    if (m->ir_version < min_ir)
        m->ir_version = min_ir;
    m->changed = true;
    return 0;
}

void graph_remove_value_info(Graph *g, size_t i)
{
    g->value_info[i].removed = true;
    g->changed = true;
}

int graph_replace_op(Op *op, Op *repl)
{
    if (repl->n_outputs || repl->graph != op->graph)
        return -1;
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *v = op->outputs[i];
        op->outputs[i] = NULL;
        if (v)
            v->producer = NULL;
        if (op_append_output(repl, v))
            return -1;
    }
    op_detach_inputs(op);
    op_mark_removed(op);
    op_mark_changed(repl);
    return 0;
}

int graph_drop_var(Var *v)
{
    if (v->producer || v->n_uses || v->is_input || v->n_output_lists || v->param)
        return -1;
    Graph *g = v->graph;
    bool held = namemap_del_value(&g->by_name, v->name, v);
    var_drop_value_info(v);
    v->removed = true;
    g->has_removed = true;
    if (held)
        var_unshadow_earlier(v, v->name);
    g->changed = true;
    return 0;
}

static bool param_removable(const Var *v)
{
    return v->param && !v->n_uses && !v->is_input && !v->n_output_lists;
}

/* Drops the removed parameters from g's initializer list, keeping order. */
static void compact_params(Graph *g)
{
    size_t j = 0;
    for (size_t i = 0; i < g->n_params; i++)
        if (g->params[i]->param)
            g->params[j++] = g->params[i];
    g->n_params = j;
    g->params_removed = false;
}

int graph_remove_param(Var *v)
{
    if (!param_removable(v))
        return -1;
    v->param = NULL;
    graph_drop_var(v);
    v->graph->params_removed = true;
    return 0;
}

size_t graph_remove_params_where(Graph *g, bool (*drop)(Var *v, void *ctx), void *ctx)
{
    enum { AHEAD = 8 }; /* names prefetched ahead of their removal (graph_prefetch_name) */
    size_t removed = 0;
    for (size_t i = g->n_params; i-- > 0;) {
        if (i >= AHEAD && param_removable(g->params[i - AHEAD]))
            graph_prefetch_name(g, g->params[i - AHEAD]->name, false);
        Var *v = g->params[i];
        if (!param_removable(v) || !drop(v, ctx))
            continue;
        v->param = NULL;
        graph_drop_var(v);
        removed++;
    }
    compact_params(g);
    return removed;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* Drops from each variable in vars (sorted, repeats allowed) the uses by
 * operations marked with scratch == 2, in one sweep per variable. */
static void sweep_uses(const Graph *g, Var **vars, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        Var *v = vars[k];
        if (k && vars[k - 1] == v)
            continue;
        size_t j = 0;
        for (size_t i = 0; i < v->n_uses; i++) {
            Use u = v->uses[i];
            /* uses from nested subgraphs keep another graph's scratch */
            if (u.op->graph == g && u.op->scratch == 2 && u.op->inputs[u.slot] == v) {
                u.op->inputs[u.slot] = NULL;
                continue;
            }
            v->uses[j++] = u;
        }
        v->n_uses = j;
    }
}

/* Sets scratch to 2 on the chosen operations (1 on the others) and returns
 * their inputs' variables, sorted, in a malloc'ed array (*n of them). */
static Var **choose_ops(Graph *g, bool (*dead)(const Op *, void *), void *ctx, size_t *n,
                        bool *any)
{
    size_t total = 0;
    for (size_t i = 0; i < g->n_ops; i++)
        total += g->ops[i]->n_inputs;
    Var **vars = malloc((total + 1) * sizeof *vars);
    if (!vars)
        return NULL;
    bool *chosen = malloc(g->n_ops + 1);
    if (!chosen) {
        free(vars);
        return NULL;
    }
    /* decide first: dead() may read the scratch fields set here */
    for (size_t i = 0; i < g->n_ops; i++)
        chosen[i] = !g->ops[i]->removed && dead(g->ops[i], ctx);
    *n = 0;
    *any = false;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        op->scratch = chosen[i] ? 2 : 1;
        *any |= chosen[i];
        for (size_t s = 0; chosen[i] && s < op->n_inputs; s++)
            if (op->inputs[s])
                vars[(*n)++] = op->inputs[s];
    }
    free(chosen);
    qsort(vars, *n, sizeof *vars, cmp_ptr);
    return vars;
}

int graph_remove_ops_where(Graph *g, bool (*dead)(const Op *op, void *ctx), void *ctx)
{
    size_t n;
    bool any;
    Var **vars = choose_ops(g, dead, ctx, &n, &any);
    if (!vars)
        return -1;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        Graph *sub;
        for (size_t k = 0; op->scratch == 2 && (sub = op_subgraph(op, k)); k++)
            graph_walk_post(sub, detach_graph, NULL);
    }
    sweep_uses(g, vars, n);
    free(vars);
    enum { AHEAD = 8 }; /* output names prefetched ahead of their removal */
    for (size_t i = 0; i < g->n_ops; i++) {
        const Op *next = i + AHEAD < g->n_ops ? g->ops[i + AHEAD] : NULL;
        for (size_t k = 0; next && next->scratch == 2 && k < next->n_outputs; k++)
            if (next->outputs[k])
                graph_prefetch_name(g, next->outputs[k]->name, false);
        Op *op = g->ops[i];
        if (op->scratch != 2)
            continue;
        op_mark_changed(op);
        graph_remove_op(op, NULL);
    }
    return 0;
}

/* Appends op to order[m..], then (depth first) what was inserted after it:
 * op->scratch is 1 + the index of the latest pending entry anchored at op,
 * next[k] the entry anchored at the same operation before entry k. */
static size_t place_after(const Graph *g, Op *op, Op **order, size_t m, const size_t *next,
                          size_t *stack, bool *placed)
{
    size_t depth = 0, c = op->scratch;
    order[m++] = op;
    while (c || depth) {
        if (!c) {
            c = stack[--depth];
            continue;
        }
        Op *in = g->pending[c - 1].op;
        placed[c - 1] = true;
        order[m++] = in;
        stack[depth++] = next[c - 1];
        c = in->scratch;
    }
    return m;
}

/* Places pending operations (graph_insert_op) after their anchors: the
 * latest insertion after an operation comes right after it, as if each had
 * been inserted in g->ops at once. */
static int place_pending(Graph *g)
{
    size_t n = g->n_pending, m = 0;
    size_t *next = malloc((n + 1) * sizeof *next), *stack = malloc((n + 1) * sizeof *stack);
    Op **order = malloc((g->n_ops + n + 1) * sizeof *order);
    bool *placed = calloc(n + 1, sizeof *placed);
    int rc = -1;
    if (!next || !order || !stack || !placed)
        goto out;
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->scratch = 0;
    for (size_t k = 0; k < n; k++) {
        g->pending[k].op->scratch = 0;
        g->pending[k].after->scratch = 0;
    }
    for (size_t k = 0; k < n; k++) {
        Op *a = g->pending[k].after;
        next[k] = a->scratch;
        a->scratch = k + 1;
    }
    for (size_t i = 0; i < g->n_ops; i++)
        m = place_after(g, g->ops[i], order, m, next, stack, placed);
    /* anchored at an operation that is not in g: at the end, in order */
    for (size_t k = 0; k < n; k++)
        if (!placed[k]) {
            placed[k] = true;
            order[m++] = g->pending[k].op;
        }
    if (LIST_GROW(g->ops, g->cap_ops, m))
        goto out;
    memcpy(g->ops, order, m * sizeof *order);
    g->n_ops = m;
    g->n_pending = 0;
    rc = 0;
out:
    free(next);
    free(stack);
    free(order);
    free(placed);
    return rc;
}

void graph_compact(Graph *g)
{
    if (g->n_pending && place_pending(g))
        g->model->oom = true;
    if (!g->has_removed)
        return;
    g->has_removed = false;
    if (g->params_removed)
        compact_params(g);
    size_t j = 0;
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed)
            g->ops[j++] = g->ops[i];
    g->n_ops = j;
    j = 0;
    for (size_t i = 0; i < g->n_vars; i++)
        if (!g->vars[i]->removed)
            g->vars[j++] = g->vars[i];
    g->n_vars = j;
}

static int compact_one(Graph *g, void *ctx)
{
    (void)ctx;
    graph_compact(g);
    return 0;
}

void graph_compact_nested(Graph *g)
{
    graph_walk_post(g, compact_one, NULL);
}

void model_compact(Model *m)
{
    graph_compact_nested(m->graph);
    inline_names_drop(m);
}

static int mark_rewritten(Graph *g, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->changed = true;
    g->changed = true;
    return 0;
}

void model_rewrite_all(Model *m)
{
    graph_walk_post(m->graph, mark_rewritten, NULL);
}

int graph_walk_post(Graph *g, int (*fn)(Graph *, void *), void *ctx)
{
    /* a model without subgraphs (most) need not look at each op's attributes */
    bool only_graph = g->model->n_all_graphs == 1;
    for (size_t i = 0; i < g->n_ops && !only_graph; i++) {
        Op *op = g->ops[i];
        if (op->removed)
            continue;
        Graph *sub;
        for (size_t s = 0; (sub = op_subgraph(op, s)); s++) {
            int rc = graph_walk_post(sub, fn, ctx);
            if (rc)
                return rc;
        }
    }
    return fn(g, ctx);
}

/* --- change log --- */

static void log_entry(Model *m, const char *action, const char *subject, const char *detail,
                      bool warning, bool copy)
{
    ChangeLog *l = &m->log;
    Arena *a = &m->arena;
    if (l->count_only && !warning) {
        l->n_changes++;
        return;
    }
    if (LIST_GROW(l->items, l->cap, l->n + 1)) {
        m->oom = true;
        return;
    }
    ChangeEntry *e = &l->items[l->n++];
    e->pass = l->pass ? l->pass : "load";
    e->action = action;
    e->subject = !subject ? "" : copy ? arena_strdup(a, subject) : subject;
    e->detail = detail;
    e->warning = warning;
    l->n_changes += !warning;
}

static void log_add(Model *m, const char *action, const char *subject, const char *detail,
                    bool warning)
{
    log_entry(m, action, subject, detail, warning, true);
}

void model_note_var(Model *m, const char *action, const Var *v)
{
    log_entry(m, action, v->name, NULL, false, false);
}

size_t model_change_count(const Model *m)
{
    return m->log.n_changes;
}

void model_note(Model *m, const char *action, const char *subject)
{
    log_add(m, action, subject, NULL, false);
}

void model_warn(Model *m, const char *subject, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* The pipeline may run a pass again: say each thing once. */
    const char *pass = m->log.pass ? m->log.pass : "load";
    const char *subj = subject ? subject : "";
    size_t n = strlen(pass) + strlen(subj) + strlen(buf) + 3;
    char *key = malloc(n);
    if (!key) {
        m->oom = true;
        return;
    }
    snprintf(key, n, "%s\x1f%s\x1f%s", pass, subj, buf);
    bool seen = namemap_get(&m->warned, key) != NULL;
    const char *kept = seen ? NULL : arena_strdup(&m->arena, key);
    free(key);
    if (seen)
        return;
    if (!kept || namemap_put(&m->warned, kept, (void *)kept))
        m->oom = true;
    log_add(m, "warning", subject, arena_strdup(&m->arena, buf), true);
}

void model_set_metadata(Model *m, const char *key, const char *value)
{
    m->metadata_key = key;
    m->metadata_value = value;
    m->changed = true;
}

void model_drop_stale_training_info(Model *m)
{
    if (!m->n_training_info || !model_change_count(m))
        return;
    const char *pass = m->log.pass;
    m->log.pass = "output";
    model_warn(m, "training_info", "dropped (%zu entr%s): it trains parameters by name and the "
               "passes changed them; the output is for inference (--passes=none keeps it)",
               m->n_training_info, m->n_training_info == 1 ? "y" : "ies");
    m->log.pass = pass;
    m->drop_training_info = true;
    m->changed = true;
}
