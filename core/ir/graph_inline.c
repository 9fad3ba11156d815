/* graph_inline.c - graph_inline_subgraph: an operation replaced by the
 * contents of one of its subgraphs (an If whose condition is known computes
 * exactly its chosen branch).
 *
 * The subgraph's Op and Var objects move as they are instead of being
 * copied: every pointer to them stays valid (uses by nested subgraphs, the
 * round's facts each Var holds), and an unchanged node is still written from
 * the bytes it was read from. */
#include "graph.h"
#include "graph_internal.h"

#include <stdlib.h>
#include <string.h>

/* The names a moved value or node cannot keep: those defined by the graphs
 * that stay (every graph but the owner's subgraphs). A subgraph may not
 * define a name an enclosing scope defines before it, and sibling scopes may
 * share names: a branch value landing in the owner's graph must avoid the
 * names of the graphs nested in it as well as those it can see.
 *
 * They are counted (how many live values, and nodes, of the model have each
 * name) once per pass run, at its first inlining, and kept in the model
 * (Model.inline_names) until model_compact: each inlining subtracts the
 * names of its owner and of the owner's subgraphs, which go, and adds back
 * those of what moved and stays. So a pass that inlines many Ifs of a large
 * model reads each name a bounded number of times, not the whole model once
 * per If. */

static int count_name(NameMap *counts, const char *name, int delta)
{
    uintptr_t n = (uintptr_t)namemap_get(counts, name);
    if (delta < 0 && n < (uintptr_t)-delta) /* not counted: nothing to take back */
        return 0;
    n += (uintptr_t)(intptr_t)delta;
    if (n)
        return namemap_put(counts, name, (void *)n);
    namemap_del(counts, name);
    return 0;
}

static int count_graph(InlineNames *t, const Graph *g, int delta);

/* op's name and the names of its subgraphs. */
static int count_op(InlineNames *t, const Op *op, int delta)
{
    Graph *sub;
    if (op->removed)
        return 0;
    if (*op->name && count_name(&t->nodes, op->name, delta))
        return -1;
    for (size_t i = 0; (sub = op_subgraph(op, i)); i++)
        if (count_graph(t, sub, delta))
            return -1;
    return 0;
}

static int count_graph(InlineNames *t, const Graph *g, int delta)
{
    for (size_t i = 0; i < g->n_vars; i++)
        if (!g->vars[i]->removed && count_name(&t->values, g->vars[i]->name, delta))
            return -1;
    for (size_t i = 0; i < g->n_ops; i++)
        if (count_op(t, g->ops[i], delta))
            return -1;
    for (size_t i = 0; i < g->n_pending; i++) /* inserted, not yet in g->ops */
        if (count_op(t, g->pending[i].op, delta))
            return -1;
    return 0;
}

/* The model's names, counted if this is the pass's first inlining. */
static InlineNames *inline_names(Model *m)
{
    InlineNames *t = &m->inline_names;
    if (!t->counted && count_graph(t, m->graph, 1))
        return NULL;
    t->counted = true;
    return t;
}

/* Why sub cannot replace its owner, or NULL. */
static const char *inline_refusal(const Graph *sub)
{
    const Op *op = sub->owner;
    if (!op || !sub->parent || op->graph != sub->parent || op->removed)
        return "the subgraph's owner is not a live node of the enclosing graph";
    if (sub->n_inputs)
        return "the subgraph has inputs";
    if (sub->n_outputs != op->n_outputs)
        return "the subgraph and its node have different numbers of outputs";
    if (sub->n_params && !graph_takes_new_params(sub->parent))
        return "its initializers cannot move: IR version < 4 needs initializers as inputs, "
               "impossible in a subgraph";
    for (size_t i = 0; i < sub->n_vars; i++)
        if (!sub->vars[i]->removed && sub->vars[i]->shadowed)
            return "the subgraph writes a name twice (not SSA; de-inplace renames it)";
    for (size_t i = 0; i < sub->n_outputs; i++) {
        const Var *b = sub->outputs[i].var;
        if (sub->outputs[i].removed || !b || b->removed ||
            (b->graph == sub && !b->producer && !b->param))
            return "an output of the subgraph names no value";
    }
    return NULL;
}

/* Output lists of the graphs nested in sub that return `from` (from the
 * outer scope) return `to` instead. */
typedef struct Repoint {
    Var *from, *to;
} Repoint;

static int repoint_outputs(Graph *n, void *ctx)
{
    const Repoint *r = ctx;
    for (size_t i = 0; i < n->n_outputs; i++) {
        ValueInfo *o = &n->outputs[i];
        if (o->removed || o->var != r->from)
            continue;
        o->var = r->to;
        r->from->n_output_lists--;
        r->to->n_output_lists++;
        n->changed = true; /* the entry is written under the new name */
    }
    return 0;
}

/* One call's state. Per owner output i: y[i] the owner's variable (NULL
 * when omitted), b[i] what sub returns, src[i] what holds that value once
 * moved (y[i] itself when a moved node now writes it). */
typedef struct Inline {
    Op *op;
    Graph *sub, *g;
    Var **y, **b, **src;
    InlineNames *names;
    size_t vars_from, pending_from; /* where the moved values and nodes start in g */
    size_t renamed; /* moved values that got a fresh name */
    Op *last;       /* the last operation placed where the owner was */
} Inline;

/* The owner's outputs lose their producer, and sub's output lists go:
 * nothing returns from sub once its contents have moved. */
static void unlink_outputs(Inline *in)
{
    for (size_t i = 0; i < in->op->n_outputs; i++) {
        in->y[i] = in->op->outputs[i];
        if (in->y[i])
            in->y[i]->producer = NULL;
        in->op->outputs[i] = NULL;
        in->b[i] = in->sub->outputs[i].var;
        in->b[i]->n_output_lists--;
        in->sub->outputs[i].removed = true;
    }
}

/* y takes over b, the output of a node of sub: the node writes y, and b's
 * readers (nested ones too) read y. */
static int take_over_output(Graph *sub, Var *y, Var *b)
{
    if (var_take_over(y, b))
        return -1;
    if (b->removed)
        return 0;
    Repoint r = {b, y}; /* a graph nested in sub returns b */
    graph_walk_post(sub, repoint_outputs, &r);
    return graph_drop_var(b);
}

/* Each owner output whose value a node of sub computes is written by that
 * node (the first such output, when sub returns the value twice). */
static int take_over_outputs(Inline *in)
{
    for (size_t i = 0; i < in->op->n_outputs; i++) {
        Var *b = in->b[i];
        in->src[i] = b;
        for (size_t k = 0; k < i && b->removed; k++)
            if (in->b[k] == b && in->src[k] != b)
                in->src[i] = in->src[k];
        if (!in->y[i] || b->removed || b->graph != in->sub || !b->producer)
            continue;
        if (take_over_output(in->sub, in->y[i], b))
            return -1;
        in->src[i] = in->y[i];
    }
    return 0;
}

/* Declared sequence and optional types of sub's own values move with them. */
static int move_held(Inline *in)
{
    for (size_t i = 0; i < in->sub->n_held; i++) {
        const HeldDecl *h = &in->sub->held[i];
        if (h->var && !h->var->removed && h->var->graph == in->sub &&
            graph_add_held_decl(in->g, h->var, h->kind, h->type))
            return -1;
    }
    in->sub->n_held = 0;
    return 0;
}

/* v's producer and readers are written again, under v's new name. */
static void mark_renamed(const Var *v)
{
    if (v->producer)
        op_mark_changed(v->producer);
    for (uint32_t k = 0; k < v->n_uses; k++)
        op_mark_changed(v->uses[k].op);
}

static int move_var(Inline *in, Var *v)
{
    Graph *g = in->g;
    namemap_del(&in->sub->by_name, v->name);
    v->graph = g;
    v->shadows = NULL; /* sub writes no name twice (inline_refusal) */
    v->value_info_at = 0; /* its entries are added again (move_value_info) */
    v->value_info_dup = false;
    if (namemap_get(&in->names->values, v->name)) {
        if (!(v->name = model_fresh_value_name(g->model, v->name)))
            return -1;
        mark_renamed(v);
        in->renamed++;
    }
    if (LIST_GROW(g->vars, g->cap_vars, g->n_vars + 1) ||
        namemap_put(&g->by_name, v->name, v))
        return -1;
    g->vars[g->n_vars++] = v;
    return 0;
}

/* sub's values, then its initializers (in file order), join g. */
static int move_vars(Inline *in)
{
    Graph *sub = in->sub, *g = in->g;
    for (size_t i = 0; i < sub->n_vars; i++)
        if (!sub->vars[i]->removed && move_var(in, sub->vars[i]))
            return -1;
    sub->n_vars = 0;
    bool as_input = model_params_are_inputs(g->model); /* g is the main graph then */
    for (size_t i = 0; i < sub->n_params; i++)
        if (graph_append_param(g, sub->params[i]) ||
            (as_input && graph_add_input(g, sub->params[i], (Bytes){0})))
            return -1;
    sub->n_params = 0;
    return 0;
}

/* sub's value_info entries of values that moved join g's, as they were
 * (a renamed value's entry is written under its new name); the others, of
 * values a take-over dropped, go. */
static int move_value_info(Inline *in)
{
    Graph *sub = in->sub, *g = in->g;
    for (size_t i = 0; i < sub->n_value_info; i++) {
        const ValueInfo *e = &sub->value_info[i];
        if (e->removed || !e->var || e->var->removed || e->var->graph != g)
            continue;
        if (graph_add_value_info(g, e->var, e->wire))
            return -1;
        g->value_info[g->n_value_info - 1].retyped = e->retyped;
    }
    sub->n_value_info = 0;
    return 0;
}

/* A graph nested in a moved node that returns an outer value writes its
 * output list again: the value may have been renamed. */
static int mark_outer_outputs(Graph *n, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < n->n_outputs; i++)
        if (!n->outputs[i].removed && n->outputs[i].var->graph != n)
            n->changed = true;
    return 0;
}

static int move_op(Inline *in, Op *o)
{
    Graph *g = in->g, *nested;
    o->graph = g;
    for (size_t k = 0; (nested = op_subgraph(o, k)); k++) {
        nested->parent = g;
        if (in->renamed)
            graph_walk_post(nested, mark_outer_outputs, NULL);
    }
    if (*o->name && namemap_get(&in->names->nodes, o->name)) {
        if (!(o->name = model_fresh_node_name(g->model, o->name)))
            return -1;
        op_mark_changed(o);
    }
    /* placed after the previous one, at the owner's place (graph_compact) */
    if (LIST_GROW(g->pending, g->cap_pending, g->n_pending + 1))
        return -1;
    g->pending[g->n_pending++] = (PendingOp){in->last, o};
    in->last = o;
    return 0;
}

static int move_ops(Inline *in)
{
    for (size_t i = 0; i < in->sub->n_ops; i++)
        if (!in->sub->ops[i]->removed && move_op(in, in->sub->ops[i]))
            return -1;
    in->sub->n_ops = 0;
    return 0;
}

/* Owner output y that sub returned from elsewhere (src): its readers read
 * src, or, when its name must stay (a graph output) or src's name is written
 * again later (a reader moved past that write would read it), an Identity
 * after the moved nodes writes it. */
static int connect_output(Inline *in, Var *y, Var *src)
{
    if (!y->n_output_lists && !src->shadowed) {
        var_replace_all_uses(y, src);
        return graph_drop_var(y) || count_name(&in->names->values, y->name, -1);
    }
    Model *m = in->g->model;
    const char *name = *in->op->name ? model_fresh_node_name(m, in->op->name) : "";
    Op *id = name ? graph_insert_op(in->g, in->last, "Identity", name) : NULL;
    if (!id || op_append_input(id, src) || op_append_output(id, y))
        return -1;
    in->last = id;
    return 0;
}

static int connect_outputs(Inline *in)
{
    for (size_t i = 0; i < in->op->n_outputs; i++)
        if (in->y[i] && in->y[i] != in->src[i] && connect_output(in, in->y[i], in->src[i]))
            return -1;
    return 0;
}

/* What moved into g, and stays, is counted again. */
static int count_moved(Inline *in)
{
    Graph *g = in->g;
    for (size_t i = in->vars_from; i < g->n_vars; i++)
        if (!g->vars[i]->removed && count_name(&in->names->values, g->vars[i]->name, 1))
            return -1;
    for (size_t i = in->pending_from; i < g->n_pending; i++)
        if (count_op(in->names, g->pending[i].op, 1))
            return -1;
    return 0;
}

/* The steps in order: the names that go are taken off the counts first
 * (sub's own must not count), then the take-overs (while b is still sub's,
 * so that dropping it drops its value_info there), then the moves, then
 * what sub returned from elsewhere (an Identity goes after the moved
 * nodes). The owner goes last, detaching its condition and its other
 * subgraphs; sub is empty by then. What moved is counted last. */
static int inline_steps(Inline *in)
{
    Model *m = in->g->model;
    graph_compact_nested(in->sub); /* nodes inserted there take their place */
    if (m->oom || !(in->names = inline_names(m)) || count_op(in->names, in->op, -1))
        return -1; /* the owner and its subgraphs go */
    unlink_outputs(in);
    in->vars_from = in->g->n_vars;
    in->pending_from = in->g->n_pending;
    return take_over_outputs(in) || move_held(in) || move_vars(in) || move_value_info(in) ||
                   move_ops(in) || connect_outputs(in) || graph_remove_op(in->op, NULL) ||
                   count_moved(in)
               ? -1
               : 0;
}

int graph_inline_subgraph(Graph *sub, const char **why)
{
    const char *refused = inline_refusal(sub);
    if (refused) {
        *why = refused;
        return -1;
    }
    Op *op = sub->owner;
    size_t n = op->n_outputs + 1;
    Inline in = {.op = op, .sub = sub, .g = sub->parent, .last = op};
    Var **lists = malloc(3 * n * sizeof *lists);
    in.y = lists;
    in.b = lists + n;
    in.src = lists + 2 * n;
    int rc = lists ? inline_steps(&in) : -1;
    free(lists);
    if (rc) {
        in.g->model->oom = true;
        *why = "out of memory";
    }
    return rc;
}
