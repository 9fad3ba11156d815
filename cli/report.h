/* report.h - --report (text or JSON on stderr), warnings, and --print. */
#ifndef PPQ_REPORT_H
#define PPQ_REPORT_H

#include <stdio.h>

#include "../core/graph.h"
#include "options.h"

/* Warnings from the change log, one line each, unless quiet. */
void report_warnings(const Model *m, FILE *f);
void report_text(const Model *m, FILE *f);
void report_json(const Model *m, const Options *o, FILE *f);
/* The graph (and its subgraphs) as an aligned table. */
void print_graph(const Graph *g, FILE *f);

#endif
