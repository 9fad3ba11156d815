/* ops_registry.h - every op rule (ops.h), found by (domain, type) and the
 * model's opset for the domain: the entry with the greatest since-version
 * not above it, as onnx resolves an operator. ops_rule() is the lookup
 * infer_model() takes (core/infer/infer.h). */
#ifndef PPQ_OPS_REGISTRY_H
#define PPQ_OPS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct OpSchema OpSchema;
typedef struct InferRule InferRule;
typedef struct EvalCtx EvalCtx;
typedef int (*OpEvalFn)(EvalCtx *c);
typedef struct OpKernel OpKernel;
typedef struct OpSignature OpSignature;

/* NULL when no version of the op is at most opset. */
const OpSchema *ops_lookup(const char *domain, const char *type, int64_t opset);
/* The same entry as the driver sees it (an InferLookupFn, core/infer/infer.h). */
const InferRule *ops_rule(const char *domain, const char *type, int64_t opset);
/* Every entry, sorted by domain, type and since-version: for i from 0 until
 * NULL (listings and tests). */
const OpSchema *ops_at(size_t i);
/* The kernel (core/ops/eval.h) of the op at opset: the entry with the greatest
 * since-version not above it, when the op has a rule there too and a node
 * of n_in inputs and n_out outputs is within the rule's bounds (a kernel
 * reads the inputs its op must have); NULL when it cannot be evaluated. */
OpEvalFn ops_kernel(const char *domain, const char *type, int64_t opset, size_t n_in,
                    size_t n_out);
/* ops_kernel's kernel when the fold pass may run it: NULL also for a kernel
 * only the reference interpreter runs (its family's interpreter_only). */
OpEvalFn ops_fold_kernel(const char *domain, const char *type, int64_t opset, size_t n_in,
                         size_t n_out);
/* The signature (core/ops/ops_signatures.h: how the version changed, its
 * formal inputs and outputs and their element types) of the ai.onnx op
 * `type` at `opset`: that of the version the op resolves to there, or NULL
 * when onnx defines no version of it at most opset. */
const OpSignature *ops_signature(const char *type, int64_t opset);
/* Every kernel, sorted as ops_at's entries: for i from 0 until NULL. Each
 * one's since-version is an entry's (the kernel is that entry's and the
 * following ones', up to the op's next kernel). */
const OpKernel *ops_kernel_at(size_t i);

#endif
