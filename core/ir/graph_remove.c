/* graph_remove.c - the edits that take something away: removing an
 * operation (rewiring its readers, or handing its graph-output name to its
 * input's producer), turning its outputs into initializers, renaming a
 * value, dropping trailing inputs and outputs, replacing an operation. Each
 * checks first and refuses with nothing changed (graph.h). */
#include "graph.h"
#include "graph_internal.h"

#include <string.h>

/* graph_compact sweeps a graph's lists only when something left them. */
static void op_mark_removed(Op *op)
{
    op->removed = true;
    op->graph->has_removed = true;
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
