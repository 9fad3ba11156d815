/* cut.c - --inputs/--outputs (cut.h): the main graph between given values.
 *
 * A cut input that a node computes becomes a graph input of the same name
 * (the node's output takes a fresh name; its readers read the input), typed
 * as declared or as shape inference finds it on the whole model; the graph
 * outputs become the cut outputs; then pass isolated removes what no longer
 * leads to an output, and the graph inputs nothing reads go. */
#include "cut.h"

#include <string.h>

#include "../core/infer/infer.h"
#include "../core/ops/ops_registry.h"
#include "params.h"
#include "pass.h"

/* The main graph's value called name (a usage error naming the nearest
 * value when there is none). */
static Var *cut_value(Graph *g, const char *name, const char *option, Diag *d)
{
    Var *v = namemap_get(&g->by_name, name);
    if (v && !v->removed)
        return v;
    const char *near = NULL;
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < g->n_vars; i++) {
        size_t dist = g->vars[i]->removed ? SIZE_MAX : diag_edit_distance(name, g->vars[i]->name);
        if (dist < best) {
            best = dist;
            near = g->vars[i]->name;
        }
    }
    if (near && best * 3 <= strlen(near) + 1)
        diag_set(d, PPQ_EUSAGE, "%s: no value '%s' in the main graph; did you mean '%s'?",
                 option, name, near);
    else
        diag_set(d, PPQ_EUSAGE, "%s: no value '%s' in the main graph", option, name);
    return NULL;
}

/* v's type: as declared, else as inference found it. */
static int cut_type(Model *m, const Var *v, TypeInfo *t, Diag *d)
{
    const InferFact *f = value_fact(v);
    if (v->param) {
        *t = (TypeInfo){v->param->dtype, (int)v->param->ndims, v->param->dims, NULL};
        return 0;
    }
    if (v->type.elem_type) {
        *t = v->type;
        return 0;
    }
    if (f && f->dtype)
        return value_type_from_fact(&m->arena, infer_dims(m->facts), f, t)
                   ? diag_set(d, PPQ_EINTERNAL, "out of memory")
                   : 0;
    return diag_set(d, PPQ_EINPUT, "cannot cut at '%s': shape inference finds no type for it",
                    v->name);
}

/* The value v (computed by a node) becomes a graph input of its name. */
static int cut_input(Model *m, Var *v, TypeInfo t, Diag *d)
{
    const char *name = v->name, *old = model_fresh_value_name(m, name);
    Var *in = old && !var_rename(v, old) ? graph_new_var(m->graph, name) : NULL;
    if (!in)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    in->type = t;
    var_replace_all_uses(v, in);
    return graph_add_input(m->graph, in, (Bytes){0}) ? diag_set(d, PPQ_EINTERNAL, "out of memory")
                                                     : 0;
}

static int cut_inputs(Model *m, const char *const *names, size_t n, Diag *d)
{
    for (size_t i = 0; i < n; i++) {
        Var *v = cut_value(m->graph, names[i], "--inputs", d);
        TypeInfo t;
        if (!v)
            return d->code;
        if (v->param)
            return diag_set(d, PPQ_EUSAGE, "--inputs: '%s' is an initializer, not a value a "
                            "node computes", names[i]);
        if (!v->is_input && (cut_type(m, v, &t, d) || cut_input(m, v, t, d)))
            return d->code;
    }
    return 0;
}

static int cut_outputs(Model *m, const char *const *names, size_t n, Diag *d)
{
    Graph *g = m->graph;
    Var *vs[n ? n : 1];
    TypeInfo ts[n ? n : 1];
    for (size_t i = 0; i < n; i++)
        if (!(vs[i] = cut_value(g, names[i], "--outputs", d)) || cut_type(m, vs[i], &ts[i], d))
            return d->code;
    for (size_t i = 0; n && i < g->n_outputs; i++)
        graph_remove_output(g, i);
    for (size_t i = 0; i < n; i++) {
        if (!vs[i]->type.elem_type && !vs[i]->param)
            vs[i]->type = ts[i];
        if (graph_add_output(g, vs[i], (Bytes){0}))
            return diag_set(d, PPQ_EINTERNAL, "out of memory");
    }
    return 0;
}

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* The graph inputs nothing reads any more go; one still read that the
 * cut does not name is an error when inputs were named. Initializers
 * listed as inputs (IR < 4) stay: their entries must. */
static int prune_inputs(Model *m, const char *const *names, size_t n, Diag *d)
{
    Graph *g = m->graph;
    for (size_t i = 0; i < g->n_inputs; i++) {
        Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || v->param || listed(names, n, v->name))
            continue;
        if (!v->n_uses && !v->n_output_lists)
            graph_remove_input(g, i);
        else if (n)
            return diag_set(d, PPQ_EINPUT, "the cut needs graph input '%s', which is not "
                            "among --inputs", v->name);
    }
    return 0;
}

int model_cut(Model *m, const char *const *inputs, size_t n_inputs,
              const char *const *outputs, size_t n_outputs, Diag *d)
{
    infer_free(m->facts);
    if (!(m->facts = infer_model(m, d, ops_rule)))
        return d->code;
    PassCtx pc = {m->graph, &(PassOptions){0}, d, "isolated"};
    int rc = cut_inputs(m, inputs, n_inputs, d) || cut_outputs(m, outputs, n_outputs, d) ||
             pass_find("isolated")->run(&pc) || prune_inputs(m, inputs, n_inputs, d);
    infer_free(m->facts); /* stale now: the pipeline infers again */
    m->facts = NULL;
    graph_compact(m->graph);
    if (!rc)
        model_note(m, "cut", "main graph");
    return rc ? d->code : 0;
}

void model_cut_finish(Model *m, const char *const *inputs, size_t n_inputs)
{
    Diag ignored = {0}; /* nothing unread is refused: only unread inputs go */
    prune_inputs(m, inputs, n_inputs, &ignored);
}
