/* reshape_target.c - pass "reshape-target": a Reshape whose target a chain
 * of nodes computes at run time (Shape -> Gather -> Unsqueeze -> Concat, as
 * exporters write for a dynamic batch) but whose every entry shape inference
 * knows except one size becomes a Reshape of a constant target holding -1
 * there; the chain, read by nothing else, then goes (pass isolated).
 *
 * -1 makes Reshape compute that entry from the element count, which is the
 * value the chain would compute whenever the model is valid: the one entry
 * left is a size (never negative: not -1 itself), and the others are known
 * numbers with no -1 among them. A 0 among them keeps its meaning (copy the
 * input's dim) without allowzero, so allowzero=1 targets stay. */
#include "params.h"
#include "passes.h"

enum { RT_MAX_RANK = 64 };

/* The index of the one entry of v's contents inference does not know as a
 * number (a size), or -1 when there is not exactly one or another entry is
 * -1; known entries go to vals. */
static int rt_open_entry(const Var *v, int64_t *vals, size_t *n)
{
    const InferFact *f = value_fact(v);
    if (!f || !f->value || f->n_value > RT_MAX_RANK || f->rank != 1)
        return -1;
    int open = -1;
    for (size_t i = 0; i < f->n_value; i++) {
        Dim d = f->value[i];
        if (d && dim_is_const(d) && dim_value(d) >= 0) {
            vals[i] = dim_value(d);
            continue;
        }
        if (!d || open >= 0 || !dim_nonneg(d))
            return -1;
        open = (int)i;
    }
    *n = f->n_value;
    return open;
}

static int rt_rewrite(Op *op)
{
    int64_t vals[RT_MAX_RANK];
    size_t n;
    const Var *target = op->n_inputs == 2 ? op->inputs[1] : NULL;
    if (!target || target->param || !target->producer || op_attr_int(op, "allowzero", 0))
        return 0;
    int open = rt_open_entry(target, vals, &n);
    if (open < 0)
        return 0;
    vals[open] = -1;
    Var *t = new_int64_param(op, "_shape", vals, n);
    if (!t)
        return -1;
    op_set_input(op, 1, t);
    model_note(op->graph->model, "constant target", op_label(op));
    return 0;
}

static int reshape_target_step(PassCtx *pc, Op *op)
{
    if (!op->removed && op_is(op, "Reshape") && rt_rewrite(op))
        return pass_failed_on(pc, op_label(op));
    return 0;
}

static int pass_reshape_target(PassCtx *pc)
{
    return graph_takes_new_params(pc->g) ? pass_each_op(pc, reshape_target_step) : 0;
}

const Pass reshape_target_pass = {
    .name = "reshape-target",
    .help = "a Reshape target known but for one size becomes a constant with -1",
    .on_by_default = true,
    .run = pass_reshape_target,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"Reshape", NULL},
};
