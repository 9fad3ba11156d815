/* eval_run.h - the reference interpreter: a whole main graph run on given
 * inputs through the registry's kernels (eval.h), for ppqfmt --check.
 *
 * The nodes run in file order (ONNX requires it topological; a node whose
 * input is not yet computed stops the run). Initializers are read where the
 * model holds them (the mapped input file for unchanged weights, no copy).
 * Nothing is rounded differently for exactness: the interpreter computes
 * what each kernel computes, it does not decide what is safe to fold. */
#ifndef PPQ_EVAL_RUN_H
#define PPQ_EVAL_RUN_H

#include "../ir/graph.h"

/* EVAL_RUN_OK; EVAL_RUN_UNSUPPORTED when a node has no kernel or its kernel
 * declines (err says which node and why); EVAL_RUN_OOM. */
enum { EVAL_RUN_OK = 0, EVAL_RUN_UNSUPPORTED = 1, EVAL_RUN_OOM = -1 };

typedef struct EvalRunError {
    const Op *op; /* the node that could not run, or NULL */
    char why[160];
} EvalRunError;

/* The graph inputs that take a value (those without an initializer), in
 * order: their count, and up to cap of them in vars. */
size_t eval_run_inputs(const Graph *g, const Var **vars, size_t cap);

/* Runs m's main graph: inputs[k] for the k-th of eval_run_inputs; outputs
 * (one per live graph output, in order) into outputs, allocated in a. */
int eval_run_graph(const Model *m, Arena *a, const Tensor *const *inputs, Tensor **outputs,
                   EvalRunError *err);

#endif
