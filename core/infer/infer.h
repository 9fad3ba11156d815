/* infer.h - element type and shape inference over a whole model.
 *
 * infer_model() walks every graph in order (subgraphs inside the operation
 * that holds them, seeing the facts of the outer scopes) and records for each
 * value a fact (facts.h): element type, rank and symbolic dims, and for small
 * integer tensors computed from shapes their contents (onnx calls this data
 * propagation: Shape -> Gather -> Concat -> Reshape). Each operation's rule
 * (rule.h) comes from the lookup the caller passes: the op registry's
 * ops_rule() (core/ops/ops_registry.h), which inference itself does not
 * know, since the rules are written against it.
 *
 * Where a rule cannot tell, the fact stays unknown (dtype 0, rank -1) or the
 * dim becomes a fresh symbol: a fact is never a guess. Declared types
 * (graph inputs, value_info, graph outputs) seed the graph inputs, fill in
 * what inference leaves unknown, and are checked: a declared static dim,
 * rank or type that differs from the inferred one is a conflict. */
#ifndef PPQ_INFER_H
#define PPQ_INFER_H

#include "facts.h"

typedef struct InferRule InferRule;

/* Finds the rule of operator type in domain ("" for ai.onnx) at opset: the
 * one with the greatest since-version not above it, as onnx resolves an
 * operator; NULL when there is none (the node's outputs stay unknown). The
 * rule must live as long as the process. */
typedef const InferRule *(*InferLookupFn)(const char *domain, const char *type, int64_t opset);

/* Runs inference on m with the rules lookup finds. NULL (with d set) only
 * when out of memory; free the result with infer_free(). */
InferRun *infer_model(Model *m, Diag *d, InferLookupFn lookup);

#endif
