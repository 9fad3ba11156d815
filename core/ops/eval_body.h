/* eval_body.h - the ops whose kernels run subgraphs (graph attributes) for
 * the reference interpreter: Scan (eval_scan.c) and ai.onnx.preview's
 * FlexAttention (eval_flex.c). Their bodies run through a runner the
 * interpreter (eval_run.c) provides, so that they see the enclosing scopes'
 * values. */
#ifndef PPQ_EVAL_BODY_H
#define PPQ_EVAL_BODY_H

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

/* Is op one of these ops? */
bool eval_runs_bodies(const Op *op);

/* Runs such an op on input values ins (op->n_inputs, NULL for an omitted
 * one): its outputs into outs (op->n_outputs). */
int eval_run_body_op(const EvalBodyRunner *r, const Op *op, const Tensor *const *ins,
                     Tensor **outs, EvalRunError *err);

/* The kernels (eval_scan.c, eval_flex.c), as eval_run_body_op. */
int eval_run_scan(const EvalBodyRunner *r, const Op *op, const Tensor *const *ins,
                  Tensor **outs, EvalRunError *err);
int eval_run_flex_attention(const EvalBodyRunner *r, const Op *op, const Tensor *const *ins,
                            Tensor **outs, EvalRunError *err);

#endif
