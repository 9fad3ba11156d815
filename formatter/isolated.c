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

#include "params.h"
#include "passes.h"

typedef struct Liveness {
    Graph *g;
    Op **stack;
    size_t n;
    size_t live; /* operations marked */
} Liveness;

/* Op.scratch bits while marking: LIVE once the operation is known to feed
 * an output, SWEPT once mark_live's reverse sweep has passed it. */
enum { LIVE = 1, SWEPT = 2 };

static bool op_live(const Op *op) { return op->scratch & LIVE; }

static void mark(Liveness *L, Op *op)
{
    if (op && op->graph == L->g && !op_live(op)) {
        op->scratch |= LIVE;
        L->live += !op->removed;
        if (op->scratch & SWEPT) /* written after its reader: the sweep is past it */
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

/* Marks the live operations (op_live); *dead: how many operations are not.
 * One sweep from the last operation to the first marks a graph in file
 * (topological) order without chasing producer chains one cache miss after
 * another; a producer found live after the sweep passed it (a file out of
 * order) is finished from the stack. -1 when out of memory. */
static int mark_live(Graph *g, size_t *dead)
{
    Liveness L = {g, malloc((g->n_ops + 1) * sizeof(Op *)), 0, 0};
    if (!L.stack)
        return -1;
    size_t present = 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        g->ops[i]->scratch = 0;
        present += !g->ops[i]->removed;
    }
    for (size_t i = 0; i < g->n_outputs; i++)
        if (!g->outputs[i].removed)
            mark(&L, g->outputs[i].var->producer);
    for (size_t i = g->n_ops; i-- > 0;) {
        Op *op = g->ops[i];
        op->scratch |= SWEPT;
        if (op_live(op))
            mark_inputs(&L, op);
    }
    while (L.n)
        mark_inputs(&L, L.stack[--L.n]);
    free(L.stack);
    *dead = present - L.live;
    return 0;
}

static bool is_dead(const Op *op, void *ctx)
{
    (void)ctx;
    return !op_live(op); /* mark_live's verdict */
}

/* All dead operations at once: they may feed each other, and one sweep per
 * use list keeps wide fan-out linear. */
static int remove_dead_ops(Graph *g)
{
    const char **labels = malloc((g->n_ops + 1) * sizeof *labels);
    if (!labels)
        return -1;
    for (size_t i = 0; i < g->n_ops; i++) /* named while their outputs exist */
        labels[i] = !g->ops[i]->removed && !op_live(g->ops[i]) ? op_label(g->ops[i]) : NULL;
    if (graph_remove_ops_where(g, is_dead, NULL)) {
        free(labels);
        return -1;
    }
    for (size_t i = 0; i < g->n_ops; i++)
        if (labels[i] && g->ops[i]->removed)
            model_note(g->model, "removed", labels[i]);
    free(labels);
    return 0;
}

static bool note_unused_param(Var *v, void *ctx)
{
    model_note_var(ctx, "removed initializer", v);
    return true;
}

static void remove_unused_params(Graph *g)
{
    graph_remove_params_where(g, note_unused_param, g->model);
}

static void remove_stale_value_info(Graph *g)
{
    for (size_t i = 0; i < g->n_value_info; i++) {
        ValueInfo *vi = &g->value_info[i];
        if (vi->removed || (vi->var && !vi->var->removed))
            continue;
        graph_remove_value_info(g, i);
        model_note(g->model, "removed value_info", vi->var ? vi->var->name : "(unknown name)");
    }
}

static int pass_isolated(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    size_t dead;
    if (mark_live(g, &dead))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass isolated");
    /* with every operation live, the removal's sweeps would find nothing */
    if (dead && remove_dead_ops(g))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass isolated");
    remove_unused_params(g);
    remove_stale_value_info(g);
    return 0;
}

const Pass isolated_pass = {
    .name = "isolated",
    .help = "remove nodes that reach no output, unused initializers and value_info",
    .on_by_default = true,
    .run = pass_isolated,
    .facts = FACTS_NONE,
    .acts_on = NULL,
};
