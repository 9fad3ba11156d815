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
