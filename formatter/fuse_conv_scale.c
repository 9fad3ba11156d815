/* fuse_conv_scale.c - pass "fuse-conv-scale": Conv/ConvTranspose/Gemm ->
 * Mul(constant) folds the factor into the weight and bias.
 *
 * Only when the producer's output feeds nothing but the Mul, and the factor
 * broadcasts as one value per output channel (shape [1,C,1,1], [C,1,1], a
 * single value, or [C] for Gemm: as fuse-bias's addend) in the weight's
 * type. y = k_c * (W x + b) = (k_c W) x + k_c b: the weights of channel c and
 * its bias are scaled (in double, stored in the weight's type, computed
 * while written, affine.c). A factor that is not finite, or a folded
 * value that would overflow the weight's type, keeps the Mul, with a
 * warning. The Mul's output name is then produced by the Conv/Gemm. */
#include <math.h>

#include "match.h"
#include "affine.h"
#include "params.h"
#include "passes.h"

/* The per-channel factors of the Mul's constant t, or a reason in *why. */
static double *scale_factors(const Linear *l, const Tensor *t, Arena *a, const char **why)
{
    double *k = arena_array(a, (size_t)l->channels, sizeof *k);
    if (!k) {
        *why = NULL;
        return NULL;
    }
    for (int64_t c = 0; c < l->channels; c++) {
        k[c] = channel_value(t, c);
        if (!isfinite(k[c])) {
            *why = "its factor is not finite";
            return NULL;
        }
    }
    *why = NULL;
    return k;
}

/* Folds mul into l; 1 when it is kept (warned), -1 on failure. */
static int fuse_one(const Linear *l, Op *mul, const Tensor *t)
{
    Model *m = l->op->graph->model;
    const char *label = op_label(mul), *why;
    if (!graph_takes_new_params(l->op->graph)) {
        model_warn(m, label, "not folded: %s", NO_NEW_PARAMS);
        return 1;
    }
    if (!graph_output_move_keeps_order(mul, l->op->outputs[0])) {
        model_warn(m, label, "not folded: %s", WRITTEN_BETWEEN);
        return 1;
    }
    double *k = scale_factors(l, t, &m->arena, &why);
    if (!k) {
        if (!why)
            return -1;
        model_warn(m, label, "not folded: %s", why);
        return 1;
    }
    int fits = linear_fold_fits(l, k, NULL, label, m, &m->arena);
    if (fits)
        return fits;
    if (linear_fold(l, k, NULL, &m->arena) || graph_remove_op_into_output(mul, l->op->outputs[0]))
        return -1;
    model_note(m, "folded", label);
    return 0;
}

static int fuse_conv_scale_step(PassCtx *pc, Op *op)
{
    Linear l;
    if (!op_is_linear(op) || op->n_outputs != 1)
        return 0;
    Op *mul = match_next(op->outputs[0], "Mul");
    if (!mul || mul->n_outputs != 1 || sparse_input_blocks(op, 1, "not folded") ||
        sparse_input_blocks(mul, 0, "not folded") || operand_default_blocks(op, mul) ||
        !linear_producer(op, &l))
        return 0;
    Var *other = match_other(mul, op->outputs[0]);
    const Tensor *t = other ? param_numeric(other) : NULL;
    if (!t || t->dtype != l.w->dtype || !per_channel_shape(t, l.channels, l.rank))
        return 0;
    const char *label = op_label(mul);
    if (fuse_one(&l, mul, t) < 0)
        return pass_failed_on(pc, label);
    return 0;
}

static int pass_fuse_conv_scale(PassCtx *pc)
{
    return pass_each_op(pc, fuse_conv_scale_step);
}

const Pass fuse_conv_scale_pass = {
    .name = "fuse-conv-scale",
    .help = "fold Mul(per-channel constant) after Conv/ConvTranspose/Gemm into it",
    .on_by_default = true,
    .run = pass_fuse_conv_scale,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"Conv", "ConvTranspose", "Gemm", NULL},
};
