/* facts.h - what shape inference knows, per value: the fact table of one
 * inference run (infer.h runs it; the rules in core/ops/ops_*.c read and
 * write it through the rule context, rule.h).
 *
 * A fact is an element type, a rank and symbolic dims (dim.h), plus the
 * contents of small integer tensors computed from shapes. The facts live in
 * the run's arena; each Var points at its own (Var.fact), stamped with the
 * run's number so that a fact of an earlier, freed run is never read. The
 * pointer is the run's only state in the IR: a hash table keyed by Var was a
 * tenth of a million-node run's time in cache misses. The struct below is
 * shared by the inference modules only; users see the accessor functions. */
#ifndef PPQ_FACTS_H
#define PPQ_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dim.h"
#include "../ir/graph.h"

/* What a value is: a tensor, a sequence of tensors, an optional tensor or
 * an optional sequence. For the others, dtype, rank and dims describe the
 * tensors inside (every element of a sequence); a dim of a sequence's
 * elements may be NULL where the elements differ. */
enum {
    FACT_TENSOR = TYPE_TENSOR,
    FACT_SEQUENCE = TYPE_SEQUENCE,
    FACT_OPTIONAL = TYPE_OPTIONAL,
    FACT_OPTIONAL_SEQUENCE = TYPE_OPTIONAL_SEQUENCE
};

/* What inference knows about one value. */
typedef struct InferFact {
    int32_t dtype; /* ONNX element type; 0 unknown */
    int rank;      /* -1 unknown */
    Dim *dims;     /* rank entries, never NULL entries for a tensor */
    /* Integer contents, row-major, when known (small int tensors); entries
     * may be NULL where one element is unknown. NULL: contents unknown. */
    Dim *value;
    size_t n_value;
    int kind; /* FACT_TENSOR, ... */
} InferFact;

/* A declared type the inferred one contradicts, or an operation whose
 * inputs break its rule (incompatible broadcast, bad attribute). */
typedef struct InferIssue {
    const char *subject; /* tensor or node */
    const char *detail;
} InferIssue;

typedef struct InferRun InferRun;

/* The fact of v, or NULL when nothing is known. */
const InferFact *infer_fact(const InferRun *r, const Var *v);
DimTable *infer_dims(const InferRun *r);
/* Conflicts and rule violations, in graph order. */
const InferIssue *infer_issues(const InferRun *r, size_t *n);
/* Operation types with no rule (registry entry for their domain/opset),
 * each once, as "domain:Type" or "Type" for the default domain. */
const char *const *infer_unknown_ops(const InferRun *r, size_t *n);
void infer_free(InferRun *r);

/* --- shared by the inference modules --- */

/* Integer tensors up to this many elements carry their contents. */
enum { FACTS_MAX_VALUE = 64 };

/* A key and its value side by side: a lookup in a table far larger than
 * the caches then costs one cache miss, not two. */
enum { FACTS_RECENT = 8 };

typedef struct PtrSlot {
    const void *key;
    void *val;
} PtrSlot;

typedef struct PtrMap {
    PtrSlot *slots;
    size_t cap, len;
} PtrMap;

struct InferRun {
    Model *m;
    Arena arena;
    DimTable *dt;
    /* the walker, for rules that infer a subgraph (infer.c sets it) */
    int (*walk)(InferRun *r, Graph *g, const InferFact *const *ins, size_t n);
    uint32_t id;    /* facts are Var.fact where Var.fact_run is id */
    PtrMap decls;   /* Var -> declared InferFact */
    PtrMap visited; /* Graph -> itself, once walked */
    InferIssue *issues;
    size_t n_issues, cap_issues;
    const char **unknown;
    size_t n_unknown, cap_unknown;
    NameMap unknown_set;
    /* facts_of_shape's last facts, most of a model's parameters in a few shapes */
    const InferFact *recent[FACTS_RECENT];
    unsigned next_recent;
    /* where the rules come from (infer_model's lookup, infer.h) */
    const struct InferRule *(*lookup)(const char *domain, const char *type, int64_t opset);
    /* the last node's rule, by its interned type and domain (infer.c) */
    const char *last_type, *last_domain;
    int64_t last_opset;
    const struct InferRule *last_rule;
    bool oom;
};

extern const InferFact facts_unknown; /* dtype 0, rank -1 */

/* A new, empty run for m (NULL when out of memory). */
InferRun *facts_new(Model *m);
void *facts_map_get(const PtrMap *m, const void *k);
int facts_map_put(PtrMap *m, const void *k, void *v);
/* n elements of size in the run's arena; NULL (run marked oom) on failure. */
void *facts_alloc(InferRun *r, size_t n, size_t size);
void facts_issue(InferRun *r, const char *subject, const char *detail);
void facts_unknown_op(InferRun *r, const Op *op);
/* A copy of f in the run's arena (dims and contents included). */
InferFact *facts_dup(InferRun *r, const InferFact *f);
bool facts_known(const InferFact *f);
/* Makes f (kept, not copied) v's fact in this run. */
void facts_set(InferRun *r, const Var *v, const InferFact *f);
/* Records f (copied) as v's fact, unless f knows nothing. */
void facts_store(InferRun *r, const Var *v, const InferFact *f);
/* The same keeping f's dims and contents arrays, which must be the run's
 * own and never change (facts_from_tensor's): an initializer's fact is
 * made once per run, a million times on a million-node model. */
void facts_store_shared(InferRun *r, const Var *v, const InferFact *f);
bool facts_dtype_is_int(int32_t t);
/* Element i of an integer tensor (with data) as int64. */
int64_t facts_tensor_int(const Tensor *t, size_t i);
/* Type, shape and (small integer) contents of a constant tensor. */
void facts_from_tensor(InferRun *r, const Tensor *t, InferFact *f);
/* The fact of a tensor whose contents are not part of it (float weights,
 * large tensors): its type and shape, one stored fact shared by the tensors
 * of one recent type and shape. NULL when the contents count (small integer
 * tensors: facts_from_tensor) or out of memory. */
const InferFact *facts_of_shape(InferRun *r, const Tensor *t);

#endif
