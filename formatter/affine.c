/* affine.c - the per-channel affine absorption the fusions share (affine.h).
 *
 * y = k_c * x + s_c per output channel c: scaling the weights that produce
 * channel c by k_c and setting bias_c' = k_c * bias_c + s_c gives the same y.
 * For ConvTranspose the channel of weight [i, j, ...] is group(i) * Cout/g +
 * j; for Gemm it is B's column (row with transB), beta*C is folded into the
 * new C and beta set to 1, alpha stays. Arithmetic is in double, results
 * stored in the weight's dtype.
 *
 * The folded weight is computed only while it is written, so whether it fits
 * its type is decided before: one pass over the weight finds each channel's
 * largest finite |w|, and max|w_c| * |k_c| must stay finite in the weight's
 * type (rounding is monotonic, so that product bounds every folded element
 * exactly). Otherwise a float16 fold could turn finite outputs into inf; the
 * fusion declines, with a warning. Elements that are already inf or NaN stay
 * so. When no factor exceeds 1 in magnitude nothing can grow and the weight
 * is not read. */
#include "affine.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ir/lazy.h"
#include "../core/ir/mapping.h"
#include "params.h"

bool per_channel_shape(const Tensor *t, int64_t channels, size_t rank)
{
    if (t->ndims > rank)
        return false;
    int64_t n = tensor_numel(t);
    if (n != 1 && n != channels)
        return false;
    for (size_t i = 0; i < t->ndims; i++) {
        size_t axis = rank - t->ndims + i;
        if (t->dims[i] != 1 && (axis != 1 || t->dims[i] != channels))
            return false;
    }
    return true;
}

double channel_value(const Tensor *t, int64_t c)
{
    return tensor_numel(t) == 1 ? tensor_get_f64(t, 0) : tensor_get_f64(t, (size_t)c);
}

/* Conv weight [Cout, Cin/g, k...]; ConvTranspose weight [Cin, Cout/g, k...];
 * Gemm B [K, N] or, with transB, [N, K]. */
bool linear_producer(const Op *op, Linear *out)
{
    memset(out, 0, sizeof *out);
    if (op_is(op, "Conv"))
        out->kind = LIN_CONV;
    else if (op_is(op, "ConvTranspose"))
        out->kind = LIN_CONV_TRANSPOSE;
    else if (op_is(op, "Gemm"))
        out->kind = LIN_GEMM;
    else
        return false;
    const Tensor *w = op->n_inputs >= 2 ? param_numeric(op->inputs[1]) : NULL;
    if (!w || !dtype_is_float(w->dtype) || op->n_outputs != 1 || !op->outputs[0])
        return false;
    out->op = (Op *)op;
    out->w = w;
    if (out->kind == LIN_GEMM) {
        out->trans_b = op_attr_int(op, "transB", 0) != 0;
        out->rank = 2;
        out->channels = w->ndims == 2 ? w->dims[out->trans_b ? 0 : 1] : 0;
    } else {
        int64_t group = op_attr_int(op, "group", 1);
        out->rank = w->ndims;
        out->group = group;
        out->channels = w->ndims < 3 ? 0
                        : out->kind == LIN_CONV ? w->dims[0]
                                                : w->dims[1] * group;
        if (group <= 0 || (out->kind == LIN_CONV_TRANSPOSE && w->dims[0] % group))
            return false;
    }
    const Var *bias = op->n_inputs >= 3 ? op->inputs[2] : NULL;
    out->bias = bias ? param_numeric(bias) : NULL;
    if (bias && (!out->bias || out->bias->dtype != w->dtype))
        return false; /* a computed or foreign bias: nothing to fold into */
    if (out->kind == LIN_GEMM)
        out->beta = op_attr_float(op, "beta", 1.0f);
    /* With beta 0 Gemm does not read C (onnxruntime skips it), which may
     * then hold inf or NaN: multiplied in, 0 * inf would make the folded
     * bias NaN. A fold treats C as absent; a new bias replaces it. */
    if (out->kind == LIN_GEMM && out->beta == 0.0f)
        out->bias = NULL;
    /* Conv's bias is a [C] vector by definition; Gemm's C broadcasts. */
    if (out->bias && (out->kind == LIN_GEMM ? !per_channel_shape(out->bias, out->channels, 2)
                                            : out->bias->ndims != 1 ||
                                                  out->bias->dims[0] != out->channels))
        return false;
    return out->channels > 0;
}

/* Elements of one kernel of a Conv/ConvTranspose weight (1 for Gemm). */
static int64_t kernel_size(const Tensor *w)
{
    int64_t inner = 1;
    for (size_t k = 2; k < w->ndims; k++)
        inner *= w->dims[k];
    return inner;
}

/* Output channel of weight element i (see linear_producer for layouts). */
int64_t weight_channel(const Linear *l, size_t i)
{
    const int64_t *d = l->w->dims;
    int64_t inner = kernel_size(l->w);
    switch (l->kind) {
    case LIN_CONV: return (int64_t)i / (d[1] * inner);
    case LIN_CONV_TRANSPOSE: {
        int64_t in_ch = (int64_t)i / (d[1] * inner), j = ((int64_t)i / inner) % d[1];
        return in_ch / (d[0] / l->group) * d[1] + j;
    }
    default: return l->trans_b ? (int64_t)i / d[1] : (int64_t)i % d[1];
    }
}

int64_t conv_input_channel(const Linear *l, size_t i)
{
    const int64_t *d = l->w->dims;
    int64_t inner = kernel_size(l->w);
    int64_t out = (int64_t)i / (d[1] * inner), group_of_out = out / (d[0] / l->group);
    return group_of_out * d[1] + ((int64_t)i / inner) % d[1];
}

/* Current bias of channel c: Conv bias, or Gemm's beta * C; 0 when absent. */
double linear_bias(const Linear *l, int64_t c)
{
    if (!l->bias)
        return 0.0;
    double b = channel_value(l->bias, c);
    return l->kind == LIN_GEMM ? l->beta * b : b;
}

/* Installs a new [channels] bias; for Gemm beta becomes 1 (beta * C folded). */
int linear_set_bias(const Linear *l, Tensor *bias)
{
    if (op_update_param(l->op, 2, bias, param_base_name(l->op, "_bias")))
        return -1;
    if (l->kind == LIN_GEMM && l->beta != 1.0f && !op_set_attr_float(l->op, "beta", 1.0f))
        return -1;
    return 0;
}

/* The folded weight, computed when it is written: w[i] * k[channel(i)]. */
typedef struct Scaled {
    Linear l; /* l.w: the weight being scaled */
    Tensor *out;
    const double *k;
    bool by_input; /* k per input channel of a Conv (fuse-bn-forward) */
} Scaled;

/* Elements of one output channel come in runs: a Conv channel's whole
 * block, a ConvTranspose kernel, a transposed Gemm row; 1 for Gemm columns.
 * Those of one Conv input channel (by_input): a kernel. */
static size_t channel_run(const Linear *l, bool by_input)
{
    const Tensor *w = l->w;
    size_t inner = 1;
    for (size_t k = 2; k < w->ndims; k++)
        inner *= (size_t)w->dims[k];
    switch (l->kind) {
    case LIN_CONV: return by_input ? inner : inner * (size_t)w->dims[1];
    case LIN_CONV_TRANSPOSE: return inner;
    default: return l->trans_b ? (size_t)w->dims[1] : 1;
    }
}

/* The channel whose factor scales weight element i. */
static int64_t scaled_channel(const Scaled *s, size_t i)
{
    return s->by_input ? conv_input_channel(&s->l, i) : weight_channel(&s->l, i);
}

/* dst[j] = src[j] * k[each ? j : 0] for float32 in memory, the common case,
 * without per-element conversions; four at a time so that gcc -O2 vectorizes
 * it. `each` is a constant at both callers, which get their own inlined copy. */
static inline void scale_floats_by(const uint8_t *src, uint8_t *dst, size_t count,
                                   const double *k, bool each)
{
    size_t j = 0;
    for (; j + 4 <= count; j += 4) {
        float x[4], y[4];
        memcpy(x, src + 4 * j, sizeof x); /* raw_data need not be aligned */
        for (int q = 0; q < 4; q++)
            y[q] = (float)(x[q] * k[each ? j + q : 0]);
        memcpy(dst + 4 * j, y, sizeof y);
    }
    for (; j < count; j++) {
        float x;
        memcpy(&x, src + 4 * j, 4);
        float y = (float)(x * k[each ? j : 0]);
        memcpy(dst + 4 * j, &y, 4);
    }
}

/* One factor for the whole run (a Conv channel's block, a transposed Gemm row). */
static void scale_floats(const uint8_t *src, uint8_t *dst, size_t count, double k)
{
    scale_floats_by(src, dst, count, &k, false);
}

/* Elements [first, first+count) of a [rows, n_cols] weight scaled by column,
 * by rows (or parts of rows): row r by k[(r / rows_per_block) * n_cols + col]
 * (Gemm's B[K,N]: one block; a Conv weight with 1-element kernels scaled per
 * input channel: a block per group). */
static void scale_float_columns(const uint8_t *src, uint8_t *dst, size_t first, size_t count,
                                const double *k, size_t n_cols, size_t rows_per_block)
{
    for (size_t j = 0, c = first % n_cols; j < count; c = 0) {
        size_t len = n_cols - c < count - j ? n_cols - c : count - j;
        const double *kb = k + (first + j) / n_cols / rows_per_block * n_cols;
        scale_floats_by(src + 4 * j, dst + 4 * j, len, kb + c, true); /* a row: k by column */
        j += len;
    }
}

/* Elements [first, first+count) of the folded weight (a LazyFill: the input
 * pages read are let go behind it, see core/ir/lazy.h). */
static void fill_scaled(const void *ctx, size_t first, size_t count, uint8_t *buf)
{
    const Scaled *s = ctx;
    const Tensor *w = s->l.w;
    size_t end = first + count;
    size_t run = channel_run(&s->l, s->by_input);
    bool fast = w->dtype == DT_FLOAT;
    /* The input's elements are read (or computed) into buf and scaled in
     * place, see weight_block. */
    const uint8_t *src = weight_block(s->l.op->graph->model, w, first, count, buf);
    /* Elements first.. come from src and go to buf through tensor views. */
    Tensor in = *w, view = *s->out;
    in.data = (void *)src;
    in.gen = NULL;
    view.data = buf;
    view.gen = NULL;
    /* Gemm columns: the factor changes every element, by column. Tested on
     * the kind, not on run == 1: a run of 1 is also a Conv or ConvTranspose
     * with a 1-element kernel per channel or a transposed Gemm with K = 1,
     * whose channel is not the element's column. */
    if (fast && s->l.kind == LIN_GEMM && !s->l.trans_b && !s->by_input)
        scale_float_columns(src, buf, first, end - first, s->k, (size_t)w->dims[1], SIZE_MAX);
    else if (fast && s->by_input && run == 1) /* 1x1 Conv: the factor changes every element */
        scale_float_columns(src, buf, first, end - first, s->k, (size_t)w->dims[1],
                            (size_t)(w->dims[0] / s->l.group));
    else
        for (size_t i = first; i < end;) {
            size_t stop = (i / run + 1) * run < end ? (i / run + 1) * run : end;
            double k = s->k[scaled_channel(s, i)];
            if (fast)
                scale_floats(src + 4 * (i - first), buf + 4 * (i - first), stop - i, k);
            for (size_t j = i; !fast && j < stop; j++)
                tensor_set_f64(&view, j - first, tensor_get_f64(&in, j - first) * k);
            i = stop;
        }
}

/* Largest finite |x| of count float32 values (inf and NaN count as 0); four
 * lanes at a time so that gcc -O2 vectorizes it, as scale_floats_by. */
static double float_run_max(const uint8_t *p, size_t count)
{
    float lane[4] = {0, 0, 0, 0};
    size_t j = 0;
    for (; j + 4 <= count; j += 4) {
        float x[4];
        memcpy(x, p + 4 * j, sizeof x); /* raw_data need not be aligned */
        for (int q = 0; q < 4; q++) {
            float a = fabsf(x[q]);
            a = a <= FLT_MAX ? a : 0.0f; /* NaN compares false too */
            lane[q] = lane[q] > a ? lane[q] : a;
        }
    }
    for (; j < count; j++) {
        float a;
        memcpy(&a, p + 4 * j, 4);
        a = fabsf(a);
        lane[0] = a <= FLT_MAX && a > lane[0] ? a : lane[0];
    }
    float mx = lane[0] > lane[1] ? lane[0] : lane[1], my = lane[2] > lane[3] ? lane[2] : lane[3];
    return mx > my ? mx : my;
}

/* Largest finite |w| among count elements from first (any dtype). */
static double run_max(const Tensor *w, size_t first, size_t count)
{
    double mx = 0;
    for (size_t j = 0; j < count; j++) {
        double x = fabs(tensor_get_f64(w, first + j));
        mx = x > mx && isfinite(x) ? x : mx;
    }
    return mx;
}

const uint8_t *weight_block(const Model *m, const Tensor *w, size_t first, size_t count,
                            uint8_t *buf)
{
    size_t size = dtype_size(w->dtype);
    if (!w->data) { /* a weight an earlier fold scaled: computed a block at a time */
        lazy_read(w, first * size, count * size, buf);
        return buf;
    }
    return model_read_bytes(m, (const uint8_t *)w->data + first * size, count * size, buf);
}

enum { READ_BLOCK = 1 << 20 }; /* bytes of a weight read at a time */

int weight_reader_open(WeightReader *r, const Model *m, const Tensor *w)
{
    size_t size = dtype_size(w->dtype), n = (size_t)tensor_numel(w);
    *r = (WeightReader){m, w, *w, 0, 0, NULL, NULL, READ_BLOCK / size, w->dtype == DT_FLOAT};
    r->block = r->block < n ? r->block : n;
    r->view.gen = NULL;
    r->buf = malloc(size * (r->block ? r->block : 1));
    return r->buf ? 0 : -1;
}

void weight_reader_fill(WeightReader *r, size_t i)
{
    size_t n = (size_t)tensor_numel(r->w);
    r->first = i / r->block * r->block;
    r->count = n - r->first < r->block ? n - r->first : r->block;
    r->p = weight_block(r->m, r->w, r->first, r->count, r->buf);
    r->view.data = (void *)r->p;
}

void weight_reader_close(WeightReader *r)
{
    free(r->buf);
    r->buf = NULL;
}

/* mx[c] over weight elements [first, first+count), which `in` holds from its
 * element 0 on, whose channels come in runs of `run` elements. */
static void runs_maxima(const Linear *l, const Tensor *in, size_t first, size_t count,
                        size_t run, const double *k, double *mx)
{
    const uint8_t *p = in->data;
    bool f32 = in->dtype == DT_FLOAT;
    for (size_t i = first, end = first + count; i < end;) {
        size_t stop = (i / run + 1) * run < end ? (i / run + 1) * run : end;
        int64_t c = weight_channel(l, i);
        double r = fabs(k[c]) <= 1 ? 0
                   : f32          ? float_run_max(p + 4 * (i - first), stop - i)
                                  : run_max(in, i - first, stop - i);
        mx[c] = r > mx[c] ? r : mx[c];
        i = stop;
    }
}

/* lane[c] = max(lane[c], finite |x[c]|) for count float32 values at p; four
 * at a time, as float_run_max, so that gcc -O2 vectorizes it. */
static void float_lanes_max(const uint8_t *p, float *lane, size_t count)
{
    size_t c = 0;
    for (; c + 4 <= count; c += 4) {
        float x[4], l[4];
        memcpy(x, p + 4 * c, sizeof x); /* raw_data need not be aligned */
        memcpy(l, lane + c, sizeof l);
        for (int q = 0; q < 4; q++) {
            float a = fabsf(x[q]);
            a = a <= FLT_MAX ? a : 0.0f; /* inf and NaN count as 0 */
            l[q] = l[q] > a ? l[q] : a;
        }
        memcpy(lane + c, l, sizeof l);
    }
    for (; c < count; c++) {
        float a;
        memcpy(&a, p + 4 * c, 4);
        a = fabsf(a);
        lane[c] = a <= FLT_MAX && a > lane[c] ? a : lane[c];
    }
}

/* mx[c]: the largest finite |w| of output channel c, for the channels whose
 * factor can make a weight grow (|k_c| > 1; others may stay 0), in one pass
 * over the weight a block at a time (weight_block). -1 when out of memory. */
static int channel_maxima(const Linear *l, const double *k, double *mx, const Model *m)
{
    const Tensor *w = l->w;
    size_t n = (size_t)tensor_numel(w), run = channel_run(l, false), size = dtype_size(w->dtype);
    /* Gemm columns; tested on the kind, as in fill_scaled (a run of 1 is
     * also a Conv with 1-element kernels, whose channel is the row) */
    bool columns = l->kind == LIN_GEMM && !l->trans_b && w->dtype == DT_FLOAT;
    size_t n_cols = columns ? (size_t)w->dims[1] : 1;
    size_t rows = READ_BLOCK / size / n_cols ? READ_BLOCK / size / n_cols : 1;
    size_t block = rows * n_cols; /* elements, whole rows for columns */
    uint8_t *buf = malloc(size * (block < n ? block : n));
    float *lane = columns ? calloc(n_cols, sizeof *lane) : NULL;
    if (!buf || (columns && !lane)) {
        free(buf);
        free(lane);
        return -1;
    }
    Tensor in = *w;
    in.gen = NULL;
    for (size_t i = 0; i < n; i += block) {
        size_t count = n - i < block ? n - i : block;
        const uint8_t *p = weight_block(m, w, i, count, buf);
        in.data = (void *)p;
        if (columns)
            for (size_t r = 0; r < count / n_cols; r++) /* a row: channel = column */
                float_lanes_max(p + 4 * r * n_cols, lane, n_cols);
        else
            runs_maxima(l, &in, i, count, run, k, mx);
    }
    for (size_t c = 0; columns && c < n_cols; c++)
        mx[c] = lane[c];
    free(buf);
    free(lane);
    return 0;
}

/* The first channel whose folded bias would overflow the weight's type, or
 * -1. */
static int64_t bias_overflow(const Linear *l, const double *k, const double *s)
{
    for (int64_t c = 0; c < l->channels; c++) {
        double b = linear_bias(l, c);
        if (isfinite(b) && !dtype_holds(l->w->dtype, k[c] * b + (s ? s[c] : 0)))
            return c;
    }
    return -1;
}

/* The first channel whose folded weight would overflow its type, or -1;
 * reads the weight only when a factor grows it. Sets *oom on failure. */
static int64_t weight_overflow(const Linear *l, const double *k, const Model *m, Arena *a,
                               bool *oom)
{
    double kmax = 0;
    for (int64_t c = 0; c < l->channels; c++)
        kmax = fabs(k[c]) > kmax ? fabs(k[c]) : kmax;
    if (kmax <= 1) /* |w * k| <= |w|, which the type holds */
        return -1;
    double *mx = arena_array(a, (size_t)l->channels, sizeof *mx);
    if (!mx || channel_maxima(l, k, mx, m)) {
        *oom = true;
        return -1;
    }
    for (int64_t c = 0; c < l->channels; c++)
        if (!dtype_holds(l->w->dtype, mx[c] * fabs(k[c])))
            return c;
    return -1;
}

int linear_fold_fits(const Linear *l, const double *k, const double *s, const char *label,
                     Model *m, Arena *a)
{
    bool oom = false;
    int64_t c = bias_overflow(l, k, s);
    if (c < 0)
        c = weight_overflow(l, k, m, a, &oom);
    if (oom)
        return -1;
    if (c < 0)
        return 0;
    model_warn(m, label, "not folded: output channel %lld of the folded weight or bias would "
               "overflow %s (factor %g)", (long long)c, dtype_name(l->w->dtype), k[c]);
    return 1;
}

/* Gives l the weight scaled by k (per output channel, or per input channel
 * of a Conv when by_input), computed while written. */
static int scale_weight(const Linear *l, const double *k, bool by_input, Arena *a)
{
    const Tensor *w = l->w;
    Scaled *sc = arena_alloc(a, sizeof *sc);
    if (!sc)
        return -1;
    *sc = (Scaled){*l, NULL, k, by_input};
    sc->out = lazy_tensor_new(a, w->dtype, w->ndims, w->dims, fill_scaled, sc, w, true,
                              l->op->graph->model);
    if (!sc->out)
        return -1;
    sc->out->external = w->external; /* stays where it was */
    return op_update_param(l->op, 1, sc->out, param_base_name(l->op, "_weight"));
}

int linear_fold(const Linear *l, const double *k, const double *s, Arena *a)
{
    int64_t n = l->channels;
    Tensor *bias = tensor_new(a, l->w->dtype, 1, &n);
    if (!bias)
        return -1;
    for (int64_t c = 0; c < n; c++)
        tensor_set_f64(bias, (size_t)c, k[c] * linear_bias(l, c) + (s ? s[c] : 0));
    if (scale_weight(l, k, false, a))
        return -1;
    return !s && !l->bias ? 0 : linear_set_bias(l, bias); /* no bias stays none */
}

int conv_scale_inputs(const Linear *l, const double *k, Arena *a)
{
    return scale_weight(l, k, true, a);
}
