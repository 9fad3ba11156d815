/* pass.h - the pass registry and the driver that runs a pass over a model.
 *
 * A pass is a function over one graph; the driver calls it on every subgraph
 * first and then on the graph that holds them, records what it changed under
 * the pass's name, and forgets removed nodes afterwards. Order in the registry
 * is the pipeline order (docs/ARCHITECTURE.md, "The pipeline"). */
#ifndef PPQ_PASS_H
#define PPQ_PASS_H

#include <stdbool.h>

#include "../core/graph.h"

typedef int (*PassFn)(Graph *g, Diag *d);

typedef struct Pass {
    const char *name;
    const char *help; /* one line */
    bool on_by_default;
    PassFn run;
} Pass;

/* The registered passes, in pipeline order. */
const Pass *pass_list(size_t *n);
const Pass *pass_find(const char *name);
/* Runs p over m and its subgraphs; with verify, checks the IR afterwards. */
int pass_run(const Pass *p, Model *m, bool verify, Diag *d);

#endif
