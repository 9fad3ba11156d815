/* dedup_initializers.c - pass "dedup-initializers" (off by default): two
 * initializers of one graph with equal element type, shape and bytes become
 * one; the readers of the later one read the first. Exporters write a
 * weight once per module that holds it (tied embeddings, repeated constant
 * masks), and the file then carries it twice.
 *
 * It undoes split-params on purpose, so the command line turns split-params
 * off when this pass is asked for (api/options.c); a quantizer that
 * calibrates per consumer wants split-params instead. Never merged: an
 * initializer that is also a graph input (a default a caller may override)
 * or output, a sparse one, one whose bytes are computed only while written,
 * one written again later (not SSA), a quantized model's scales and zero
 * points (each Q/DQ pair keeps its own). Each initializer's bytes are read once
 * (hashed), and a candidate pair compared byte for byte. */
#include <string.h>

#include "../core/ir/hashtab.h"
#include "params.h"
#include "passes.h"

static bool dedup_candidate(const Var *v)
{
    const Tensor *t = v->param;
    return !v->removed && t && t->data && !t->sparse && !v->is_input && !v->n_output_lists &&
           !v->shadowed && dtype_is_known(t->dtype) && t->dtype != DT_STRING &&
           !param_read_by_quantized(v);
}

static uint64_t tensor_hash(const Tensor *t)
{
    uint64_t h = hash_word(hash_word(HASH_START, (uint64_t)t->dtype), t->ndims);
    h = hash_bytes(h, t->dims, t->ndims * sizeof *t->dims);
    return hash_bytes(h, t->data, t->nbytes);
}

static bool same_tensor(const void *stored, const void *val)
{
    const Tensor *a = ((const Var *)stored)->param, *b = ((const Var *)val)->param;
    return a->dtype == b->dtype && a->ndims == b->ndims && a->nbytes == b->nbytes &&
           !memcmp(a->dims, b->dims, a->ndims * sizeof *a->dims) &&
           (a->data == b->data || !memcmp(a->data, b->data, a->nbytes));
}

static int pass_dedup_initializers(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    HashTab t;
    if (hashtab_init(&t, g->n_params))
        return diag_set(d, PPQ_EINTERNAL, "out of memory (dedup-initializers)");
    for (size_t i = 0; i < g->n_params; i++) {
        Var *v = g->params[i];
        if (!dedup_candidate(v))
            continue;
        Var *keep = hashtab_find_or_add(&t, tensor_hash(v->param), v, same_tensor);
        if (!keep || !readers_may_move_to(keep))
            continue;
        const char *name = v->name;
        var_replace_all_uses(v, keep);
        if (graph_remove_param(v) == 0)
            model_note(g->model, "merged into an equal initializer", name);
    }
    hashtab_free(&t);
    return 0;
}

const Pass dedup_initializers_pass = {
    .name = "dedup-initializers",
    .help = "merge equal initializers (turns split-params off)",
    .on_by_default = false,
    .run = pass_dedup_initializers,
    .facts = FACTS_NONE,
    .acts_on = NULL,
};
