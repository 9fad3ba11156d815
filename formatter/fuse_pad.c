/* fuse_pad.c - pass "fuse-pad": a constant-mode Pad that pads only spatial
 * axes, read by nothing but a Conv, AveragePool or MaxPool, becomes part of
 * that node's `pads` (summed with the pads it has).
 *
 * Only where the result is the same:
 * - Conv pads with zeros: the Pad value must be 0;
 * - AveragePool: padded zeros count in the average only with
 *   count_include_pad=1. A Pad value of 0 folds into a pool with
 *   count_include_pad=1, or into one with count_include_pad=0 and no pads of
 *   its own, which then gets count_include_pad=1 (the Pad's zeros were real
 *   data, counted). With ceil_mode=1 a window may run past the padding,
 *   where onnxruntime versions differ on the divisor: kept;
 * - MaxPool ignores its padding, as if it held -inf: the Pad value must be
 *   -inf (a 0 changes the maximum of all-negative windows), and a second
 *   output (indices into the padded tensor) must be unused.
 * The Pad's input rank must be at least 3, its pads non-negative (negative
 * pads crop), zero on the batch and channel axes, and the consumer's
 * auto_pad NOTSET. Pad-1/2 (attributes) and Pad-11 (inputs) are read; a
 * Pad-18 `axes` input is not (kept). */
#include <math.h>
#include <string.h>

#include "match.h"
#include "params.h"
#include "passes.h"

enum { PAD_MAX = 2 * 10 }; /* pads of up to rank 10 */

/* The Pad's pads (2 * rank values, copied to pads) and fill value; false when
 * not readable. */
static bool pad_read(const Op *pad, int64_t *pads, size_t *n, double *value)
{
    if (!match_attr_is(pad, "mode", "constant", true) || pad->n_outputs != 1)
        return false;
    const Attr *a = op_attr(pad, "pads");
    a = a ? a : op_attr(pad, "paddings"); /* Pad-1 */
    *value = 0;
    if (a) {
        if (a->type != ATTR_INTS || a->n > PAD_MAX)
            return false;
        attr_copy_ints(a, pads);
        *n = a->n;
        *value = op_attr_float(pad, "value", 0.0f);
        return pad->n_inputs == 1;
    }
    if (pad->n_inputs < 2 || pad->n_inputs > 3 || !pad->inputs[1])
        return false;
    const Tensor *t = param_numeric(pad->inputs[1]);
    if (!t || t->dtype != DT_INT64 || t->ndims != 1 || !t->data || t->dims[0] > PAD_MAX)
        return false;
    *n = (size_t)t->dims[0];
    memcpy(pads, t->data, *n * sizeof *pads); /* raw_data need not be aligned */
    return pad->n_inputs < 3 || !pad->inputs[2] || match_scalar(pad->inputs[2], value);
}

/* Are the pads non-negative, zero on axes 0 and 1, with a spatial axis? */
static bool pads_spatial(const int64_t *pads, size_t n)
{
    size_t rank = n / 2;
    if (n % 2 || rank < 3)
        return false;
    for (size_t i = 0; i < n; i++)
        if (pads[i] < 0 || ((i % rank) < 2 && pads[i]))
            return false;
    return true;
}

/* Why `next` cannot take a Pad of this value, or NULL. Sets *include when an
 * AveragePool must count padding from now on. */
static const char *consumer_obstacle(const Op *next, double value, bool *include)
{
    *include = false;
    if (!match_attr_is(next, "auto_pad", "NOTSET", true))
        return "its reader's auto_pad is not NOTSET";
    if (op_is(next, "Conv"))
        return value == 0 ? NULL : "its value is not 0, Conv's padding";
    if (op_is(next, "MaxPool")) {
        if (!(isinf(value) && value < 0))
            return "MaxPool ignores its padding (as -inf) but the Pad value is not -inf";
        bool indices = next->n_outputs > 1 && next->outputs[1];
        return indices ? "MaxPool's indices output would index the unpadded input" : NULL;
    }
    if (value != 0)
        return "its value is not 0, AveragePool's padding";
    if (op_attr_int(next, "ceil_mode", 0))
        return "AveragePool with ceil_mode=1 (windows past the padding)";
    if (op_attr_int(next, "count_include_pad", 0))
        return NULL;
    const Attr *own = op_attr(next, "pads");
    for (size_t i = 0; own && i < own->n; i++)
        if (own->ints[i])
            return "AveragePool has pads of its own and count_include_pad=0";
    *include = true;
    return NULL;
}

/* A pool's padding must stay below its kernel on every axis (onnxruntime
 * refuses the model otherwise); Conv has no such limit. */
static bool pool_pads_fit(const Op *next, const int64_t *sum, size_t k)
{
    if (op_is(next, "Conv"))
        return true;
    const Attr *ks = op_attr(next, "kernel_shape");
    if (!ks || ks->type != ATTR_INTS || ks->n != k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (sum[i] >= ks->ints[i] || sum[k + i] >= ks->ints[i])
            return false;
    return true;
}

/* next's pads plus the Pad's spatial pads (rank - 2 begins, then ends).
 * 1: not folded, its pads attribute has the wrong length; 2: not folded, a
 * pool's padding would reach its kernel size. */
static int fold(Op *pad, Op *next, const int64_t *pads, size_t rank, bool include)
{
    size_t k = rank - 2;
    int64_t sum[PAD_MAX] = {0};
    const Attr *own = op_attr(next, "pads");
    if (own && (own->type != ATTR_INTS || own->n != 2 * k))
        return 1;
    for (size_t i = 0; i < k; i++) {
        sum[i] = pads[2 + i] + (own ? own->ints[i] : 0);
        sum[k + i] = pads[rank + 2 + i] + (own ? own->ints[k + i] : 0);
    }
    if (!pool_pads_fit(next, sum, k))
        return 2;
    if (!op_set_attr_ints(next, "pads", sum, 2 * k) ||
        (include && !op_set_attr_int(next, "count_include_pad", 1)))
        return -1;
    op_set_input(next, 0, pad->inputs[0]);
    return graph_remove_op(pad, NULL);
}

static int fuse_pad_step(PassCtx *pc, Op *pad)
{
    Graph *g = pc->g;
    Model *m = g->model;
    int64_t pads[PAD_MAX];
    size_t n;
    double value;
    if (!op_is(pad, "Pad") || !pad->n_inputs || !pad->inputs[0] ||
        !readers_may_move_to(pad->inputs[0]) || !pad_read(pad, pads, &n, &value) ||
        !pads_spatial(pads, n))
        return 0;
    Op *next = sole_consumer(pad->outputs[0]);
    if (!next || next->graph != g || next->inputs[0] != pad->outputs[0] ||
        !(op_is(next, "Conv") || op_is(next, "AveragePool") || op_is(next, "MaxPool")))
        return 0;
    bool include;
    const char *why = consumer_obstacle(next, value, &include);
    if (why) {
        model_warn(m, op_label(pad), "not folded into '%s': %s", op_label(next), why);
        return 0;
    }
    const char *label = op_label(pad);
    int rc = fold(pad, next, pads, n / 2, include);
    if (rc > 0) {
        model_warn(m, label, "not folded into '%s': %s", op_label(next),
                   rc == 1 ? "its pads attribute does not have 2 values per spatial axis"
                           : "the pool's padding would reach its kernel size");
        return 0;
    }
    if (rc)
        return pass_failed_on(pc, label);
    model_note(m, "folded", label);
    return 0;
}

static int pass_fuse_pad(PassCtx *pc)
{
    return pass_each_op(pc, fuse_pad_step);
}

const Pass fuse_pad_pass = {
    .name = "fuse-pad",
    .help = "fold a zero (-inf for MaxPool) constant Pad into the Conv/pool reading it",
    .on_by_default = true,
    .run = pass_fuse_pad,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"Pad", NULL},
};
