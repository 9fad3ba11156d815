/* de_inplace.c - pass "de-inplace": a name written by more than one node
 * (invalid SSA, as some converters emit for in-place operations) is versioned.
 *
 * The loader keeps each write as its own variable and links every reader to
 * the write before it. Here every earlier write gets a fresh name (x_1, ...)
 * while the last keeps the name, so graph outputs and readers after the last
 * write see no change. */
#include <stdio.h>

#include "params.h"
#include "passes.h"

static int pass_de_inplace(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    Model *m = g->model;
    for (size_t i = 0; i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (!v->shadowed || v->removed)
            continue;
        const char *old = v->name, *name = model_fresh_value_name(m, v->name);
        if (!name || var_rename(v, name))
            return diag_set(d, PPQ_EINTERNAL, "pass de-inplace failed on value '%s'", old);
        char what[512];
        snprintf(what, sizeof what, "%s -> %s", old, name);
        model_note(m, "renamed", what);
    }
    return 0;
}

const Pass de_inplace_pass = {
    .name = "de-inplace",
    .help = "rename values written by more than one node (restore SSA)",
    .on_by_default = true,
    .run = pass_de_inplace,
    .facts = FACTS_NONE,
    .on_shadowed = true,
};
