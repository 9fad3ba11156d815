/* pass.h - the pass registry and the driver that runs a pass over a model.
 *
 * A pass is a function over one graph; the driver calls it on every subgraph
 * first and then on the graph that holds them, records what it changed under
 * the pass's name, and forgets removed nodes afterwards. Order in the registry
 * is the pipeline order (docs/ARCHITECTURE.md, "The pipeline"). */
#ifndef PPQ_PASS_H
#define PPQ_PASS_H

#include <stdbool.h>

#include "../core/ir/graph.h"
#include "passes.h"


/* What a pass reads from shape inference (value_fact and friends). */
typedef enum PassFacts {
    FACTS_NONE,  /* nothing */
    FACTS_ROUND, /* the facts of the round's start (made by the first such pass) */
    FACTS_FRESH, /* facts of the graph as it is now (remade when a pass changed it);
                  * such a pass only writes declarations, which make no work for
                  * another pass: its changes alone call for no further round */
    FACTS_SETTLE, /* fresh facts, and the pass runs again on them at once while its
                   * last run changed the graph: what fold turns into a constant
                   * lets inference compute more values, which fold can then take
                   * (Swin-T needed six rounds of the whole pipeline for that) */
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
     * graph. NULL: it always runs. */
    const char *const *acts_on;
} Pass;

/* The registered passes, in pipeline order. */
const Pass *pass_list(size_t *n);
const Pass *pass_find(const char *name);
/* Runs p over m and its subgraphs with the options opt (NULL: the
 * defaults); with verify, checks the IR afterwards. */
int pass_run(const Pass *p, Model *m, const PassOptions *opt, bool verify, Diag *d);

enum { PIPELINE_MAX_ROUNDS = 8 };

/* Optional observers of a pipeline run (timing, progress, -v lines). */
typedef struct PipelineHooks {
    void (*round_start)(void *ctx);
    void (*pass_start)(void *ctx, const Pass *p);
    void (*pass_end)(void *ctx, size_t index); /* index in pass_list() */
    void *ctx;
} PipelineHooks;

typedef struct PipelineOptions {
    const bool *enabled; /* enabled[i] for pass_list()[i]; NULL: every pass */
    bool verify;         /* check the IR first and after every pass */
    const PipelineHooks *hooks; /* may be NULL */
    PassOptions pass;           /* handed to every pass */
} PipelineOptions;

/* The library's entry point: runs the enabled passes in registry order, and
 * the whole list again while a round changes the model, at most
 * PIPELINE_MAX_ROUNDS times (one pass can make work for an earlier one:
 * fuse-bn leaves a Conv and a bias Add for fuse-bias; rerunning is what
 * makes formatting idempotent). Shape inference runs when a pass that reads
 * facts comes up (Pass.facts), at most once per round unless a pass wants
 * them fresh. On failure returns the code, with the message in d and the
 * failing pass in *failed (when failed is not NULL; NULL for the first
 * check). */
int pass_pipeline(Model *m, const PipelineOptions *o, const Pass **failed, Diag *d);

#endif
