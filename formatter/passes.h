/* passes.h - what a pass is: the row each pass's file exports (Pass), the
 * context it is run with (PassCtx) and the options it reads (PassOptions).
 *
 * A pass rewrites one graph; the driver (pass_run, pass.c) calls it on every
 * subgraph and then on the graph holding them. docs/ARCHITECTURE.md, "How to
 * add a pass", walks through writing one. */
#ifndef PPQ_PASSES_H
#define PPQ_PASSES_H

#include "../core/ir/graph.h"

/* Why a pass that would add a parameter leaves a subgraph of an IR < 4
 * model alone (graph_takes_new_params). */
#define NO_NEW_PARAMS "IR version < 4 needs new initializers as inputs, impossible in a subgraph"

/* What the command line tells the passes; 0 leaves a pass its default. */
typedef struct PassOptions {
    size_t fold_limit;        /* largest result fold computes, in bytes */
    size_t fold_growth;       /* how many times its inputs' size an Expand/Tile/
                               * ConstantOfShape result may be and still fold */
    size_t fold_growth_limit; /* such a result folds anyway up to this many bytes */
    int64_t opset_ceiling;    /* --target-opset: no pass raises the default-domain
                               * opset above it */
} PassOptions;

/* What a pass is handed: the graph it rewrites (the driver hands it every
 * subgraph first, then the graph holding them), the options, where an
 * error goes and the pass's name (for its messages). The model's facts and
 * change log are the graph's model's. */
typedef struct PassCtx {
    Graph *g;
    const PassOptions *opt;
    Diag *d;
    const char *name;
} PassCtx;

typedef int (*PassFn)(PassCtx *pc);

/* A pass's step on one operation: 0 (rewritten, or nothing to do), else the
 * error code (pass_failed_on). */
typedef int (*PassStep)(PassCtx *pc, Op *op);
/* Calls step on every operation of pc->g in order, those the steps append
 * included, until one fails: the loop of the passes that look at each
 * operation and rewrite where their pattern matches. */
int pass_each_op(PassCtx *pc, PassStep step);
/* A rewrite that ran out of memory half way: "pass NAME failed on node
 * 'label'" (the label taken before the rewrite, which may remove the op). */
int pass_failed_on(PassCtx *pc, const char *label);

/* What a pass reads from shape inference (value_fact and friends). */
typedef enum PassFacts {
    FACTS_NONE,  /* nothing */
    FACTS_ROUND, /* the facts of the round's start (made by the first such pass) */
    FACTS_FRESH, /* facts of the graph as it is now (remade when a pass changed it);
                  * such a pass only writes declarations, which make no work for
                  * another pass: its changes alone call for no further round */
    FACTS_SETTLE, /* fresh facts, and the pass runs again on them at once while its
                   * last run changed the graph: what fold turns into a constant
                   * lets inference compute more values, which fold can then take,
                   * without waiting a round of the whole pipeline for each step */
} PassFacts;

typedef struct Pass {
    const char *name;
    const char *help; /* one line */
    bool on_by_default;
    PassFn run;
    PassFacts facts;
    /* The operator types the pass acts on, NULL-terminated: while no
     * operation of the model has any of them (model_may_have_op_type) the
     * pipeline does not run it, which would change nothing and scan every
     * graph. NULL: it always runs (unless on_shadowed). */
    const char *const *acts_on;
    /* It acts only on values written twice (Model.shadowed), which no
     * operator type tells. */
    bool on_shadowed;
} Pass;

/* Each pass's file exports its row as `const Pass <name>_pass` (the name
 * with '_' for '-'); formatter/pass.c lists them in pipeline order. */

#endif
