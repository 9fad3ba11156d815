/* fuse_bias.c - pass "fuse-bias": Conv/ConvTranspose/Gemm -> Add(param) folds
 * the addend into the bias.
 *
 * Only when the producer's output feeds nothing but the Add, and the addend
 * broadcasts as one value per output channel (shape [1,C,1,1], [C,1,1], a
 * single value, or [C] for Gemm; [C] after a Conv would broadcast over the
 * last spatial axis, not the channels). An existing bias is summed with the
 * addend. The Add's output name is then produced by the Conv/Gemm. A sum
 * that overflows the bias's type (float16: beyond 65504) would turn finite
 * outputs into inf: then the Add stays, with a warning. */
#include <math.h>

#include "affine.h"
#include "params.h"
#include "passes.h"

/* The constant operand of add that is not x, or NULL. */
static const Tensor *addend(const Op *add, const Var *x)
{
    const Var *other = match_other(add, x);
    return other ? param_numeric(other) : NULL;
}

/* The first channel whose folded bias would overflow the bias's type though
 * both terms are finite, or -1 when every channel fits. */
static int64_t overflowing_channel(const Linear *l, const Tensor *d)
{
    for (int64_t c = 0; c < l->channels; c++) {
        double b = linear_bias(l, c), a = channel_value(d, c);
        if (isfinite(b) && isfinite(a) && !dtype_holds(l->w->dtype, b + a))
            return c;
    }
    return -1;
}

static int fold(const Linear *l, const Tensor *d, Arena *a)
{
    int64_t n = l->channels;
    Tensor *bias = tensor_new(a, l->w->dtype, 1, &n);
    if (!bias)
        return -1;
    for (int64_t c = 0; c < n; c++)
        tensor_set_f64(bias, (size_t)c, linear_bias(l, c) + channel_value(d, c));
    return linear_set_bias(l, bias);
}

static int fuse_bias_step(PassCtx *pc, Op *op)
{
    Graph *g = pc->g;
    Model *m = g->model;
    Linear l;
    Op *next = op_is_linear(op) && op->n_outputs == 1 ? sole_consumer(op->outputs[0]) : NULL;
    if (next && op_is(next, "Add") &&
        (sparse_input_blocks(op, 1, "not folded") || sparse_input_blocks(next, 0, "not folded") ||
         operand_default_blocks(op, next)))
        return 0;
    if (op->removed || !linear_producer(op, &l))
        return 0;
    Var *x = l.op->outputs[0];
    Op *add = sole_consumer(x);
    if (!add || !op_is(add, "Add") || add->graph != g || add->n_outputs != 1)
        return 0;
    const Tensor *t = addend(add, x);
    if (!t || t->dtype != l.w->dtype || !per_channel_shape(t, l.channels, l.rank))
        return 0;
    const char *label = op_label(add);
    if (!graph_takes_new_params(g)) {
        model_warn(m, label, "not folded: %s", NO_NEW_PARAMS);
        return 0;
    }
    if (!graph_output_move_keeps_order(add, x)) {
        model_warn(m, label, "not folded: %s", WRITTEN_BETWEEN);
        return 0;
    }
    int64_t c = overflowing_channel(&l, t);
    if (c >= 0) {
        model_warn(m, label, "not folded: the bias of channel %lld would overflow %s "
                   "(%g)", (long long)c, dtype_name(l.w->dtype),
                   linear_bias(&l, c) + channel_value(t, c));
        return 0;
    }
    if (fold(&l, t, &m->arena) || graph_remove_op_into_output(add, x))
        return pass_failed_on(pc, label);
    model_note(m, "folded", label);
    return 0;
}

static int pass_fuse_bias(PassCtx *pc)
{
    return pass_each_op(pc, fuse_bias_step);
}

const Pass fuse_bias_pass = {
    .name = "fuse-bias",
    .help = "fold Add(constant) after Conv/ConvTranspose/Gemm into the bias",
    .on_by_default = true,
    .run = pass_fuse_bias,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"Conv", "ConvTranspose", "Gemm", NULL},
};
