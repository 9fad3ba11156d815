/* eval_resize.c - the Resize and Upsample kernels (eval.h): nearest (its
 * four nearest_modes), linear and cubic interpolation, each output axis
 * mapped back to the input by a coordinate_transformation_mode. Separable:
 * an output element is the weighted sum, over every axis's taps, of input
 * elements (edges repeated), computed in double and rounded once; with
 * antialias a downscale widens the linear or cubic filter by 1/scale (not
 * with align_corners, where onnx's reference and onnxruntime differ). Like
 * eval_norm.c's, these kernels serve the reference interpreter only
 * (formatter/fold.c never folds Resize or Upsample). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_TF_CROP };
enum { NM_PREFER_FLOOR, NM_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };
/* Taps per output coordinate: 4 (cubic), or with antialias the filter
 * widened by 1/scale (a downscale finer than about 1/15 declines). */
enum { RS_MAX_TAPS = 64 };
/* An output dim beyond this is refused before it is converted to an integer. */
#define RS_MAX_DIM 1e15

typedef struct ResizeSpec {
    int mode, coord, nearest, rank;
    double scale[EVAL_MAX_RANK], roi_lo[EVAL_MAX_RANK], roi_hi[EVAL_MAX_RANK];
    int64_t in[EVAL_MAX_RANK], out[EVAL_MAX_RANK];
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
} ResizeSpec;

/* One output coordinate's taps along an axis; n = 0: outside the input
 * (tf_crop_and_resize extrapolates). */
typedef struct Taps {
    int n;
    int64_t idx[RS_MAX_TAPS];
    double w[RS_MAX_TAPS];
} Taps;

/* Output coordinate x of axis a mapped to the input (the spec's formulas). */
static double resize_source(const ResizeSpec *s, int a, double x)
{
    double sc = s->scale[a], li = (double)s->in[a], lo = (double)s->out[a];
    switch (s->coord) {
    case CT_HALF_PIXEL_SYM: {
        double adjust = lo / (sc * li), offset = li / 2 * (1 - adjust);
        return offset + (x + 0.5) / sc - 0.5;
    }
    case CT_PYTORCH: return lo > 1 ? (x + 0.5) / sc - 0.5 : 0;
    case CT_ALIGN: /* over the unrounded output length, as onnx's reference */
        return sc * li == 1 ? 0 : x * (li - 1) / (sc * li - 1);
    case CT_ASYM: return x / sc;
    case CT_TF_NN: return (x + 0.5) / sc;
    case CT_TF_CROP: {
        double r0 = s->roi_lo[a], r1 = s->roi_hi[a];
        return lo > 1 ? r0 * (li - 1) + x * (r1 - r0) * (li - 1) / (lo - 1)
                      : 0.5 * (r0 + r1) * (li - 1);
    }
    default: return (x + 0.5) / sc - 0.5;
    }
}

static int64_t nearest_index(const ResizeSpec *s, int a, double x)
{
    double f = floor(x);
    switch (s->nearest) {
    case NM_PREFER_CEIL: return (int64_t)(x - f == 0.5 ? f + 1 : nearbyint(x));
    case NM_FLOOR: return (int64_t)f;
    case NM_CEIL: return (int64_t)ceil(x);
    case NM_SIMPLE: return (int64_t)(s->scale[a] < 1 ? ceil(x) : f);
    default: return (int64_t)(x - f == 0.5 ? f : nearbyint(x));
    }
}

/* The cubic convolution kernel (Keys, coefficient a) at distance t. */
static double cubic_kernel(double t, double a)
{
    t = fabs(t);
    if (t <= 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    return t < 2 ? ((a * t - 5 * a) * t + 8 * a) * t - 4 * a : 0;
}

/* Antialiased taps (downscaling by scale < 1): the linear or cubic filter
 * stretched by 1/scale over input offsets first.. from floor(x), weights
 * normalised to sum 1, as onnx's reference filters. false when wider than
 * RS_MAX_TAPS. */
static bool antialias_weights(const ResizeSpec *s, double r, double scale, int64_t *first,
                              int *n, double *w)
{
    double support = s->mode == RS_LINEAR ? 1 : 2, sum = 0;
    int64_t start = (int64_t)floor(-support / scale) + 1;
    int64_t count = 2 - 2 * start;
    if (count > RS_MAX_TAPS)
        return false;
    for (int64_t k = 0; k < count; k++) {
        double t = ((double)(start + k) - r) * scale;
        w[k] = s->mode == RS_LINEAR ? fmax(0, 1 - fabs(t)) : cubic_kernel(t, s->cubic_a);
        sum += w[k];
    }
    for (int64_t k = 0; sum != 0 && k < count; k++)
        w[k] /= sum;
    *first = start, *n = (int)count;
    return true;
}

static void cubic_weights(double r, double a, double *w)
{
    double t = r + 1, u = 1 - r, v = 2 - r;
    w[0] = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
    w[3] = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
}

/* The taps of output coordinate j along axis a: indices clamped to the
 * input (edges repeated), or dropped with exclude_outside. */
static bool resize_taps(const ResizeSpec *s, int a, int64_t j, Taps *t)
{
    double x = resize_source(s, a, (double)j);
    int64_t last = s->in[a] - 1;
    t->n = 0;
    if (x != x || (s->coord == CT_TF_CROP && (x < 0 || x > (double)last)))
        return true;
    /* Past the widest filter beyond an edge every tap reads the edge: clamping x
     * there changes nothing and keeps the integer conversions defined. */
    x = fmax(-RS_MAX_TAPS, fmin(x, (double)(last + RS_MAX_TAPS)));
    if (s->mode == RS_NEAREST) {
        int64_t i = nearest_index(s, a, x);
        t->n = 1, t->idx[0] = i < 0 ? 0 : i > last ? last : i, t->w[0] = 1;
        return true;
    }
    double f = floor(x), r = x - f, w[RS_MAX_TAPS], sum = 0;
    int n = s->mode == RS_LINEAR ? 2 : 4;
    int64_t first = -(n == 4);
    if (s->antialias && s->scale[a] < 1) {
        if (!antialias_weights(s, r, s->scale[a], &first, &n, w))
            return false;
    } else if (n == 2) {
        w[0] = 1 - r, w[1] = r;
    } else {
        cubic_weights(r, s->cubic_a, w);
    }
    for (int k = 0; k < n; k++) {
        int64_t i = (int64_t)f + first + k;
        if (s->exclude_outside && (i < 0 || i > last))
            continue;
        t->idx[t->n] = i < 0 ? 0 : i > last ? last : i;
        t->w[t->n++] = w[k];
        sum += w[k];
    }
    for (int k = 0; s->exclude_outside && sum != 0 && k < t->n; k++)
        t->w[k] /= sum;
    return true;
}

/* Output element from the taps of each axis (tap[a] for its coordinate). */
static double resize_element(const ResizeSpec *s, const Tensor *x, const uint8_t *xb,
                             const int64_t *strides, const Taps *const *tap)
{
    int k[EVAL_MAX_RANK] = {0};
    for (int a = 0; a < s->rank; a++)
        if (!tap[a]->n)
            return s->extrapolation;
    double sum = 0;
    size_t size = dtype_size(x->dtype);
    for (;;) {
        double w = 1;
        int64_t at = 0;
        for (int a = 0; a < s->rank; a++) {
            w *= tap[a]->w[k[a]];
            at += tap[a]->idx[k[a]] * strides[a];
        }
        if (w != 0)
            sum += w * eval_load(x->dtype, xb + (size_t)at * size).f;
        int a = s->rank - 1;
        while (a >= 0 && ++k[a] == tap[a]->n)
            k[a--] = 0;
        if (a < 0)
            return sum;
    }
}

/* Every axis's taps for every output coordinate, then each element. */
static int resize_run(EvalCtx *c, const ResizeSpec *s, const Tensor *x)
{
    const uint8_t *xb = eval_bytes(c, x);
    Tensor *y = xb ? eval_out(c, 0, x->dtype, (size_t)s->rank, s->out) : NULL;
    if (!y)
        return eval_out_failed(c);
    int64_t total = 0, strides[EVAL_MAX_RANK], ys[EVAL_MAX_RANK];
    for (int a = 0; a < s->rank; a++)
        total += s->out[a];
    Taps *taps = malloc((size_t)(total ? total : 1) * sizeof *taps), *axis[EVAL_MAX_RANK];
    if (!taps)
        return EVAL_OOM;
    for (int a = 0, at = 0; a < s->rank; at += (int)s->out[a], a++) {
        axis[a] = taps + at;
        for (int64_t j = 0; j < s->out[a]; j++)
            if (!resize_taps(s, a, j, &axis[a][j])) {
                free(taps);
                return eval_decline(c, "an antialiasing filter wider than 64 taps");
            }
    }
    eval_strides(x->dims, x->ndims, strides);
    eval_strides(s->out, (size_t)s->rank, ys);
    size_t n = (size_t)tensor_numel(y), size = dtype_size(y->dtype);
    for (size_t e = 0; e < n; e++) {
        const Taps *tap[EVAL_MAX_RANK];
        for (int a = 0; a < s->rank; a++)
            tap[a] = &axis[a][(int64_t)e / ys[a] % s->out[a]];
        double v = resize_element(s, x, xb, strides, tap);
        eval_store(y->dtype, (uint8_t *)y->data + e * size, (EvalNum){.f = v});
    }
    free(taps);
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* The float elements of input i into v (at most cap): the count, -1 when
 * unusable, 0 when absent or empty. */
static long resize_floats(EvalCtx *c, size_t i, double *v, size_t cap)
{
    const Tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t)
        return 0;
    const uint8_t *b = dtype_is_float(t->dtype) ? eval_bytes(c, t) : NULL;
    size_t n = (size_t)tensor_numel(t);
    if (!b || n > cap)
        return -1;
    for (size_t k = 0; k < n; k++)
        v[k] = eval_load(t->dtype, b + k * dtype_size(t->dtype)).f;
    return (long)n;
}

/* Output dims and scales from sizes (with keep_aspect_ratio_policy) or
 * scales, on the axes listed (all by default). */
static int resize_shape(EvalCtx *c, ResizeSpec *s, const double *scales, long n_sc,
                        const int64_t *sizes, long n_sz)
{
    int64_t axes[EVAL_MAX_RANK];
    long n_ax = op_attr(c->op, "axes") ? op_attr_ints(c->op, "axes", axes, EVAL_MAX_RANK) : 0;
    long n = n_sz > 0 ? n_sz : n_sc;
    if (n_ax < 0 || (n_ax && n_ax != n) || (!n_ax && n != s->rank) || n <= 0)
        return -1;
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    int policy = eval_attr_choice(c->op, "keep_aspect_ratio_policy", policies, 3);
    double common = policy == 1 ? INFINITY : 0;
    for (long k = 0; k < n && n_sz > 0; k++) {
        int a = n_ax ? eval_axis(axes[k], s->rank) : (int)k;
        if (a < 0 || sizes[k] < 0 || !s->in[a])
            return -1;
        double r = (double)sizes[k] / (double)s->in[a];
        common = policy == 1 ? fmin(common, r) : fmax(common, r);
    }
    for (long k = 0; k < n; k++) {
        int a = n_ax ? eval_axis(axes[k], s->rank) : (int)k;
        if (a < 0 || policy == 3)
            return -1;
        if (n_sz > 0 && policy == 0) {
            s->out[a] = sizes[k];
            s->scale[a] = s->in[a] ? (double)sizes[k] / (double)s->in[a] : 1;
        } else if (n_sz > 0) {
            s->scale[a] = common;
            if (!(common > 0 && common * (double)s->in[a] < RS_MAX_DIM))
                return -1;
            s->out[a] = (int64_t)nearbyint(common * (double)s->in[a]);
        } else {
            if (!(scales[k] > 0 && scales[k] * (double)s->in[a] < RS_MAX_DIM))
                return -1;
            s->scale[a] = scales[k];
            s->out[a] = (int64_t)floor((double)s->in[a] * scales[k]);
        }
    }
    return 0;
}

static int resize_attrs(EvalCtx *c, ResizeSpec *s, bool legacy)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                         "tf_crop_and_resize"};
    static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    s->mode = eval_attr_choice(c->op, "mode", modes, 4);
    s->mode = s->mode == 3 ? RS_LINEAR : s->mode;
    s->coord = legacy ? CT_ASYM : eval_attr_choice(c->op, "coordinate_transformation_mode", coords, 7);
    s->nearest = legacy ? NM_SIMPLE : eval_attr_choice(c->op, "nearest_mode", nearest, 4);
    s->cubic_a = op_attr_float(c->op, "cubic_coeff_a", -0.75f);
    s->exclude_outside = op_attr_int(c->op, "exclude_outside", 0) != 0;
    s->extrapolation = op_attr_float(c->op, "extrapolation_value", 0.0f);
    s->antialias = op_attr_int(c->op, "antialias", 0) != 0;
    /* antialias with align_corners: onnx's reference and onnxruntime differ */
    if (s->mode > RS_CUBIC || s->coord == 7 || (!legacy && s->nearest == 4) ||
        (legacy && s->mode == RS_CUBIC) ||
        (s->antialias && s->mode != RS_NEAREST && s->coord == CT_ALIGN))
        return -1;
    return 0;
}

static int resize_begin(EvalCtx *c, ResizeSpec *s, const Tensor **x, bool legacy)
{
    memset(s, 0, sizeof *s);
    *x = eval_in(c, 0);
    if (!*x || !dtype_is_float((*x)->dtype) || !(*x)->ndims || (*x)->ndims > EVAL_MAX_RANK ||
        resize_attrs(c, s, legacy))
        return -1;
    s->rank = (int)(*x)->ndims;
    for (int a = 0; a < s->rank; a++) {
        s->in[a] = s->out[a] = (*x)->dims[a];
        s->scale[a] = 1;
        s->roi_lo[a] = 0, s->roi_hi[a] = 1;
    }
    return 0;
}

/* tf_crop_and_resize's roi: starts then ends, for every axis or those listed. */
static int resize_roi(EvalCtx *c, ResizeSpec *s)
{
    double roi[2 * EVAL_MAX_RANK];
    int64_t axes[EVAL_MAX_RANK];
    long n = resize_floats(c, 1, roi, 2 * EVAL_MAX_RANK);
    long n_ax = op_attr(c->op, "axes") ? op_attr_ints(c->op, "axes", axes, EVAL_MAX_RANK) : 0;
    if (s->coord != CT_TF_CROP)
        return n < 0 ? -1 : 0;
    if (n_ax < 0 || n != 2 * (n_ax ? n_ax : s->rank))
        return -1;
    for (long k = 0; k < n / 2; k++) {
        int a = n_ax ? eval_axis(axes[k], s->rank) : (int)k;
        if (a < 0)
            return -1;
        s->roi_lo[a] = roi[k], s->roi_hi[a] = roi[n / 2 + k];
    }
    return 0;
}

/* Resize-10: X, scales. 11 on: X, roi, scales, sizes (one of the last two). */
static int eval_resize(EvalCtx *c)
{
    ResizeSpec s;
    const Tensor *x;
    double scales[EVAL_MAX_RANK];
    int64_t sizes[EVAL_MAX_RANK];
    bool legacy = c->opset < 11;
    if (resize_begin(c, &s, &x, legacy))
        return eval_decline(c, "an unsupported input or mode");
    long n_sc = resize_floats(c, legacy ? 1 : 2, scales, EVAL_MAX_RANK);
    long n_sz = !legacy && c->n_in > 3 && c->in[3] ? eval_ints(c, 3, sizes, EVAL_MAX_RANK) : 0;
    if (n_sc < 0 || n_sz < 0 || (!legacy && resize_roi(c, &s)) ||
        resize_shape(c, &s, scales, n_sc, sizes, n_sz))
        return c->why ? EVAL_DECLINE : eval_decline(c, "unreadable roi, scales or sizes");
    return resize_run(c, &s, x);
}

/* Upsample-7 (scales attribute) and 9 (scales input): asymmetric mapping. */
static int eval_upsample(EvalCtx *c)
{
    ResizeSpec s;
    const Tensor *x;
    double scales[EVAL_MAX_RANK];
    long n_sc;
    if (resize_begin(c, &s, &x, true))
        return eval_decline(c, "an unsupported input or mode");
    if (c->opset >= 9) {
        n_sc = resize_floats(c, 1, scales, EVAL_MAX_RANK);
    } else {
        const Attr *at = op_attr(c->op, "scales");
        n_sc = at && at->type == ATTR_FLOATS && at->n <= EVAL_MAX_RANK ? (long)at->n : -1;
        for (long k = 0; k < n_sc; k++)
            scales[k] = at->floats[k];
    }
    if (n_sc < 0 || resize_shape(c, &s, scales, n_sc, NULL, 0))
        return c->why ? EVAL_DECLINE : eval_decline(c, "unreadable scales");
    return resize_run(c, &s, x);
}

static const OpKernel kernels[] = {
    {"", "Resize", 10, eval_resize},
    {"", "Upsample", 7, eval_upsample},
};

const OpKernelTable eval_resize_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
