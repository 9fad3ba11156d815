/* report.h - --report (text or JSON on stderr), warnings, -v, and --print. */
#ifndef PPQ_REPORT_H
#define PPQ_REPORT_H

#include <stdio.h>

#include "../core/ir/graph.h"
#include "../formatter/pass.h"
#include "check.h"
#include "options.h"

/* What the pipeline did over all its rounds (it runs again until a round
 * changes nothing), for -v and the JSON report: totals per pass. */
typedef struct RunStats {
    bool ran[MAX_PASSES]; /* by registry index */
    double ms[MAX_PASSES];
    int rounds;
    bool verbose;   /* -v, and stderr free for it (no JSON report) */
    double started; /* when the pass now running started, in ms */
    const CheckResult *check; /* --check's verdicts, NULL without --check */
} RunStats;

/* May messages other than the report go to stderr? Not with --report=json:
 * then stderr holds one JSON document and nothing else. */
bool report_stderr_free(const Options *o);
void report_stats_init(RunStats *st, const Options *o);
/* Observers for pass_pipeline, around each round and each pass: -v names
 * each pass once (in the first round), the status line shows it, the time
 * and the round count are added up. */
PipelineHooks report_pipeline_hooks(RunStats *st);

/* The options that have no effect, as warnings (not with -q or JSON). */
void report_option_warnings(const Options *o, FILE *f);
/* Warnings from the change log, one "ppqfmt: warning: ..." line each. */
void report_warnings(const Model *m, FILE *f);
/* One line per pass that changed something, in pipeline order, with totals
 * over all rounds; its warnings under it unless with_warnings is false (-q). */
void report_text(const Model *m, bool with_warnings, FILE *f);
/* One JSON document (schema in report.c); it always holds the warnings. */
void report_json(const Model *m, const Options *o, const RunStats *st, FILE *f);
/* The graph (and its subgraphs) as an aligned table. */
void print_graph(const Graph *g, FILE *f);

#endif
