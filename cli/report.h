/* report.h - --report (text or JSON on stderr), warnings, and --print. */
#ifndef PPQ_REPORT_H
#define PPQ_REPORT_H

#include <stdio.h>

#include "../core/graph.h"
#include "options.h"

/* What main measured while running the passes, for the JSON report. */
typedef struct RunStats {
    bool ran[MAX_PASSES]; /* by registry index */
    double ms[MAX_PASSES];
} RunStats;

/* Warnings from the change log, one "ppqfmt: warning: ..." line each. */
void report_warnings(const Model *m, FILE *f);
/* One line per pass that changed something; its warnings under it unless
 * with_warnings is false (-q). */
void report_text(const Model *m, bool with_warnings, FILE *f);
/* One JSON document (schema in report.c); it always holds the warnings. */
void report_json(const Model *m, const Options *o, const RunStats *st, FILE *f);
/* The graph (and its subgraphs) as an aligned table. */
void print_graph(const Graph *g, FILE *f);

#endif
