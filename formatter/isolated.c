/* isolated.c - pass "isolated": remove what reaches no graph output.
 *
 * A node is live when one of its outputs is a graph output or is read by a
 * live node, where a read by a node inside a subgraph counts as a read by the
 * node that owns the subgraph (outer-scope use). Dead nodes go first, then
 * initializers nothing reads, then value_info entries naming no live value.
 * Graph inputs are the model's interface and are never removed, nor is the
 * default value (initializer) of an input in old-IR models: a user may feed
 * that input. */
#include <stdlib.h>

#include "pass.h"

typedef struct Liveness {
    Graph *g;
    Op **stack;
    size_t n;
} Liveness;

static void mark(Liveness *L, Op *op)
{
    if (op && op->graph == L->g && !op->scratch) {
        op->scratch = 1;
        L->stack[L->n++] = op;
    }
}

/* Marks the producers in L->g of every input of op and of its subgraphs. */
static void mark_inputs(Liveness *L, const Op *op)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        if (op->inputs[s])
            mark(L, op->inputs[s]->producer);
    const Graph *sub;
    for (size_t s = 0; (sub = op_subgraph(op, s)); s++) {
        for (size_t i = 0; i < sub->n_ops; i++)
            if (!sub->ops[i]->removed)
                mark_inputs(L, sub->ops[i]);
        for (size_t i = 0; i < sub->n_outputs; i++) /* outer values as outputs */
            mark(L, sub->outputs[i].var->producer);
    }
}

static int mark_live(Graph *g)
{
    Liveness L = {g, malloc((g->n_ops + 1) * sizeof(Op *)), 0};
    if (!L.stack)
        return -1;
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->scratch = 0;
    for (size_t i = 0; i < g->n_outputs; i++)
        mark(&L, g->outputs[i].var->producer);
    while (L.n)
        mark_inputs(&L, L.stack[--L.n]);
    free(L.stack);
    return 0;
}

static void remove_dead_ops(Graph *g)
{
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed && !g->ops[i]->scratch)
            op_detach_inputs(g->ops[i]);
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (op->removed || op->scratch)
            continue;
        const char *label = op_label(op);
        if (graph_remove_op(op, NULL) == 0)
            model_note(g->model, "removed", label);
    }
}

static void remove_unused_params(Graph *g)
{
    for (size_t i = g->n_params; i-- > 0;) {
        Var *v = g->params[i];
        if (v->n_uses || v->is_output || v->is_input)
            continue;
        const char *name = v->name;
        if (graph_remove_param(v) == 0)
            model_note(g->model, "removed initializer", name);
    }
}

static void remove_stale_value_info(Graph *g)
{
    for (size_t i = 0; i < g->n_value_info; i++) {
        ValueInfo *vi = &g->value_info[i];
        if (vi->removed || (vi->var && !vi->var->dropped))
            continue;
        vi->removed = true;
        g->changed = true;
        model_note(g->model, "removed value_info", vi->var ? vi->var->name : "(unknown name)");
    }
}

int pass_isolated(Graph *g, Diag *d)
{
    if (mark_live(g))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass isolated");
    remove_dead_ops(g);
    remove_unused_params(g);
    remove_stale_value_info(g);
    return 0;
}
