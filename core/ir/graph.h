/* graph.h - BaseGraph, the IR every pass works on.
 *
 * A Model owns one arena and a main Graph. A Graph holds Operations in file
 * order and Variables by name; a Variable knows its producer and every use
 * (operation + input slot), including uses by operations inside subgraphs of
 * nested If/Loop/Scan bodies, which name it from the outer scope. Parameters
 * (initializers) are Variables with a Tensor value.
 *
 * Passes change the graph only through the edit functions below; each keeps
 * the use lists exact, and graph_verify() proves it. Every object remembers the
 * bytes it was read from (`wire`) and whether it changed, so the writer can put
 * back untouched parts exactly as they were. */
#ifndef PPQ_GRAPH_H
#define PPQ_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "log.h"
#include "namemap.h"
#include "tensor.h"

typedef struct Graph Graph;
typedef struct Op Op;
typedef struct Var Var;

/* ONNX AttributeProto.AttributeType values. */
typedef enum AttrType {
    ATTR_UNDEFINED = 0,
    ATTR_FLOAT = 1,
    ATTR_INT = 2,
    ATTR_STRING = 3,
    ATTR_TENSOR = 4,
    ATTR_GRAPH = 5,
    ATTR_FLOATS = 6,
    ATTR_INTS = 7,
    ATTR_STRINGS = 8,
    ATTR_TENSORS = 9,
    ATTR_GRAPHS = 10,
    ATTR_SPARSE_TENSOR = 11,
    ATTR_SPARSE_TENSORS = 12,
    ATTR_TYPE_PROTO = 13,
    ATTR_TYPE_PROTOS = 14,
} AttrType;

typedef struct Attr {
    const char *name;
    AttrType type;
    float f;
    int64_t i;
    Bytes s;
    size_t n; /* element count of the list kinds below */
    float *floats;
    int64_t *ints;
    Bytes *strings;
    Tensor **tensors; /* ATTR_TENSOR uses tensors[0] */
    Graph **graphs;   /* ATTR_GRAPH uses graphs[0] */
    Bytes wire;       /* encoded AttributeProto; empty for new attributes. A pass
                       * that changes a value clears it so the writer re-encodes. */
} Attr;

typedef struct Use {
    Op *op;
    size_t slot;
} Use;

/* Element type and shape as declared by a graph input/output or value_info. */
typedef struct TypeInfo {
    int32_t elem_type; /* 0 when unknown or not a tensor */
    int rank;          /* -1 when unknown */
    int64_t *dims;     /* -1 for a symbolic or unknown dimension */
    /* The dim_param of each symbolic dimension (NULL entries where it has
     * none); NULL when no dimension has one. */
    const char **dim_params;
} TypeInfo;

/* Counts and slots are 32-bit: a million-node graph holds millions of these. */
struct Var {
    const char *name;
    Graph *graph;     /* the scope that defines it */
    Op *producer;     /* NULL for inputs, parameters and undefined names */
    Use *uses;
    Tensor *param;    /* the initializer value, or NULL */
    Var *shadows;     /* the earlier write of its name it hides (graph_shadow_var) */
    /* What shape-inference run number fact_run (see Model.fact_epoch) knows
     * of it: a lookup is one load, not a probe of a table as large as the
     * graph. Written and read only by core/infer/facts.c. */
    const struct InferFact *fact;
    uint32_t fact_run;
    uint32_t producer_slot;
    uint32_t n_uses, cap_uses;
    uint32_t value_info_at; /* 1 + index of its first value_info entry; 0: none */
    unsigned n_output_lists; /* how many graph output lists name it (its graph's, or a
                         * subgraph's naming it from the outer scope) */
    bool is_input;    /* listed in the graph's inputs */
    bool removed;     /* removed from the graph (as Op.removed) */
    bool shadowed;    /* its name was written again by a later node (non-SSA input) */
    bool value_info_dup; /* named by more than one value_info entry */
    TypeInfo type;
};

struct Op {
    const char *type;
    const char *name;
    const char *domain;
    Graph *graph;
    Var **inputs; /* NULL entry: an omitted optional input ("") */
    Var **outputs; /* NULL entry: an omitted optional output */
    Attr *attrs;
    /* 32-bit like Var's: 24 bytes less on each of a large graph's nodes */
    uint32_t n_inputs, cap_inputs;
    uint32_t n_outputs, cap_outputs;
    uint32_t n_attrs, cap_attrs;
    size_t scratch; /* per-algorithm temporary (topological index) */
    bool removed;
    bool changed; /* inputs, outputs, names or attributes differ from wire */
    Bytes wire;   /* encoded NodeProto; empty for new operations */
};

/* An operation inserted after another that is not the last: it joins
 * g->ops at the next graph_compact (an insertion stays O(1)). */
typedef struct PendingOp {
    Op *after;
    Op *op;
} PendingOp;

/* A graph input, output or value_info entry: the variable and its encoded
 * ValueInfoProto (kept verbatim while the name is unchanged). */
typedef struct ValueInfo {
    Var *var;     /* NULL for a value_info entry naming no value of the graph */
    bool removed; /* dropped from the output */
    bool retyped; /* the type is written from var->type, not copied from wire */
    Bytes wire;
} ValueInfo;

/* What a declared type that is not a tensor type holds: the kinds of
 * shape inference's facts (facts.h). */
enum { TYPE_TENSOR = 0, TYPE_SEQUENCE = 1, TYPE_OPTIONAL = 2, TYPE_OPTIONAL_SEQUENCE = 3 };

/* A value declared (graph input, value_info or output) as a sequence of
 * tensors, an optional tensor or an optional sequence: type describes the
 * tensors inside. Var.type stays without element type for these. */
typedef struct HeldDecl {
    Var *var;
    int kind; /* TYPE_SEQUENCE, TYPE_OPTIONAL or TYPE_OPTIONAL_SEQUENCE */
    TypeInfo type;
} HeldDecl;

struct Graph {
    struct Model *model;
    Graph *parent; /* NULL for the main graph */
    Op *owner;     /* the operation whose attribute holds this graph */
    const char *name;
    Op **ops;
    size_t n_ops, cap_ops;
    Var **vars; /* every variable defined here, in creation order */
    size_t n_vars, cap_vars;
    NameMap by_name;
    Var **params; /* initializers, in file order */
    size_t n_params, cap_params;
    PendingOp *pending; /* see PendingOp */
    size_t n_pending, cap_pending;
    ValueInfo *inputs, *outputs, *value_info;
    size_t n_inputs, n_outputs, n_value_info;
    size_t cap_inputs, cap_outputs, cap_value_info;
    HeldDecl *held; /* declared sequence and optional types, in file order */
    size_t n_held, cap_held;
    bool has_removed; /* an op or variable was removed since graph_compact */
    bool params_removed; /* graph_remove_param left entries of params to drop */
    bool changed;
    Bytes wire; /* encoded GraphProto */
};

typedef struct Opset {
    const char *domain;
    int64_t version;
} Opset;

/* A model-local function (ModelProto.functions), written out as its bytes.
 * What is loaded of it is what raising the default-domain opset must know:
 * its opset imports and its default-domain nodes, those of the subgraphs
 * inside it too. */
typedef struct FunctionNode {
    const char *type, *name;
} FunctionNode;

typedef struct ModelFunction {
    const char *name, *domain;
    Opset *opsets;
    size_t n_opsets, cap_opsets;
    FunctionNode *nodes; /* default-domain nodes only */
    size_t n_nodes, cap_nodes;
    bool changed; /* its opset imports changed: written from opsets */
    Bytes wire;   /* the encoded FunctionProto */
} ModelFunction;

/* A file whose read-only mapping the model's bytes point into. The writer
 * copies unchanged bytes straight from the file (copy_file_range) instead of
 * reading them through memory. */
typedef struct MappedFile {
    const uint8_t *base;
    size_t len;
    int fd;
} MappedFile;

/* How many live values, and nodes, of the model carry each name (a count
 * stored as the pointer; absent: 0), while counted: graph_inline_subgraph's
 * bookkeeping between two model_compact calls. */
typedef struct InlineNames {
    NameMap values, nodes;
    bool counted;
} InlineNames;

/* model_mapped_copy's buffer: the bytes at `of` of the mappings (n of them)
 * when `of` is not NULL. The buffer is kept from one source to the next, as
 * fresh pages for each would cost a page fault per 4 KiB again. */
typedef struct MappedCopy {
    uint8_t *buf;
    size_t cap;
    const uint8_t *of;
    size_t n;
} MappedCopy;

typedef struct Model {
    Arena arena;
    Graph *graph;
    int64_t ir_version;
    Opset *opsets;
    size_t n_opsets;
    ModelFunction *functions; /* in file order, in the arena */
    size_t n_functions, cap_functions;
    bool changed;  /* model-level fields (ir_version, opset_import, functions) changed */
    size_t n_op_edits; /* see model_op_edits */
    size_t n_training_info; /* ModelProto.training_info entries (kept as bytes) */
    bool drop_training_info; /* see model_drop_stale_training_info */
    /* One metadata_props entry to set (model_set_metadata); NULL: none. */
    const char *metadata_key, *metadata_value;
    bool oom;      /* an edit ran out of memory: the graph is not to be trusted */
    Bytes wire;    /* the whole input file */
    DeferredSet value_names; /* every value name ever used, for fresh names */
    DeferredSet node_names;  /* the same for node names */
    NameMap next_suffix; /* base name -> next suffix to try (fresh names) */
    Graph **all_graphs; /* every graph ever created, so model_free reaches them */
    size_t n_all_graphs, cap_all_graphs;
    ChangeLog log;
    NameMap warned; /* warnings already logged (pass, subject, text) */
    uint32_t fact_epoch; /* shape-inference runs so far: the last one's number (Var.fact_run) */
    /* What shape inference knows about the values, while the pass pipeline
     * runs (formatter/pass.c owns it; core/infer/facts.h reads it); else NULL. */
    struct InferRun *facts;
    NameMap interned; /* see model_intern */
    MappedFile *maps;
    size_t n_maps, cap_maps;
    /* Resources the loader holds for the model's lifetime (mapped external
     * data files); model_free calls release(release_ctx). */
    void (*release)(void *ctx);
    void *release_ctx;
    struct MappedCopy *copy; /* see model_mapped_copy; allocated by model_new */
    InlineNames inline_names; /* see graph_inline_subgraph */
    bool shadowed; /* some value was ever shadowed (graph_shadow_var) */
} Model;

/* --- building (used by the loader and by passes) --- */
Model *model_new(void);
/* training_info trains the parameters by name; once the passes folded,
 * split, renamed or removed any, its bindings point at nothing or at the
 * wrong tensor. The output is for inference: after any change it is dropped,
 * with a warning. Call after the passes. */
void model_drop_stale_training_info(Model *m);
/* Sets metadata_props[key] = value in the output (an entry of that key in
 * the input is replaced; the others stay). Both strings must outlive m. */
void model_set_metadata(Model *m, const char *key, const char *value);
void model_free(Model *m);
Graph *graph_new(Model *m, Graph *parent, Op *owner);
/* The variable visible under name from g: g's own, else an outer scope's. */
Var *graph_find_var(const Graph *g, const char *name);
/* Starts fetching from memory what looking name up in g, or defining it
 * there, reads first: a caller with several names at hand (a node's inputs,
 * a run of initializers) prefetches them all, then uses them, so that on a
 * graph far larger than the caches their misses overlap. Changes nothing. */
void graph_prefetch_name(const Graph *g, const char *name, bool defining);
/* Room in g's name map and the model's name lists for this many more values
 * and nodes (a loader's count of the fields to come): they then never grow
 * while it loads. -1 when out of memory. */
int graph_reserve_names(Graph *g, size_t values, size_t nodes);
/* Defines a new variable in g. Fails (NULL) if g already defines the name. */
Var *graph_new_var(Graph *g, const char *name);
/* Defines name again in g (a node writing a name already written): the
 * earlier variable is marked shadowed and lookups find the new one. When the
 * new one is dropped or renamed, the latest earlier write still present takes
 * the name back and is no longer shadowed. */
Var *graph_shadow_var(Graph *g, const char *name);
/* Renames a variable that is not part of its graph's interface (a subgraph
 * output naming it from the outer scope follows the new name). */
int var_rename(Var *v, const char *name);
/* One arena copy of s shared by every caller asking for the same text: for
 * the few strings a model repeats (operator types, domains, attribute names).
 * The result must not be written to. NULL when out of memory. */
const char *model_intern(Model *m, const char *s);
/* Prefetches (graph_prefetch_name) what defining the fresh value name
 * `ahead` calls after the next one would probe, when base has been taken
 * before and no name in between is: a pass making many copies of one value
 * (split-params) calls it before each. */
void graph_prefetch_fresh_name(const Graph *g, const char *base, size_t ahead);
/* A value name not used anywhere in the model: base, base_1, base_2, ... */
const char *model_fresh_value_name(Model *m, const char *base);
const char *model_fresh_node_name(Model *m, const char *base);
/* Appends a new operation after `after` (NULL: at the end of g). O(1): unless
 * `after` is NULL or g's last operation, the new one takes its place in g->ops
 * at the next graph_compact (which pass_run does after every pass); passes
 * iterating g->ops meanwhile do not visit it. */
Op *graph_insert_op(Graph *g, Op *after, const char *type, const char *name);
/* Room for exactly this many inputs, outputs and attributes, for a new op
 * whose counts are known (the loader): appending grows the lists by doubling,
 * which would hold up to four slots for one. -1 when out of memory. */
int op_reserve(Op *op, size_t n_inputs, size_t n_outputs, size_t n_attrs);
int op_append_input(Op *op, Var *v);
int op_append_output(Op *op, Var *v);
Attr *op_add_attr(Op *op, const char *name, AttrType type);
int graph_add_input(Graph *g, Var *v, Bytes wire);
int graph_add_output(Graph *g, Var *v, Bytes wire);
int graph_add_value_info(Graph *g, Var *v, Bytes wire);
/* Records v's declared sequence or optional type (kind TYPE_*). */
int graph_add_held_decl(Graph *g, Var *v, int kind, TypeInfo type);

/* model_note naming v, without a copy of the name (a value's name lives as
 * long as the model, renamed or removed): passes that note a million values. */
void model_note_var(Model *m, const char *action, const Var *v);

/* --- reading --- */
/* Whether an operation of m may have this type: false only when none ever
 * had (every operation's type is a model_intern string, and the intern
 * table only grows), so a pass acting on types that are all absent can be
 * skipped without a scan of the graphs. */
bool model_may_have_op_type(const Model *m, const char *type);
/* Is op a live standard ONNX operator of this type (default domain)? */
bool op_is(const Op *op, const char *type);
/* The opset version the model imports for a domain ("" or "ai.onnx": the
 * default one); 0 when it imports none. */
int64_t model_domain_opset(const Model *m, const char *domain);
/* The same in a list of imports (a function's); 0 when it has none. */
int64_t opsets_version(const Opset *opsets, size_t n, const char *domain);
int64_t model_opset(const Model *m);
Attr *op_attr(const Op *op, const char *name);
/* A Constant's value: its `value` tensor itself, or a new tensor in a for
 * the value_float(s), value_int(s) and value_string(s) forms; NULL with *why
 * for sparse_value, no attribute or several, and when out of memory. */
Tensor *op_constant_value(Arena *a, const Op *op, const char **why);
int64_t op_attr_int(const Op *op, const char *name, int64_t fallback);
/* The ints attribute name into v (at most cap): its length, or -1 when it is
 * absent, of another type or longer. */
long op_attr_ints(const Op *op, const char *name, int64_t *v, size_t cap);
/* The ints attribute name into v[n], or n times fallback when it is absent:
 * 0, or -1 when it is present with another length or type. */
int op_attr_ints_or(const Op *op, const char *name, int64_t *v, size_t n, int64_t fallback);
/* Copies an ATTR_INTS attribute's a->n values to v. An empty list has no
 * array, and memcpy from NULL is undefined even for 0 bytes. */
void attr_copy_ints(const Attr *a, int64_t *v);
float op_attr_float(const Op *op, const char *name, float fallback);
/* The i-th subgraph held by op's graph attributes, or NULL past the last:
 * for (size_t i = 0; (sub = op_subgraph(op, i)); i++) */
Graph *op_subgraph(const Op *op, size_t i);
/* A printable name: the node name, or "Type:first_output" for unnamed nodes. */
const char *op_label(const Op *op);

/* --- editing: each keeps producer and use lists exact --- */
/* Lists v (whose param the caller sets) last among g's initializers. -1 when
 * out of memory. */
int graph_append_param(Graph *g, Var *v);
/* Turns v into a parameter of its graph holding t (appended to initializers). */
Var *graph_add_param(Graph *g, const char *name, Tensor *t);
/* The same under t->name, which becomes the variable's name without a copy
 * (the loader's tensors: one copy of each initializer's name, not two). */
Var *graph_add_param_named(Graph *g, Tensor *t);
/* A new parameter for passes: a fresh name from base; under IR < 4 also a
 * main-graph input (NULL in a subgraph then, whose inputs are positional). */
Var *graph_new_param(Graph *g, const char *base, Tensor *t);
/* Gives parameter v a new value. */
void param_set_value(Var *v, Tensor *t);
/* Sets (replacing or adding) an attribute; the op is re-encoded. NULL when
 * out of memory. */
Attr *op_set_attr_int(Op *op, const char *name, int64_t v);
Attr *op_set_attr_float(Op *op, const char *name, float v);
Attr *op_set_attr_ints(Op *op, const char *name, const int64_t *v, size_t n);
Attr *op_set_attr_string(Op *op, const char *name, const char *v);
/* Removes an attribute if present. */
void op_remove_attr(Op *op, const char *name);
/* Changes the operator type (a renamed operator with the same semantics). */
int op_set_type(Op *op, const char *type);
/* Makes op a new operation of type (default domain) in its place, as
 * graph_insert_op after it + graph_replace_op would, without a second node:
 * its name, inputs and outputs stay (the caller changes them), its
 * attributes go, and it is written as a new node, keeping no field of its
 * original encoding (a doc_string described the old operator). For a rule
 * turning each of a million nodes into another operator (bn-to-conv).
 * -1 when out of memory (op unchanged then). */
int op_recreate_as(Op *op, const char *type);
/* Points input slot of op at v (NULL: omitted input). */
void op_set_input(Op *op, size_t slot, Var *v);
/* Every use of from, in any scope, becomes a use of to. Graph outputs are
 * names, not uses: they stay with `from`. */
void var_replace_all_uses(Var *from, Var *to);
/* Removes op. With repl, the uses of op's single output are first rewired to
 * repl. Fails (-1) if an output is still used or is a graph output. The op's
 * outputs are dropped. */
int graph_remove_op(Op *op, Var *repl);
/* Before IR version 4 every initializer must also be a graph input. */
bool model_params_are_inputs(const Model *m);
/* Whether g can take a new parameter: not a subgraph of an IR < 4 model (its
 * initializers must be its inputs, and a subgraph's inputs are fixed). */
bool graph_takes_new_params(const Graph *g);
/* Removes op (detaching its inputs) and makes each output i a parameter of
 * op's graph holding ts[i] (omitted outputs skipped), keeping names and
 * uses. Under IR < 4 each also becomes a main-graph input; in a subgraph of
 * such a model (positional inputs) it fails (-1) and changes nothing. -1 also
 * when out of memory. The replacement of pass constant and of folding. */
int op_outputs_to_params(Op *op, Tensor *const *ts);
/* Removes op (one output y) so that x, one of its inputs, becomes y: x's
 * producer writes y directly, x's other uses move to y, x is dropped, and
 * y keeps its name, uses and graph-output status. For an Identity this keeps
 * a graph output name; for a fusion (Conv -> BN) the fused producer takes
 * the name of the node it absorbed. Fails (-1, nothing changed) unless x is
 * produced by a node of op's graph and is not itself a graph output. */
int graph_remove_op_into_output(Op *op, Var *x);
/* Why x cannot take the place of op's output y there (the reason
 * graph_remove_op_into_output fails for a valid model), or MOVE_OK. */
typedef enum OutputMoveRefusal {
    MOVE_OK = 0,
    MOVE_X_IS_OUTPUT,      /* x is a graph output too */
    MOVE_X_IS_INPUT,       /* x is a graph input */
    MOVE_X_IS_INITIALIZER, /* x is an initializer */
    MOVE_X_OUTER_SCOPE,    /* x comes from an enclosing graph */
} OutputMoveRefusal;
OutputMoveRefusal graph_output_move_refusal(const Op *op, const Var *x);
/* Whether graph_remove_op_into_output(op, x) keeps the model's meaning: in a
 * model that still writes some name twice (de-inplace did not run), no node
 * between x's producer and op may write op's output name, or giving that
 * name to x's producer would put its definition before the other writer
 * (fuzz seed 696190019038). Always true in an SSA model. */
bool graph_output_move_keeps_order(const Op *op, const Var *x);
/* Drops op's outputs from index n on (all unused, none a graph output). */
int op_drop_outputs(Op *op, size_t n);
/* Detaches op's inputs from index n on and shortens its input list to n. */
void op_drop_inputs(Op *op, size_t n);
/* Sets the version the model imports for domain ("" for the default one),
 * adding the import when the model has none, and raises its IR version to
 * at least min_ir. -1 only when out of memory (nothing changed then). */
int model_set_opset(Model *m, const char *domain, int64_t version, int64_t min_ir);
/* The model's default-domain opset moved from `from` to `to`: every
 * model-local function importing the default domain on the `from` side of
 * `to` (below it when raising, above when lowering) now imports `to`, with
 * `action` noted on it. Callers checked first that no function node
 * changed meaning in between. */
void model_functions_follow_opset(Model *m, int64_t from, int64_t to, const char *action);
/* How many edits of an operation's inputs, outputs or attributes the model
 * has seen: two readings tell a pass whether a call changed anything. */
size_t model_op_edits(const Model *m);
/* Makes the writer encode every node and graph from the IR instead of
 * copying unchanged bytes (--rewrite: tests compare that with the input). */
void model_rewrite_all(Model *m);
/* Leaves value_info entry i of g out of the output (its value was removed). */
void graph_remove_value_info(Graph *g, size_t i);
/* Replaces op by repl (a new op without outputs): repl takes over op's
 * outputs with their names and uses, and op is removed. */
int graph_replace_op(Op *op, Op *repl);
/* Replaces sub's owner (an If, sub one of its branches) by sub's contents,
 * placed where the owner was (pending, as graph_insert_op's): sub's
 * operations, values, initializers and value_info move into the owner's
 * graph as the same objects, so reads of outer values keep their variables
 * and subgraphs nested in sub get the owner's graph as parent. A moved value
 * or node whose name a graph outside sub's owner defines gets a fresh one
 * (model_fresh_value_name, model_fresh_node_name). Owner output i becomes sub
 * output i: a moved node computing it writes the owner's output variable
 * (name, uses and graph-output status kept); an output sub takes from
 * elsewhere (an outer value, an initializer of sub, a value returned twice)
 * hands the owner output's readers to that value, or, when the owner output
 * is a graph output or that value's name is written again later, keeps its
 * name with a new Identity. The owner and its other subgraphs are removed.
 * The model's names are counted at the first call after model_compact and
 * kept up to date by the later ones, so a pass that inlines many subgraphs
 * costs O(model + the subgraphs it inlines); edits other than inlining
 * between two calls must go through fresh names (as every pass's do) or be
 * followed by model_compact.
 * 0, or -1 with *why saying why: refused with nothing changed (sub has
 * inputs, or another number of outputs than its owner, writes a name twice,
 * or has initializers its new graph cannot take: graph_takes_new_params),
 * or out of memory midway (m->oom set: the graph is not to be trusted). */
int graph_inline_subgraph(Graph *sub, const char **why);
/* Declares v's type as t (the arrays are kept, not copied) in its graph's
 * value_info: its entry is rewritten (other fields kept), else one is
 * appended. Graph inputs and outputs keep their own entries. */
int graph_set_value_type(Var *v, TypeInfo t);
/* Declares graph input `index` to have type t (fixing dynamic dims). */
void graph_retype_input(Graph *g, size_t index, TypeInfo t);
/* The same for graph output `index`. */
void graph_retype_output(Graph *g, size_t index, TypeInfo t);
/* Drops graph input `index` from the interface (its value must be read by
 * nothing by then), or graph output `index` (the value stays). */
void graph_remove_input(Graph *g, size_t index);
void graph_remove_output(Graph *g, size_t index);
/* Removes parameter v, which nothing reads and which is neither a graph
 * input nor a graph output, in O(1): its name leaves its graph's map at
 * once (a rule replacing each of a million parameters by new ones,
 * bn-to-conv, then never holds both), and the initializer list drops it at
 * the next graph_compact. -1, nothing changed, when v does not qualify. */
int graph_remove_param(Var *v);
/* Removes, in one sweep from the last parameter to the first, every
 * parameter nothing reads that is neither a graph input nor a graph output
 * and that drop(v, ctx) chooses (drop is called before the removal, so v's
 * name is still valid); the others stay. The variables go with them. Returns
 * how many. Linear in g's parameters, however many go. */
size_t graph_remove_params_where(Graph *g, bool (*drop)(Var *v, void *ctx), void *ctx);
/* Removes every live operation of g for which dead(op, ctx) is true: first
 * the inputs of all of them (and of their subgraphs) are detached, then each
 * is removed as graph_remove_op(op, NULL) would, so chosen operations may feed
 * each other. One whose output is a graph output or is still read by an
 * operation not chosen stays, detached (graph_remove_op refuses it): callers
 * choose operations nothing live reads. Each input's use list is swept once,
 * so the cost is linear in uses whatever the fan-out. Uses the operations'
 * scratch fields after asking dead(). -1 only when out of memory (nothing
 * changed then). */
int graph_remove_ops_where(Graph *g, bool (*dead)(const Op *op, void *ctx), void *ctx);
/* Forgets removed operations so n_ops counts live ones, and places inserted
 * ones (graph_insert_op). Uses the operations' scratch fields. */
void graph_compact(Graph *g);
/* graph_compact on every graph of m, and drops what edits cached for the
 * length of a pass (graph_inline_subgraph's name counts): pass_run calls it
 * after every pass. */
void model_compact(Model *m);
/* Reorders ops topologically, keeping file order where possible.
 * Fails (-1, diag set naming a node on the cycle) on a cycle. */
int graph_topo_sort(Graph *g, Diag *d);
/* The same check without reordering: -1 (PPQ_EINPUT) on a cycle. */
int graph_check_acyclic(Graph *g, Diag *d);
/* Checks every producer and use list against the operations (recursively);
 * returns 0 or -1 with a message naming the first inconsistency. */
int graph_verify(const Graph *g, Diag *d);

/* Conv and ConvTranspose compute in floating point only: the slot (0 data,
 * 1 weight, 2 bias) of op's first input whose element type (an
 * initializer's, else the declared one) is another, or -1 (also for any
 * other op). A model with such a node is not valid. */
int op_conv_non_float_input(const Op *op);
/* Every Conv/ConvTranspose of g (not of its subgraphs) passes
 * op_conv_non_float_input, or -1 with PPQ_EINPUT naming the first that does
 * not; `why` follows the input's type in the message. */
int graph_check_conv_types(const Graph *g, const char *why, Diag *d);

/* Calls fn on g and every nested subgraph, children before parents. */
int graph_walk_post(Graph *g, int (*fn)(Graph *, void *), void *ctx);

#endif
