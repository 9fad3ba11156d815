/* rule.h - a shape-inference rule: what it is to the driver (InferRule,
 * which infer_model gets from the lookup its caller passes, infer.h) and
 * what it may call (defined in rule.c): reading the input facts, constants
 * and integer contents, setting the output facts, recording a broken rule,
 * broadcasting, and inferring a subgraph.
 *
 * A rule returns 0. It leaves an output unknown when it cannot tell, and
 * calls infer_bad() (which records an issue and returns -1) when the inputs
 * break the operator's contract; the walker then forgets that node's
 * outputs. The rules themselves live in the op registry (core/ops/). */
#ifndef PPQ_INFER_RULE_H
#define PPQ_INFER_RULE_H

#include "facts.h"

typedef struct InferCtx InferCtx;
typedef int (*OpInferFn)(InferCtx *c);

/* An input or output count bound meaning "any number". */
enum { INFER_VARIADIC = 0xffff };

/* An operator's rule at one since-version: the bounds on its input and
 * output counts, and the function that infers its outputs. */
typedef struct InferRule {
    int since;
    uint16_t min_in, max_in, min_out, max_out;
    OpInferFn infer;
} InferRule;

/* Whether a node with n_in inputs and n_out outputs is within r's bounds. */
static inline bool infer_rule_counts_ok(const InferRule *r, size_t n_in, size_t n_out)
{
    return n_in >= r->min_in && (r->max_in == INFER_VARIADIC || n_in <= r->max_in) &&
           n_out >= r->min_out && (r->max_out == INFER_VARIADIC || n_out <= r->max_out);
}

/* --- the context a rule sees --- */
struct InferCtx {
    InferRun *run;
    const Op *op;
    DimTable *dt;
    int64_t opset; /* of the op's domain */
    const InferFact **in; /* n_in entries; NULL for an omitted input */
    size_t n_in;
    InferFact *out; /* n_out entries, unknown on entry */
    size_t n_out;
};

/* Input i's fact; an absent input, an unknown value or one that is not a
 * tensor (a sequence, an optional) reads as unknown. */
const InferFact *infer_in(const InferCtx *c, size_t i);
/* Input i's fact whatever its kind (facts.h), for the rules of sequence
 * and optional operators. */
const InferFact *infer_in_any(const InferCtx *c, size_t i);
bool infer_has_in(const InferCtx *c, size_t i);
/* Input i's rank, or -1. */
int infer_in_rank(const InferCtx *c, size_t i);
/* The constant tensor behind input i (initializer or Constant output). */
const Tensor *infer_in_const(const InferCtx *c, size_t i);
/* Reads input i's integer contents into vals (at most cap): the count, or
 * -1 unless every entry is a known constant. */
long infer_in_ints(const InferCtx *c, size_t i, int64_t *vals, size_t cap);

/* An uninitialised dims array for rank entries (the run's arena). */
Dim *infer_dims_new(InferCtx *c, int rank);
/* Sets output i: dtype (0 leaves it unknown), rank (-1: unknown) and dims
 * (copied; NULL with rank >= 0 gives fresh symbols). */
int infer_set(InferCtx *c, size_t i, int32_t dtype, int rank, const Dim *dims);
/* The same with dims made by infer_dims_new for this output: kept, not
 * copied (a broadcast's shape, one per elementwise node). */
int infer_set_own(InferCtx *c, size_t i, int32_t dtype, int rank, Dim *dims);
int infer_set_dtype(InferCtx *c, size_t i, int32_t dtype);
/* Output i gets input j's type and shape (a tensor's). */
int infer_copy(InferCtx *c, size_t i, size_t j);
/* Output i gets f: its kind, dtype, rank and dims (copied; no contents). */
int infer_set_fact(InferCtx *c, size_t i, const InferFact *f);
/* Output i gets constant tensor t's type, shape and (small integer)
 * contents. */
int infer_set_tensor(InferCtx *c, size_t i, const Tensor *t);
/* Output i's integer contents (n entries, copied; NULL entries allowed). */
int infer_set_value(InferCtx *c, size_t i, const Dim *vals, size_t n);
/* Records that the node's inputs break its rule; returns -1. */
int infer_bad(InferCtx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Normalises a possibly negative axis against rank; -1 when out of range. */
int infer_axis(int64_t axis, int rank);

/* Multidirectional (numpy) broadcasting of n shapes into out (rank set);
 * -1 (issue recorded) when two static dims disagree. */
int infer_broadcast(InferCtx *c, const InferFact *const *ins, size_t n, InferFact *out);

/* Infers subgraph g with its inputs bound to ins (n facts; NULL entries or
 * missing ones fall back to the declared types), then returns its output
 * facts through infer_fact(). */
int infer_subgraph(InferCtx *c, Graph *g, const InferFact *const *ins, size_t n);
const InferFact *infer_fact_of(const InferCtx *c, const Var *v);

/* What fresh symbols made for op are named after: its name, else its
 * first output's. */
const char *infer_origin(const Op *op);
/* Product of dims [from, to) of f. */
Dim infer_dims_product(InferCtx *c, const InferFact *f, int from, int to);

#endif
