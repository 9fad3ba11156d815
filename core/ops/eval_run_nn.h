/* eval_run_nn.h - kernels only the reference interpreter (eval_run.c) uses. */
#ifndef PPQ_EVAL_RUN_NN_H
#define PPQ_EVAL_RUN_NN_H

#include "eval.h"

/* The interpreter's own kernel for an op the registry has none for, or NULL. */
OpEvalFn eval_run_kernel(const char *domain, const char *type);

#endif
