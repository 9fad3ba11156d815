/* constant.c - pass "constant": Constant nodes become initializers.
 *
 * The value keeps the Constant's output name, so consumers, value_info and a
 * graph output of that name stay valid. Inside a subgraph the initializer
 * belongs to that subgraph. A tensor `value` is reused as it is (its bytes are
 * written unchanged, under the new name); the scalar and list forms become
 * float / int64 / string tensors as the ONNX spec defines them. */
#include <string.h>

#include "params.h"
#include "passes.h"

/* Names written by more than one node of g (every write but the last is
 * shadowed) into *names; they stay so when de-inplace did not run. -1 when
 * out of memory. */
static int constant_rewritten_names(const Graph *g, NameMap *names)
{
    for (size_t i = 0; i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (v->shadowed && !v->removed && namemap_put(names, v->name, v))
            return -1;
    }
    return 0;
}

/* A Constant whose output name another node writes too stays a node: an
 * initializer of that name would be written by that node as well, which no
 * model may do (ppqfmt itself refuses it). */
static bool constant_is_rewritten(Model *m, const NameMap *rewritten, const Op *op)
{
    if (!namemap_get(rewritten, op->outputs[0]->name))
        return false;
    model_warn(m, op_label(op), "kept Constant: another node writes '%s' too (not SSA; "
               "pass de-inplace renames such values)", op->outputs[0]->name);
    return true;
}

static int constants_to_params(Graph *g, const NameMap *rewritten, Diag *d)
{
    Model *m = g->model;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (!op_is(op, "Constant") || op->n_outputs != 1 || !op->outputs[0] || op->n_inputs ||
            constant_is_rewritten(m, rewritten, op))
            continue;
        const char *why;
        Tensor *t = op_constant_value(&m->arena, op, &why);
        if (!t) {
            model_warn(m, op_label(op), "kept Constant: %s", why);
            continue;
        }
        const char *label = op_label(op);
        if (!graph_takes_new_params(g)) {
            model_warn(m, label, "kept Constant: IR version %lld needs initializers to be "
                       "graph inputs, and a subgraph's inputs are fixed", (long long)m->ir_version);
            continue;
        }
        if (op->n_inputs || op->n_outputs != 1 || !op->outputs[0]) {
            model_warn(m, label, "kept Constant: it has inputs, or not one output");
            continue;
        }
        if (op_outputs_to_params(op, &t))
            return diag_set(d, PPQ_EINTERNAL, "out of memory in pass constant");
        model_note(m, "folded", label);
    }
    return 0;
}

static int pass_constant(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    NameMap rewritten = {0};
    int rc = constant_rewritten_names(g, &rewritten)
                 ? diag_set(d, PPQ_EINTERNAL, "out of memory in pass constant")
                 : constants_to_params(g, &rewritten, d);
    namemap_free(&rewritten);
    return rc;
}

const Pass constant_pass = {
    .name = "constant",
    .help = "turn Constant nodes into initializers",
    .on_by_default = true,
    .run = pass_constant,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"Constant", NULL},
};
