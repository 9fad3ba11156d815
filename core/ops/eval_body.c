/* eval_body.c - helpers of the ops that run subgraphs (eval_body.h). */
#include "eval.h"
#include "eval_body.h"

int eval_body_decline(EvalBody *b, const char *why)
{
    b->why = why;
    return EVAL_DECLINE;
}

size_t eval_body_inputs(const Graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_inputs; i++)
        n += !g->inputs[i].removed && g->inputs[i].var && !g->inputs[i].var->param;
    return n;
}

size_t eval_body_outputs(const Graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_outputs; i++)
        n += !g->outputs[i].removed && g->outputs[i].var;
    return n;
}

const Graph *eval_body_graph(const Op *op, const char *name)
{
    const Attr *at = op_attr(op, name);
    return at && at->type == ATTR_GRAPH && at->graphs ? at->graphs[0] : NULL;
}
