/* ops_pad_resize.c - rules for operators that grow spatial axes: Pad (pads as
 * an attribute in Pad-1/2, as an input from 11, with axes from 18),
 * Resize (scales or sizes; axes and the aspect-ratio policy from 18) and
 * Upsample (scales as an attribute in 7, an input in 9). */
#include <math.h>
#include <string.h>

#include "ops.h"

enum { RESIZE_MAX = 64 };

static int pad_apply(InferCtx *c, const Dim *pads, long n, const int64_t *axes, long n_axes)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0 || x->rank > RESIZE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    long k = n_axes < 0 ? x->rank : n_axes;
    if (n >= 0 && n != 2 * k)
        return infer_bad(c, "%ld pads for %ld axes", n, k);
    Dim d[RESIZE_MAX];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (long i = 0; i < k; i++) {
        int a = n_axes < 0 ? (int)i : infer_axis(axes[i], x->rank);
        if (a < 0)
            return infer_bad(c, "axis out of range");
        bool known = n >= 0 && pads[i] && pads[i + k];
        d[a] = known ? dim_add(c->dt, dim_add(c->dt, x->dims[a], pads[i]), pads[i + k]) : dim_fresh(c->dt);
    }
    return infer_set(c, 0, x->dtype, x->rank, d);
}

static int pad_attr_form(InferCtx *c)
{
    const Attr *a = op_attr(c->op, c->opset < 2 ? "paddings" : "pads");
    Dim pads[2 * RESIZE_MAX];
    if (!a || a->type != ATTR_INTS || a->n > 2 * RESIZE_MAX)
        return infer_bad(c, "pads attribute missing");
    for (size_t i = 0; i < a->n; i++)
        pads[i] = dim_const(c->dt, a->ints[i]);
    return pad_apply(c, pads, (long)a->n, NULL, -1);
}

static int pad_input_form(InferCtx *c)
{
    const InferFact *p = infer_in(c, 1);
    int64_t axes[RESIZE_MAX];
    long na = infer_has_in(c, 3) ? infer_in_ints(c, 3, axes, RESIZE_MAX) : -1;
    if (infer_has_in(c, 3) && na < 0)
        return infer_set(c, 0, infer_in(c, 0)->dtype, infer_in_rank(c, 0), NULL);
    long n = p->value && p->n_value <= 2 * RESIZE_MAX ? (long)p->n_value : -1;
    return pad_apply(c, p->value, n, axes, na);
}

/* Input i's float contents (a constant): count, or -1. */
static long resize_floats(const InferCtx *c, size_t i, double *v)
{
    const Tensor *t = infer_has_in(c, i) ? infer_in_const(c, i) : NULL;
    int64_t n = t ? tensor_numel(t) : -1;
    if (!t || !t->data || n < 0 || n > RESIZE_MAX ||
        (t->dtype != DT_FLOAT && t->dtype != DT_DOUBLE && t->dtype != DT_FLOAT16))
        return -1;
    for (int64_t k = 0; k < n; k++)
        v[k] = tensor_get_f64(t, (size_t)k);
    return (long)n;
}

/* floor(d * scale), as onnx and onnxruntime compute it: exact for a static
 * d, a product for a symbolic d and a whole scale, else unknown. */
static Dim resize_scaled(InferCtx *c, Dim d, double scale)
{
    if (dim_is_const(d)) {
        double v = floor((double)dim_value(d) * (double)(float)scale);
        return v >= 0 && v < 9e18 ? dim_const(c->dt, (int64_t)v) : dim_fresh(c->dt);
    }
    if (scale == floor(scale) && scale >= 0 && scale < 1e9)
        return dim_mul(c->dt, d, dim_const(c->dt, (int64_t)scale));
    return dim_fresh(c->dt);
}

/* Output dims from scales or sizes (n entries, one per axis in axes, or
 * per axis of X when axes is NULL). */
static int resize_apply(InferCtx *c, const double *scales, const Dim *sizes, long n, const int64_t *axes)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0 || x->rank > RESIZE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    if (n != (axes ? n : x->rank))
        return infer_bad(c, "%ld scales or sizes for rank %d", n, x->rank);
    Dim d[RESIZE_MAX];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (long i = 0; i < n; i++) {
        int a = axes ? infer_axis(axes[i], x->rank) : (int)i;
        if (a < 0)
            return infer_bad(c, "axis out of range");
        d[a] = sizes ? (sizes[i] ? sizes[i] : dim_fresh(c->dt)) : resize_scaled(c, x->dims[a], scales[i]);
    }
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* Resize-18's axes attribute: count, -1 when absent (every axis). */
static long resize_axes(const InferCtx *c, int64_t *axes)
{
    const Attr *a = c->opset >= 18 ? op_attr(c->op, "axes") : NULL;
    if (!a || a->type != ATTR_INTS)
        return -1;
    if (a->n > RESIZE_MAX)
        return -2;
    attr_copy_ints(a, axes);
    return (long)a->n;
}

/* Resize-10 (X, scales); 11 on (X, roi, scales, sizes). Sizes under a
 * keep-aspect-ratio policy other than stretch are not the output's. */
static int resize_resize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *s = infer_in(c, 3);
    int64_t axes[RESIZE_MAX];
    long na = resize_axes(c, axes);
    const Attr *policy = op_attr(c->op, "keep_aspect_ratio_policy");
    bool stretch = !policy || (policy->s.len == 7 && !memcmp(policy->s.ptr, "stretch", 7));
    double scales[RESIZE_MAX];
    long ns = na < -1 ? -1 : resize_floats(c, c->opset >= 11 ? 2 : 1, scales);
    if (ns > 0)
        return resize_apply(c, scales, NULL, ns, na >= 0 ? axes : NULL);
    if (c->opset >= 11 && na >= -1 && infer_has_in(c, 3) && s->value && stretch)
        return resize_apply(c, NULL, s->value, (long)s->n_value, na >= 0 ? axes : NULL);
    return infer_set(c, 0, x->dtype, x->rank, NULL);
}

static int resize_upsample(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    double scales[RESIZE_MAX];
    long n = -1;
    const Attr *a = op_attr(c->op, "scales");
    if (c->opset < 9 && a && a->type == ATTR_FLOATS && a->n <= RESIZE_MAX) {
        n = (long)a->n;
        for (size_t i = 0; i < a->n; i++)
            scales[i] = a->floats[i];
    } else if (c->opset >= 9) {
        n = resize_floats(c, 1, scales);
    }
    if (n < 0)
        return infer_set(c, 0, x->dtype, x->rank, NULL);
    return resize_apply(c, scales, NULL, n, NULL);
}

static const OpSchema ops_pad_resize[] = {
    {"", "Pad", 1, 1, 1, 1, 1, pad_attr_form},
    {"", "Pad", 11, 2, 4, 1, 1, pad_input_form},
    {"", "Resize", 10, 2, 4, 1, 1, resize_resize},
    {"", "Upsample", 7, 1, 2, 1, 1, resize_upsample},
};

const OpTable ops_pad_resize_table = {ops_pad_resize, sizeof ops_pad_resize / sizeof ops_pad_resize[0]};
