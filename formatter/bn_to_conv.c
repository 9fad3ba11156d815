/* bn_to_conv.c - pass "bn-to-conv": a BatchNormalization left alone becomes a
 * depthwise Conv with a 1x...x1 kernel (group = C), so the quantizer sees one
 * kind of affine layer.
 *
 * The kernel rank follows the input's rank (N, C, d1..dk -> k ones), from
 * shape inference (value_rank). The weight
 * and bias take the data's element type (a float16 BN may keep float32
 * statistics; Conv needs one type). When the rank or the data's type is
 * unknown, the rank is below 3 (Conv needs a spatial axis), the type is not
 * one Conv takes, or a factor does not fit that type (float16 overflow),
 * the BN stays and the report says why. */
#include "affine.h"
#include "params.h"
#include "passes.h"

/* Removes bn's statistics (inputs 1..4, now detached) that nothing else
 * reads, as isolated would later: their names leave the graph's map before
 * the new weight and bias take theirs, so a million conversions never hold
 * both in it. */
static void remove_unread_statistics(Var *const *stats)
{
    for (int i = 0; i < 4; i++)
        if (stats[i] && graph_remove_param(stats[i]) == 0)
            model_note_var(stats[i]->graph->model, "removed initializer", stats[i]);
}

/* Makes bn a Conv with weight k and bias s (one per channel) in its place:
 * a million conversions would otherwise add a million nodes beside the
 * ones they replace. */
static int become_conv(Op *bn, int rank, int32_t dtype, const double *k, const double *s,
                       int64_t channels)
{
    Graph *g = bn->graph;
    Arena *a = &g->model->arena;
    int64_t dims[8] = {channels, 1, 1, 1, 1, 1, 1, 1}, ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    Tensor *w = tensor_new(a, dtype, (size_t)rank, dims), *b = tensor_new(a, dtype, 1, dims);
    if (!w || !b || op_drop_outputs(bn, 1))
        return -1;
    for (int64_t c = 0; c < channels; c++) {
        tensor_set_f64(w, (size_t)c, k[c]);
        tensor_set_f64(b, (size_t)c, s[c]);
    }
    Var *stats[4] = {bn->inputs[1], bn->inputs[2], bn->inputs[3], bn->inputs[4]};
    op_drop_inputs(bn, 1);
    remove_unread_statistics(stats);
    Var *wv = graph_new_param(g, param_base_name(bn, "_weight"), w);
    Var *bv = graph_new_param(g, param_base_name(bn, "_bias"), b);
    if (!wv || !bv || op_recreate_as(bn, "Conv") || op_append_input(bn, wv) ||
        op_append_input(bn, bv) || !op_set_attr_int(bn, "group", channels) ||
        !op_set_attr_ints(bn, "kernel_shape", ones, (size_t)rank - 2))
        return -1;
    return 0;
}

/* The input's channel count (axis 1) when known, else -1. */
static int64_t input_channels(const Var *x)
{
    int64_t c = value_dim(x, 1);
    if (c >= 0)
        return c;
    Linear l;
    if (x->producer && linear_producer(x->producer, &l))
        return l.channels;
    return -1;
}

/* Why bn cannot become a Conv, or NULL when it can. */
static const char *obstacle(const Op *bn, int rank, int32_t dtype, int64_t channels)
{
    int64_t declared = input_channels(bn->inputs[0]);
    if (declared >= 0 && declared != channels)
        return "its parameters do not have one value per input channel";
    if (!dtype)
        return "the element type of its input is unknown";
    if (rank < 0)
        return "the rank of its input is unknown";
    if (rank < 3)
        return "its input has no spatial axis (rank < 3)";
    if (rank > 8)
        return "its input rank is above 8";
    if (dtype != DT_FLOAT && dtype != DT_DOUBLE && dtype != DT_FLOAT16)
        return "Conv does not take its input's dtype";
    if (!graph_takes_new_params(bn->graph))
        return NO_NEW_PARAMS;
    return NULL;
}

/* Why the factors cannot be the Conv's weight and bias in dtype, or NULL. */
static const char *factor_obstacle(int32_t dtype, const double *k, const double *s,
                                   int64_t channels)
{
    if (!factors_finite(k, s, channels))
        return "its factors scale/sqrt(var+epsilon) are not finite";
    for (int64_t c = 0; c < channels; c++)
        if (!dtype_holds(dtype, k[c]) || !dtype_holds(dtype, s[c]))
            return dtype == DT_FLOAT16 ? "its factors overflow float16, its input's type"
                                       : "its factors overflow its input's type";
    return NULL;
}

static int pass_bn_to_conv(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    enum { AHEAD = 8 }; /* operations whose names are prefetched ahead */
    Model *m = g->model;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *next = i + AHEAD < g->n_ops ? g->ops[i + AHEAD] : NULL;
        if (next && op_is(next, "BatchNormalization")) {
            param_base_name_prefetch(next, "_weight");
            param_base_name_prefetch(next, "_bias");
            for (size_t k = 1; k < next->n_inputs && k < 5; k++) /* statistics removed */
                if (next->inputs[k])
                    graph_prefetch_name(g, next->inputs[k]->name, false);
        }
        Op *bn = g->ops[i];
        if (!op_is(bn, "BatchNormalization") || !bn_inference_form(bn) || !bn->inputs[0] ||
            sparse_input_blocks(bn, 1, "kept BatchNormalization"))
            continue;
        const Tensor *scale = param_numeric(bn->inputs[1]);
        int rank = value_rank(bn->inputs[0]);
        int32_t dtype = value_dtype(bn->inputs[0]);
        int64_t channels = scale ? tensor_numel(scale) : 0;
        double *k, *s;
        const char *why = obstacle(bn, rank, dtype, channels), *fed = overridable_input(bn, 1);
        if (fed) {
            model_warn(m, op_label(bn), "kept BatchNormalization: '%s' is a graph input with a "
                       "default, which a caller may override", fed);
            continue;
        }
        if (!why && bn_factors(&m->arena, bn, channels, &k, &s))
            why = "its parameters are not constant float values of one per channel";
        if (!why)
            why = factor_obstacle(dtype, k, s, channels);
        if (why) {
            model_warn(m, op_label(bn), "kept BatchNormalization: %s", why);
            continue;
        }
        const char *label = op_label(bn);
        if (become_conv(bn, rank, dtype, k, s, channels))
            return diag_set(d, PPQ_EINTERNAL, "pass bn-to-conv failed on node '%s'", label);
        model_note(m, "converted", label);
    }
    return 0;
}

const Pass bn_to_conv_pass = {
    .name = "bn-to-conv",
    .help = "turn a remaining BatchNormalization into a depthwise 1x1 Conv",
    .on_by_default = true,
    .run = pass_bn_to_conv,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"BatchNormalization", NULL},
};
