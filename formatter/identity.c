/* identity.c - pass "identity": Identity nodes are removed.
 *
 * Consumers of y = Identity(x) read x instead. Graph output names never change:
 * when y is a graph output, x's producer is made to write y directly (x's other
 * consumers follow). That is impossible when x is a graph input, an
 * initializer, an outer-scope value or itself a graph output; then the
 * Identity stays and the report says why. */
#include "params.h"
#include "passes.h"

static int identity_step(PassCtx *pc, Op *op)
{
    Graph *g = pc->g;
    Model *m = g->model;
    if (!op_is(op, "Identity") || op->n_inputs != 1 || op->n_outputs != 1 ||
        !op->inputs[0] || !op->outputs[0])
        return 0;
    Var *x = op->inputs[0], *y = op->outputs[0];
    const char *label = op_label(op);
    if (!readers_may_move_to(x)) {
        model_warn(m, label, "kept Identity: %s", REWRITTEN_LATER);
        return 0;
    }
    int rc = y->n_output_lists ? graph_remove_op_into_output(op, x) : graph_remove_op(op, x);
    if (rc)
        model_warn(m, label, "kept Identity: %s",
                   kept_output_reason(graph_output_move_refusal(op, x)));
    else
        model_note(m, "removed", label);
    return 0;
}

static int pass_identity(PassCtx *pc)
{
    return pass_each_op(pc, identity_step);
}

const Pass identity_pass = {
    .name = "identity",
    .help = "remove Identity nodes, rewiring their consumers",
    .on_by_default = true,
    .run = pass_identity,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"Identity", NULL},
};
