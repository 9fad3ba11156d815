/* split_params.c - pass "split-params": one parameter per use.
 *
 * A quantizer gives every weight its own scale, so a weight read by two nodes
 * must become two weights. The first use keeps the parameter; every further
 * use (a use inside a subgraph counts, as does a second slot of the same
 * node) gets a copy named w_1, w_2, ... The copies share the tensor in
 * memory and the writer emits each. An initializer that is also a graph input is a
 * default value a user may override: copies would not see the override, so
 * it stays shared and the report says so. A quantized model's scales and zero
 * points (what Q/DQ and QLinear nodes read) stay shared as the quantizer wrote
 * them: a Q/DQ pair reads one scale on purpose. */
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "passes.h"

static int split_one(Graph *g, Var *v)
{
    Model *m = g->model;
    size_t n = v->n_uses;
    Use *uses = malloc(n * sizeof *uses);
    if (!uses)
        return -1;
    Var **copies = malloc(n * sizeof *copies);
    if (!copies) {
        free(uses);
        return -1;
    }
    memcpy(uses, v->uses, n * sizeof *uses);
    size_t made = 1;
    enum { AHEAD = 8 }; /* copies whose names are prefetched ahead */
    for (; made < n; made++) {
        if (made + AHEAD < n)
            graph_prefetch_fresh_name(g, v->name, AHEAD);
        /* the copies hold v's tensor itself: tensors are not changed in
         * place (a new value is a new tensor, param_set_value), and the
         * writer encodes each initializer under its variable's name */
        Var *copy = graph_new_param(g, v->name, v->param);
        if (!copy) {
            model_warn(m, v->name, "kept shared: no copy can be added here (IR version %lld "
                       "lists initializers as inputs)", (long long)m->ir_version);
            break;
        }
        copies[made] = copy;
        model_note_var(m, "copied", copy);
    }
    /* Last use first: each is then the last entry of v's use list, so taking
     * it away costs O(1) however many uses v has. */
    for (size_t i = made; i-- > 1;)
        op_set_input(uses[i].op, uses[i].slot, copies[i]);
    free(copies);
    free(uses);
    return 0;
}

static int pass_split_params(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    size_t n = g->n_params; /* copies are appended: do not visit them */
    for (size_t i = 0; i < n; i++) {
        Var *v = g->params[i];
        if (v->n_uses < 2 || param_read_by_quantized(v))
            continue;
        if (v->is_input) {
            model_warn(g->model, v->name,
                       "kept shared: it is a graph input a user may override");
            continue;
        }
        if (split_one(g, v))
            return diag_set(d, PPQ_EINTERNAL, "out of memory in pass split-params");
    }
    return 0;
}

const Pass split_params_pass = {
    .name = "split-params",
    .help = "give every use of a shared initializer its own copy",
    .on_by_default = true,
    .run = pass_split_params,
    .facts = FACTS_NONE,
    .acts_on = NULL,
};
