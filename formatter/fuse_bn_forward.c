/* fuse_bn_forward.c - pass "fuse-bn-forward": BatchNormalization -> Conv
 * folds forward into the Conv's weight and bias.
 *
 * BN gives y_c = s_c * x_c + t_c per channel c of the Conv's input (s =
 * scale/sqrt(var+eps), t = B - mean*s). An output of a Conv without padding
 * sums W[o,c,k] * y over whole windows of its input, so
 *     W'[o,c,k] = W[o,c,k] * s_c,    b'[o] = b[o] + sum_{c,k} W[o,c,k] * t_c
 * give the same result (with groups, output o reads the input channels of
 * its group). Padding breaks this: a padded zero is not normalized, so the
 * fold holds only for a Conv with no padding (pads all 0, auto_pad NOTSET or
 * VALID), or when every t_c is 0 (zeros stay zeros). A ConvTranspose is not
 * folded: its border outputs sum fewer inputs, so the shift is not one
 * value per output channel.
 *
 * Only an inference-form BN whose output feeds nothing but the Conv's data
 * input. The weight keeps its type; a fold whose weight or bias would
 * overflow it, or a weight holding inf or NaN (whose product with a shift
 * the bias would turn into NaN), keeps the BN with a warning. The bias is
 * summed in double reading the weight once, a block at a time; the scaled
 * weight is computed while written (conv_scale_inputs, affine.c). The pass
 * runs after fuse-bn, which folds a BN backward into the Conv before it,
 * and before bn-to-conv, which would turn this BN into a Conv. */
#include <math.h>
#include <string.h>

#include "match.h"
#include "affine.h"
#include "params.h"
#include "passes.h"

/* Does conv read its input without padding? */
static bool conv_unpadded(const Op *conv)
{
    if (!match_attr_is(conv, "auto_pad", "NOTSET", true) &&
        !match_attr_is(conv, "auto_pad", "VALID", false))
        return false;
    const Attr *p = op_attr(conv, "pads");
    if (!p)
        return true;
    if (p->type != ATTR_INTS)
        return false;
    for (size_t i = 0; i < p->n; i++)
        if (p->ints[i])
            return false;
    return true;
}

static bool all_zero(const double *t, int64_t n)
{
    for (int64_t c = 0; c < n; c++)
        if (t[c] != 0)
            return false;
    return true;
}

/* Reads the weight once, in element order: bias[o] += sum W[o,j,k] * t_c and
 * mx[c] = the largest |W| reading input channel c = group(o) * Cg + j. 1
 * when an element is not finite, -1 when out of memory. */
static int forward_sums(const Linear *l, const double *t, double *bias, double *mx)
{
    const Tensor *w = l->w;
    size_t outs = (size_t)w->dims[0], cg = (size_t)w->dims[1], per_group = outs / (size_t)l->group;
    size_t kernel = (size_t)tensor_numel(w) / outs / cg, i = 0;
    WeightReader r;
    if (weight_reader_open(&r, l->op->graph->model, w))
        return -1;
    for (size_t o = 0; o < outs; o++) {
        const double *tg = t + o / per_group * cg;
        double *mg = mx + o / per_group * cg, acc = 0;
        for (size_t j = 0; j < cg; j++) {
            double sum = 0;
            for (size_t end = i + kernel; i < end; i++) {
                double x = weight_reader_get(&r, i);
                if (!isfinite(x)) {
                    weight_reader_close(&r);
                    return 1;
                }
                sum += x;
                mg[j] = fabs(x) > mg[j] ? fabs(x) : mg[j];
            }
            acc += sum * tg[j];
        }
        bias[o] += acc;
    }
    weight_reader_close(&r);
    return 0;
}

/* Why the folded weight or bias would not hold in the weight's type, or NULL. */
static const char *forward_overflow(const Linear *l, const double *s, const double *bias,
                                    const double *mx, int64_t cin)
{
    int32_t dt = l->w->dtype;
    for (int64_t c = 0; c < cin; c++)
        if (!dtype_holds(dt, mx[c] * fabs(s[c])))
            return "a scaled weight would overflow the weight's type";
    for (int64_t o = 0; o < l->channels; o++)
        if (!dtype_holds(dt, bias[o]))
            return "a folded bias would overflow the weight's type";
    return NULL;
}

/* The new bias in the weight's type. */
static Tensor *forward_bias(const Linear *l, const double *bias, Arena *a)
{
    int64_t n = l->channels;
    Tensor *b = tensor_new(a, l->w->dtype, 1, &n);
    for (int64_t o = 0; b && o < n; o++)
        tensor_set_f64(b, (size_t)o, bias[o]);
    return b;
}

/* Computes the fold of bn into l: scale s per input channel and the new
 * bias; a reason to keep bn in *why (NULL with a -1 return: out of memory). */
static int forward_plan(const Linear *l, const Op *bn, double **s, double **bias,
                        const char **why)
{
    Arena *a = &bn->graph->model->arena;
    int64_t cin = l->w->dims[1] * l->group;
    double *t, *mx = arena_array(a, (size_t)cin, sizeof *mx);
    *bias = arena_array(a, (size_t)l->channels, sizeof **bias);
    *why = NULL;
    if (!mx || !*bias)
        return -1;
    if (bn_factors(a, bn, cin, s, &t)) {
        *why = "its parameters are not one constant float value per channel";
        return 1;
    }
    if (!conv_unpadded(l->op) && !all_zero(t, cin))
        return 1; /* padding: not exact, the usual case, no warning */
    if (!factors_finite(*s, t, cin)) {
        *why = "its factors scale/sqrt(var+epsilon) are not finite";
        return 1;
    }
    for (int64_t o = 0; o < l->channels; o++)
        (*bias)[o] = linear_bias(l, o);
    int rc = forward_sums(l, t, *bias, mx);
    if (rc < 0)
        return -1;
    *why = rc ? "the Conv's weight holds inf or NaN" : forward_overflow(l, *s, *bias, mx, cin);
    return *why ? 1 : 0;
}

/* Folds bn into the Conv l (reading bn's output); 1 when kept, -1 on failure. */
static int fold_forward(const Linear *l, Op *bn)
{
    Model *m = bn->graph->model;
    const char *label = op_label(bn), *why;
    double *s, *bias;
    if (!graph_takes_new_params(bn->graph)) {
        model_warn(m, label, "not folded into the Conv after it: %s", NO_NEW_PARAMS);
        return 1;
    }
    int rc = forward_plan(l, bn, &s, &bias, &why);
    if (rc) {
        if (why)
            model_warn(m, label, "not folded into the Conv after it: %s", why);
        return rc;
    }
    Tensor *b = forward_bias(l, bias, &m->arena);
    Var *x = bn->inputs[0];
    if (!b || conv_scale_inputs(l, s, &m->arena) || linear_set_bias(l, b) ||
        op_drop_outputs(bn, 1) || graph_remove_op(bn, x))
        return -1;
    model_note(m, "folded", label);
    return 0;
}

static int fuse_bn_forward_step(PassCtx *pc, Op *bn)
{
    if (!op_is(bn, "BatchNormalization") || !bn_inference_form(bn) || !bn->inputs[0])
        return 0;
    Op *conv = match_next(bn->outputs[0], "Conv");
    Linear l;
    if (!conv || conv->inputs[0] != bn->outputs[0] ||
        sparse_input_blocks(conv, 1, "not folded") || sparse_input_blocks(bn, 1, "not folded") ||
        default_input_blocks(conv, 1, "the BatchNormalization before it not folded in") ||
        default_input_blocks(bn, 1, "not folded into the Conv after it") ||
        !linear_producer(conv, &l) || l.w->dims[0] % l.group)
        return 0;
    const char *label = op_label(bn);
    if (fold_forward(&l, bn) < 0)
        return pass_failed_on(pc, label);
    return 0;
}

static int pass_fuse_bn_forward(PassCtx *pc)
{
    return pass_each_op(pc, fuse_bn_forward_step);
}

const Pass fuse_bn_forward_pass = {
    .name = "fuse-bn-forward",
    .help = "fold BatchNormalization into the unpadded Conv after it",
    .on_by_default = true,
    .run = pass_fuse_bn_forward,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"BatchNormalization", NULL},
};
