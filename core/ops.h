/* ops.h - op rules for shape inference: the schema, and what a rule may call.
 *
 * One OpSchema per (domain, type, since-version): the bounds on its input
 * and output counts and infer(), which reads the input facts and the
 * attributes and sets each output's fact. ops_lookup() picks the entry with
 * the greatest since-version not above the model's opset for the domain, as
 * onnx resolves an operator. Each ops_*.c file holds one family of rules and
 * exports its table; ops.c gathers them.
 *
 * A rule returns 0. It leaves an output unknown when it cannot tell, and
 * calls infer_bad() (which records an issue and returns -1) when the inputs
 * break the operator's contract; the walker then forgets that node's
 * outputs. */
#ifndef PPQ_OPS_H
#define PPQ_OPS_H

#include "facts.h"

typedef struct InferCtx InferCtx;
typedef int (*OpInferFn)(InferCtx *c);

enum { OPS_VARIADIC = 0xffff };

struct OpSchema {
    const char *domain; /* "" for the default domain (ai.onnx) */
    const char *type;
    int since;
    uint16_t min_in, max_in, min_out, max_out;
    OpInferFn infer;
};
typedef struct OpSchema OpSchema;

typedef struct OpTable {
    const OpSchema *entries;
    size_t n;
} OpTable;

/* The families (one file each). */
extern const OpTable ops_elementwise_table, ops_conv_table, ops_shape_table,
    ops_reduce_table, ops_resize_table, ops_control_table, ops_quant_rnn_table,
    ops_generate_table, ops_select_table, ops_sequence_table, ops_signal_table,
    ops_text_train_table, ops_contrib_table;


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
