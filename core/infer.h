/* infer.h - element type and shape inference over a whole model.
 *
 * infer_model() walks every graph in order (subgraphs inside the operation
 * that holds them, seeing the facts of the outer scopes) and records for each
 * value a Fact: element type, rank and symbolic dims (dim.h), and for small
 * integer tensors computed from shapes their contents (onnx calls this data
 * propagation: Shape -> Gather -> Concat -> Reshape). The facts live in a
 * side table owned by the run, keyed by Var, so the IR itself is untouched;
 * each operation's rule comes from the op registry (ops.h).
 *
 * Where a rule cannot tell, the fact stays unknown (dtype 0, rank -1) or the
 * dim becomes a fresh symbol: a fact is never a guess. Declared types
 * (graph inputs, value_info, graph outputs) seed the graph inputs, fill in
 * what inference leaves unknown, and are checked: a declared static dim,
 * rank or type that differs from the inferred one is a conflict. */
#ifndef PPQ_INFER_H
#define PPQ_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dim.h"
#include "graph.h"

/* What inference knows about one value. */
typedef struct InferFact {
    int32_t dtype; /* ONNX element type; 0 unknown */
    int rank;      /* -1 unknown */
    Dim *dims;     /* rank entries, never NULL entries */
    /* Integer contents, row-major, when known (small int tensors); entries
     * may be NULL where one element is unknown. NULL: contents unknown. */
    Dim *value;
    size_t n_value;
} InferFact;

/* A declared tensor type with the names of its symbolic dims. */
typedef struct InferDecl {
    int32_t dtype;           /* 0: none declared */
    int rank;                /* -1: no shape */
    const int64_t *dims;     /* -1 where symbolic or absent */
    const char *const *names; /* dim_param per dim, or NULL entries */
} InferDecl;

/* Decodes the declared type of a graph input/output or value_info entry
 * from its encoded ValueInfoProto (only onnx/ knows the format; see
 * onnx/decl.h). Returns 0, or -1 when it cannot (then TypeInfo is used). */
typedef int (*InferDeclFn)(void *ctx, Arena *a, Bytes wire, InferDecl *out);

typedef struct InferOptions {
    InferDeclFn decl; /* NULL: Var.type (symbolic dims without names) */
    void *decl_ctx;
} InferOptions;

/* A declared type the inferred one contradicts, or an operation whose
 * inputs break its rule (incompatible broadcast, bad attribute). */
typedef struct InferIssue {
    const char *subject; /* tensor or node */
    const char *detail;
} InferIssue;

typedef struct InferRun InferRun;

/* Runs inference on m. NULL (with d set) only when out of memory. */
InferRun *infer_model(Model *m, const InferOptions *o, Diag *d);
void infer_free(InferRun *r);

/* The fact of v, or NULL when nothing is known. */
const InferFact *infer_fact(const InferRun *r, const Var *v);
DimTable *infer_dims(const InferRun *r);
/* Conflicts and rule violations, in graph order. */
const InferIssue *infer_issues(const InferRun *r, size_t *n);
/* Operation types with no rule (registry entry for their domain/opset),
 * each once, as "domain:Type" or "Type" for the default domain. */
const char *const *infer_unknown_ops(const InferRun *r, size_t *n);

#endif
