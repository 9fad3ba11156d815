/* eval_flex.h - ai.onnx.preview's FlexAttention for the reference
 * interpreter (eval_flex.c). */
#ifndef PPQ_EVAL_FLEX_H
#define PPQ_EVAL_FLEX_H

#include "eval_body.h"

/* Is op a FlexAttention of the ai.onnx.preview domain? */
bool eval_is_flex_attention(const Op *op);

/* As eval_run_scan (eval_scan.h), for a FlexAttention node. */
int eval_run_flex_attention(EvalBody *b, const Op *op, const Tensor *const *ins, Tensor **outs);

#endif
