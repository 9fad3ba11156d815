/* eval_run.c - the reference interpreter (eval_run.h): each node of the
 * main graph through its registry kernel, values looked up by name. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "eval_run.h"
#include "eval_run_nn.h"
#include "ops_registry.h"
#include "../ir/namemap.h"

size_t eval_run_inputs(const Graph *g, const Var **vars, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || !v || v->param)
            continue;
        if (n < cap)
            vars[n] = v;
        n++;
    }
    return n;
}

static int run_fail(EvalRunError *err, const Op *op, const char *fmt, const char *what)
{
    err->op = op;
    snprintf(err->why, sizeof err->why, fmt, what);
    return EVAL_RUN_UNSUPPORTED;
}

/* The value of v: its initializer, else what a graph input or node gave. */
static const Tensor *run_value(const NameMap *values, const Var *v)
{
    return v->param ? v->param : namemap_get(values, v->name);
}

/* Constant's value attribute; its other forms are run by no kernel. */
static int run_constant(NameMap *values, const Op *op, EvalRunError *err)
{
    const Attr *v = op_attr(op, "value");
    if (!v || v->type != ATTR_TENSOR || !v->tensors || op->n_outputs != 1 || !op->outputs[0])
        return run_fail(err, op, "no kernel for op %s (only its 'value' form)", op->type);
    return namemap_put(values, op->outputs[0]->name, v->tensors[0]) ? EVAL_RUN_OOM : EVAL_RUN_OK;
}

static int run_node(const Model *m, Arena *a, NameMap *values, const Op *op, EvalRunError *err)
{
    if (op_is(op, "Constant"))
        return run_constant(values, op, err);
    const char *domain = op->domain ? op->domain : "";
    OpEvalFn eval = ops_kernel(domain, op->type, model_domain_opset(m, domain), op->n_inputs,
                               op->n_outputs);
    eval = eval ? eval : eval_run_kernel(domain, op->type);
    if (!eval)
        return run_fail(err, op, "no kernel for op %s", op->type);
    const Tensor **ins = arena_array(a, op->n_inputs ? op->n_inputs : 1, sizeof *ins);
    Tensor **outs = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *outs);
    if (!ins || !outs)
        return EVAL_RUN_OOM;
    for (size_t i = 0; i < op->n_inputs; i++) {
        const Var *v = op->inputs[i];
        ins[i] = v ? run_value(values, v) : NULL;
        if (v && !ins[i])
            return run_fail(err, op, "input '%s' has no value before this node", v->name);
    }
    /* No size or multiply-add limit and nothing streamed: the fold pass's
     * limits guard the output file, which the interpreter does not write. */
    EvalCtx c = {op, model_domain_opset(m, domain), ins, op->n_inputs, outs, op->n_outputs,
                 a, m, SIZE_MAX, SIZE_MAX, NULL, EVAL_KEEPS, EVAL_REFUSED_OTHER, 0};
    int rc = eval(&c);
    if (rc == EVAL_OOM)
        return EVAL_RUN_OOM;
    if (rc != EVAL_OK)
        return run_fail(err, op, "kernel declined: %s", c.why ? c.why : "no reason");
    for (size_t j = 0; j < op->n_outputs; j++)
        if (op->outputs[j] && outs[j] && namemap_put(values, op->outputs[j]->name, outs[j]))
            return EVAL_RUN_OOM;
    return EVAL_RUN_OK;
}

static int run_outputs(const Graph *g, const NameMap *values, Tensor **outputs, EvalRunError *err)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const Var *v = g->outputs[i].var;
        if (g->outputs[i].removed || !v)
            continue;
        outputs[k] = (Tensor *)run_value(values, v);
        if (!outputs[k++])
            return run_fail(err, NULL, "graph output '%s' was not computed", v->name);
    }
    return EVAL_RUN_OK;
}

int eval_run_graph(const Model *m, Arena *a, const Tensor *const *inputs, Tensor **outputs,
                   EvalRunError *err)
{
    const Graph *g = m->graph;
    NameMap values = {0};
    const Var *in[1];
    size_t n_in = eval_run_inputs(g, in, 0), k = 0;
    int rc = EVAL_RUN_OK;
    memset(err, 0, sizeof *err);
    for (size_t i = 0; i < g->n_inputs && !rc; i++) {
        const Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || !v || v->param)
            continue;
        if (k < n_in && namemap_put(&values, v->name, (void *)inputs[k++]))
            rc = EVAL_RUN_OOM;
    }
    for (size_t i = 0; i < g->n_ops && !rc; i++)
        if (!g->ops[i]->removed)
            rc = run_node(m, a, &values, g->ops[i], err);
    if (!rc)
        rc = run_outputs(g, &values, outputs, err);
    namemap_free(&values);
    return rc;
}
