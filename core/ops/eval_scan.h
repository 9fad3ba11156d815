/* eval_scan.h - Scan for the reference interpreter (eval_scan.c). */
#ifndef PPQ_EVAL_SCAN_H
#define PPQ_EVAL_SCAN_H

#include "eval_body.h"

/* Scan node op on input values ins (op->n_inputs, NULL for an omitted
 * one): its outputs into outs (op->n_outputs). EVAL_OK, EVAL_DECLINE
 * (b->why set when Scan itself declines) or EVAL_OOM. */
int eval_run_scan(EvalBody *b, const Op *op, const Tensor *const *ins, Tensor **outs);

#endif
