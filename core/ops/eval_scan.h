/* eval_scan.h - Scan for the reference interpreter (eval_scan.c): the body
 * graph run once per step through a runner the interpreter (eval_run.c)
 * provides, so that the body sees the enclosing scopes' values. */
#ifndef PPQ_EVAL_SCAN_H
#define PPQ_EVAL_SCAN_H

#include "eval_run.h"

/* Runs a subgraph g on inputs[0..n) (its value-taking inputs, in order)
 * into outputs (its live outputs, in order), in the scope of the node that
 * holds it; EVAL_RUN_OK, EVAL_RUN_UNSUPPORTED (err set) or EVAL_RUN_OOM. */
typedef struct EvalBodyRunner EvalBodyRunner;
struct EvalBodyRunner {
    int (*run)(const EvalBodyRunner *r, const Graph *g, const Tensor *const *inputs, size_t n,
               Tensor **outputs, EvalRunError *err);
    const Model *model;
    Arena *arena; /* where the steps' values and the results live */
    const void *scope;
};

/* Scan node op on input values ins (op->n_inputs, NULL for an omitted
 * one): its outputs into outs (op->n_outputs). */
int eval_run_scan(const EvalBodyRunner *r, const Op *op, const Tensor *const *ins,
                  Tensor **outs, EvalRunError *err);

#endif
