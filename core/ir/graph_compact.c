/* graph_compact.c - removing many things at once and tidying up after the
 * edits: initializers by a predicate, operations by a predicate (inputs of
 * all detached first, so chosen operations may feed each other), and the
 * compaction after each pass (removed entries dropped from the lists,
 * pending insertions placed where they belong). */
#include "graph.h"
#include "graph_internal.h"

#include <stdlib.h>
#include <string.h>

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
