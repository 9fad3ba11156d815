/* eval_pool.h - the pooling kernels of the reference interpreter
 * (eval_pool.c), looked up by eval_run_kernel (eval_run_nn.c). */
#ifndef PPQ_EVAL_POOL_H
#define PPQ_EVAL_POOL_H

#include "eval.h"

extern const OpKernelTable eval_pool_kernels;

#endif
