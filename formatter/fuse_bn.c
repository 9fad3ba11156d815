/* fuse_bn.c - pass "fuse-bn": an inference-form BatchNormalization after a
 * Conv/ConvTranspose/Gemm, when it alone reads that operation's output, is
 * folded into the operation's weight and bias. BN computes y = k_c * x + s_c
 * per channel c (k = scale/sqrt(var+eps), s = B - mean*k), a per-channel
 * affine map, which affine.c absorbs (and checks it fits the weight's type). */
#include "affine.h"
#include "params.h"
#include "passes.h"

static int fuse_bn_step(PassCtx *pc, Op *bn)
{
    Graph *g = pc->g;
    Model *m = g->model;
    if (!op_is(bn, "BatchNormalization") || !bn_inference_form(bn))
        return 0;
    Var *x = bn->inputs[0];
    Linear l;
    if (!x || sole_consumer(x) != bn || !x->producer || x->producer->graph != g)
        return 0;
    if (op_is_linear(x->producer) && (sparse_input_blocks(x->producer, 1, "not folded") ||
                                      sparse_input_blocks(bn, 1, "not folded")))
        return 0;
    const char *fed = NULL;
    if (op_is_linear(x->producer) && !(fed = overridable_input(bn, 1)))
        fed = overridable_input(x->producer, 1);
    if (fed) {
        model_warn(m, op_label(bn), "not folded: '%s' is a graph input with a default, "
                   "which a caller may override", fed);
        return 0;
    }
    if (!linear_producer(x->producer, &l))
        return 0;
    if (!graph_takes_new_params(g)) {
        model_warn(m, op_label(bn), "not folded: %s", NO_NEW_PARAMS);
        return 0;
    }
    if (!graph_output_move_keeps_order(bn, x)) {
        model_warn(m, op_label(bn), "not folded: %s", WRITTEN_BETWEEN);
        return 0;
    }
    double *k, *s;
    if (bn_factors(&m->arena, bn, l.channels, &k, &s)) {
        model_warn(m, op_label(bn), "not folded: its parameters are not %lld constant "
                   "float values each", (long long)l.channels);
        return 0;
    }
    const char *label = op_label(bn);
    if (!factors_finite(k, s, l.channels)) {
        model_warn(m, label, "not folded: its factors scale/sqrt(var+epsilon) are not "
                   "finite");
        return 0;
    }
    int fits = linear_fold_fits(&l, k, s, label, m, &m->arena);
    if (fits < 0)
        return diag_set(pc->d, PPQ_EINTERNAL, "out of memory in pass fuse-bn");
    if (fits)
        return 0;
    if (linear_fold(&l, k, s, &m->arena) || op_drop_outputs(bn, 1) ||
        graph_remove_op_into_output(bn, x))
        return pass_failed_on(pc, label);
    model_note(m, "folded", label);
    return 0;
}

static int pass_fuse_bn(PassCtx *pc)
{
    return pass_each_op(pc, fuse_bn_step);
}

const Pass fuse_bn_pass = {
    .name = "fuse-bn",
    .help = "fold BatchNormalization into the Conv/ConvTranspose/Gemm before it",
    .on_by_default = true,
    .run = pass_fuse_bn,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"BatchNormalization", NULL},
};
