/* graph.c - BaseGraph construction and the edit API the passes use: the
 * model and its graphs, names, values and their uses, operations and their
 * inputs, parameters, declared types. Its siblings hold the rest of the API
 * graph.h declares: graph_attr (attributes), graph_opset (opset imports),
 * graph_remove (edits that take something away), graph_compact (bulk
 * removal, compaction), graph_log (the change log), graph_inline and
 * graph_check; graph_internal.h is what they share.
 *
 * Invariant kept by every function of the IR: for every live operation `op` and
 * input slot `s`, if op->inputs[s] is a variable v then v->uses holds exactly
 * one entry {op, s}; and v->producer / producer_slot name the one live
 * operation whose outputs hold v. graph_verify() checks it. */
#include "graph.h"
#include "graph_internal.h"

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

void inline_names_drop(Model *m)
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
void var_unshadow_earlier(Var *v, const char *name)
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

/* An input or output added: the node must be written anew. Only a node that
 * was read (it has wire bytes) counts as edited (model_op_edits); the
 * loader's own additions are unmarked once its graph is read. */
static void op_mark_grown(Op *op)
{
    if (op->wire.len)
        op_mark_changed(op);
    else
        op->changed = op->graph->changed = true;
}

int op_append_input(Op *op, Var *v)
{
    Arena *a = &op->graph->model->arena;
    if (GROW32(a, op->inputs, op->cap_inputs, (size_t)op->n_inputs + 1))
        return -1;
    size_t slot = op->n_inputs++;
    op->inputs[slot] = v;
    op_mark_grown(op);
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
    op_mark_grown(op);
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
void param_take_type(Var *v, const Tensor *t)
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
int detach_graph(Graph *g, void *ctx)
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

bool model_params_are_inputs(const Model *m)
{
    return m->ir_version < 4;
}

bool graph_takes_new_params(const Graph *g)
{
    return !g->parent || !model_params_are_inputs(g->model);
}

void graph_remove_value_info(Graph *g, size_t i)
{
    g->value_info[i].removed = true;
    g->changed = true;
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

void model_set_metadata(Model *m, const char *key, const char *value)
{
    m->metadata_key = key;
    m->metadata_value = value;
    m->changed = true;
}

