/* eval_select.c - kernels that pick elements by their order (eval.h): TopK
 * (the k largest or smallest along an axis, ties to the lower index),
 * Hardmax (one at the first maximum) and NonMaxSuppression (per batch and
 * class, boxes by falling score, each kept unless it overlaps a kept one by
 * more than the IoU threshold). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

/* One element of a slice: its value and where it was. */
typedef struct Ranked {
    EvalNum v;
    int64_t at;
} Ranked;

static int by_index(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* NaN ranks above every number, as the largest (onnxruntime's order). */
static int cmp_f(double x, double y)
{
    if (x != x || y != y)
        return (x != x) - (y != y);
    return (x > y) - (x < y);
}

static int desc_f(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = cmp_f(y->v.f, x->v.f);
    return c ? c : by_index(x->at, y->at);
}

static int asc_f(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = cmp_f(x->v.f, y->v.f);
    return c ? c : by_index(x->at, y->at);
}

static int desc_i(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = (y->v.i > x->v.i) - (y->v.i < x->v.i);
    return c ? c : by_index(x->at, y->at);
}

static int asc_i(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    int c = (x->v.i > y->v.i) - (x->v.i < y->v.i);
    return c ? c : by_index(x->at, y->at);
}

/* Outer, axis and inner extents of x around axis. */
static void split_at(const Tensor *x, int axis, size_t *outer, size_t *d, size_t *inner)
{
    *outer = (size_t)dims_numel(x->dims, (size_t)axis);
    *d = (size_t)x->dims[axis];
    *inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1);
}

static int topk_k(EvalCtx *c, int64_t *k)
{
    if (c->opset < 10) {
        *k = op_attr_int(c->op, "k", -1);
        return *k >= 0 ? 0 : -1;
    }
    return eval_ints(c, 1, k, 1) == 1 && *k >= 0 ? 0 : -1;
}

static int eval_topk(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t k;
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -1), (int)x->ndims) : -1;
    if (!x || axis < 0 || x->dtype == DT_BOOL || topk_k(c, &k) || k > x->dims[axis])
        return eval_decline(c, "an unsupported input, axis or k");
    bool largest = op_attr_int(c->op, "largest", 1) != 0, fl = dtype_is_float(x->dtype);
    int64_t dims[EVAL_MAX_RANK];
    memcpy(dims, x->dims, x->ndims * sizeof *dims);
    dims[axis] = k;
    size_t outer, d, inner, size = dtype_size(x->dtype);
    split_at(x, axis, &outer, &d, &inner);
    const uint8_t *b = eval_bytes(c, x);
    Tensor *vals = b ? eval_out(c, 0, x->dtype, x->ndims, dims) : NULL;
    Tensor *idx = vals ? eval_out(c, 1, DT_INT64, x->ndims, dims) : NULL;
    Ranked *row = idx ? arena_array(c->arena, d ? d : 1, sizeof *row) : NULL;
    if (!row)
        return eval_out_failed(c);
    int (*order)(const void *, const void *) =
        fl ? (largest ? desc_f : asc_f) : (largest ? desc_i : asc_i);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            for (size_t j = 0; j < d; j++)
                row[j] = (Ranked){eval_load(x->dtype, b + ((o * d + j) * inner + in) * size),
                                  (int64_t)j};
            qsort(row, d, sizeof *row, order);
            for (size_t j = 0; j < (size_t)k; j++) {
                size_t e = (o * (size_t)k + j) * inner + in;
                eval_store(x->dtype, (uint8_t *)vals->data + e * size, row[j].v);
                eval_store(DT_INT64, (uint8_t *)idx->data + e * 8, (EvalNum){.i = row[j].at});
            }
        }
    return EVAL_OK;
}

/* Hardmax: before opset 13 the input is seen as 2-D, [before axis, from
 * axis on], and each row gets one 1; from 13 each slice along axis does. */
static int eval_hardmax(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t fallback = c->opset < 13 ? 1 : -1;
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", fallback), (int)x->ndims) : -1;
    if (!x || !dtype_is_float(x->dtype) || axis < 0)
        return eval_decline(c, "an unsupported input or axis");
    size_t outer, d, inner, size = dtype_size(x->dtype);
    split_at(x, axis, &outer, &d, &inner);
    if (c->opset < 13) {
        d *= inner;
        inner = 1;
    }
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    for (size_t o = 0; o < outer; o++)
        for (size_t in = 0; in < inner; in++) {
            size_t best = 0;
            double top = 0;
            for (size_t j = 0; j < d; j++) {
                double v = eval_load(x->dtype, b + ((o * d + j) * inner + in) * size).f;
                if (j == 0 || v > top) {
                    top = v;
                    best = j;
                }
            }
            for (size_t j = 0; j < d; j++)
                eval_store(x->dtype, (uint8_t *)t->data + ((o * d + j) * inner + in) * size,
                           (EvalNum){.f = j == best && d ? 1 : 0});
        }
    return EVAL_OK;
}

/* A box's x and y extents: corners in either order, or a centre and size. */
typedef struct Extent {
    double x0, x1, y0, y1;
} Extent;

static Extent nms_extent(const double *b, bool center)
{
    if (center)
        return (Extent){b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
    return (Extent){fmin(b[1], b[3]), fmax(b[1], b[3]), fmin(b[0], b[2]), fmax(b[0], b[2])};
}

static bool nms_overlaps(const double *a, const double *b, bool center, double iou_max)
{
    Extent p = nms_extent(a, center), q = nms_extent(b, center);
    double ix = fmin(p.x1, q.x1) - fmax(p.x0, q.x0), iy = fmin(p.y1, q.y1) - fmax(p.y0, q.y0);
    if (ix <= 0 || iy <= 0)
        return false;
    double inter = ix * iy, pa = (p.x1 - p.x0) * (p.y1 - p.y0), qa = (q.x1 - q.x0) * (q.y1 - q.y0);
    double uni = pa + qa - inter;
    return pa > 0 && qa > 0 && uni > 0 && inter / uni > iou_max;
}

typedef struct Nms {
    double *boxes, *scores; /* [batch, boxes, 4], [batch, classes, boxes] */
    int64_t batch, classes, n, max_out;
    double iou, score_min;
    bool has_score_min, center;
} Nms;

/* The optional scalar input i as a double (fallback when absent). */
static bool nms_scalar(EvalCtx *c, size_t i, double fallback, double *v, bool *given)
{
    const Tensor *t = c->n_in > i ? c->in[i] : NULL;
    *v = fallback;
    *given = t && tensor_numel(t) > 0;
    if (!*given)
        return true;
    const uint8_t *b = eval_bytes(c, t);
    if (!b)
        return false;
    EvalNum n = eval_load(t->dtype, b);
    *v = dtype_is_float(t->dtype) ? n.f : (double)n.i;
    return true;
}

static bool nms_read(EvalCtx *c, Nms *m)
{
    const Tensor *bx = eval_in(c, 0), *sc = eval_in(c, 1);
    double max_out;
    bool given;
    if (!bx || !sc || bx->ndims != 3 || sc->ndims != 3 || bx->dims[2] != 4 ||
        sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1] || !dtype_is_float(bx->dtype) ||
        !dtype_is_float(sc->dtype) || !nms_scalar(c, 2, 0, &max_out, &given) ||
        !nms_scalar(c, 3, 0, &m->iou, &given) ||
        !nms_scalar(c, 4, 0, &m->score_min, &m->has_score_min))
        return false;
    m->batch = bx->dims[0];
    m->n = bx->dims[1];
    m->classes = sc->dims[1];
    m->max_out = max_out > 0 ? (int64_t)max_out : 0;
    m->center = op_attr_int(c->op, "center_point_box", 0) != 0;
    return (m->boxes = eval_doubles(c, bx)) && (m->scores = eval_doubles(c, sc));
}

/* Selects for (b, cls) into sel (box indices), returning how many. */
static size_t nms_class(const Nms *m, int64_t b, int64_t cls, Ranked *cand, int64_t *sel)
{
    size_t nc = 0, ns = 0;
    const double *s = m->scores + (b * m->classes + cls) * m->n;
    for (int64_t k = 0; k < m->n; k++)
        if (!m->has_score_min || s[k] > m->score_min)
            cand[nc++] = (Ranked){(EvalNum){.f = s[k]}, k};
    qsort(cand, nc, sizeof *cand, desc_f);
    for (size_t k = 0; k < nc && (int64_t)ns < m->max_out; k++) {
        const double *box = m->boxes + (b * m->n + cand[k].at) * 4;
        bool keep = true;
        for (size_t j = 0; j < ns && keep; j++)
            keep = !nms_overlaps(box, m->boxes + (b * m->n + sel[j]) * 4, m->center, m->iou);
        if (keep)
            sel[ns++] = cand[k].at;
    }
    return ns;
}

static int eval_nms(EvalCtx *c)
{
    Nms m;
    if (!nms_read(c, &m))
        return eval_decline(c, "unsupported boxes, scores or thresholds");
    size_t per = (size_t)(m.n ? m.n : 1), groups = (size_t)(m.batch * m.classes);
    Ranked *cand = arena_array(c->arena, per, sizeof *cand);
    int64_t *sel = arena_array(c->arena, per * (groups ? groups : 1), sizeof *sel);
    size_t *count = arena_array(c->arena, groups ? groups : 1, sizeof *count), total = 0;
    if (!cand || !sel || !count)
        return EVAL_OOM;
    for (int64_t b = 0; b < m.batch; b++)
        for (int64_t cls = 0; cls < m.classes; cls++) {
            size_t g = (size_t)(b * m.classes + cls);
            total += count[g] = nms_class(&m, b, cls, cand, sel + g * per);
        }
    int64_t dims[2] = {(int64_t)total, 3};
    Tensor *t = eval_out(c, 0, DT_INT64, 2, dims);
    if (!t)
        return eval_out_failed(c);
    int64_t *out = (int64_t *)t->data;
    for (size_t g = 0; g < groups; g++)
        for (size_t k = 0; k < count[g]; k++) {
            *out++ = (int64_t)g / m.classes;
            *out++ = (int64_t)g % m.classes;
            *out++ = sel[g * per + k];
        }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "TopK", 1, eval_topk},
    {"", "Hardmax", 1, eval_hardmax},
    {"", "NonMaxSuppression", 10, eval_nms},
};

const OpKernelTable eval_select_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
