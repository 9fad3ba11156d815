/* eval_body.h - what the ops whose kernels run subgraphs (graph
 * attributes) share: Scan (eval_scan.h) and ai.onnx.preview's
 * FlexAttention (eval_flex.h), for the reference interpreter. Their bodies
 * run through a runner the interpreter (eval_run.c) provides, so that they
 * see the enclosing scopes' values; the helpers live in eval_body.c. */
#ifndef PPQ_EVAL_BODY_H
#define PPQ_EVAL_BODY_H

#include "../ir/graph.h"

typedef struct EvalBody EvalBody;
struct EvalBody {
    /* Runs subgraph g on inputs[0..n) (its value-taking inputs, in order)
     * into outputs (its live outputs, in order): EVAL_OK, EVAL_DECLINE (a
     * node of g could not run; the interpreter has recorded which) or
     * EVAL_OOM (eval.h). */
    int (*run)(const EvalBody *b, const Graph *g, const Tensor *const *inputs, size_t n,
               Tensor **outputs);
    const Model *model;
    Arena *arena;     /* where the steps' values and the results live */
    void *ctx;        /* the interpreter's: the node's scope and its error record */
    const char *why;  /* set when the op itself declines (eval_body_decline) */
};

/* EVAL_DECLINE with b->why = why. */
int eval_body_decline(EvalBody *b, const char *why);
/* g's value-taking inputs (no initializer) and live outputs. */
size_t eval_body_inputs(const Graph *g);
size_t eval_body_outputs(const Graph *g);
/* op's graph attribute name, or NULL. */
const Graph *eval_body_graph(const Op *op, const char *name);

#endif
