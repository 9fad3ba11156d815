/* eval_conv.c - kernels of Conv and ConvTranspose on constant inputs (eval.h):
 * floats, groups, strides, dilations, an optional bias. Each output element is
 * a sum over its group's input channels and the kernel offsets, accumulated in
 * double and rounded once, as MatMul's; a fold does at most EVAL_FOLD_MACS
 * multiply-adds ("small constants"), the interpreter any number. Computed in
 * memory: 1-D, 2-D and 3-D Conv through the blocked loops of eval_dense.c
 * (same sums, same order; a 3-D one plane by plane, kernel depth by kernel
 * depth), the rest element by element; the interpreter's ConvTranspose
 * scatters each input element instead (conv_transpose_dense).
 *
 * Conv: Y[n, m, o] = B[m] + sum X[n, c, o*stride - head + k*dilation] * W[m, c, k],
 * X being 0 outside its dims; pads from the attribute or auto_pad (SAME_UPPER
 * puts an odd padding's extra element at the end, SAME_LOWER at the head).
 * ConvTranspose: X[n, c, i] reaches Y[n, m, i*stride - head + k*dilation]
 * through W[c, m, k]. Explicit pads and output_padding everywhere; auto_pad
 * SAME and output_shape, whose pads are where onnxruntime and the operator
 * text have disagreed, only for the interpreter and only where onnxruntime
 * 1.31 and onnx's reference agree (conv_transpose_derived). */
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_dense.h"

typedef struct ConvFold {
    bool transpose;
    int sp; /* spatial rank */
    int64_t group, cg, mg; /* groups; input and output channels per group */
    int64_t k[EVAL_MAX_RANK], stride[EVAL_MAX_RANK], dil[EVAL_MAX_RANK], head[EVAL_MAX_RANK];
    int64_t ydims[EVAL_MAX_RANK], xs[EVAL_MAX_RANK], ws[EVAL_MAX_RANK];
    const Tensor *x, *w, *b;
    const uint8_t *xb, *wb, *bb;
} ConvFold;

/* Output size of axis i (input size in, kernel extent ek, explicit pads pb
 * and pe, auto_pad mode as in conv_fold_geometry); sets head[i]. -1 when
 * there is no output. */
static int64_t conv_fold_out(ConvFold *g, int i, int64_t in, int64_t ek, int64_t pb, int64_t pe,
                             int64_t opad, int mode)
{
    int64_t s = g->stride[i];
    g->head[i] = pb;
    if (g->transpose)
        return s * (in - 1) + opad + ek - pb - pe;
    if (mode == 1 || mode == 2) {
        int64_t out = (in + s - 1) / s, total = (out - 1) * s + ek - in;
        total = total < 0 ? 0 : total;
        g->head[i] = mode == 1 ? total / 2 : total - total / 2;
        return out;
    }
    return in + pb + pe < ek ? -1 : (in + pb + pe - ek) / s + 1;
}

/* ConvTranspose's output size along axis i when output_shape (out > 0) or
 * auto_pad SAME (mode 1 upper, 2 lower; out = in * stride) sets it: the
 * total padding natural - out is split as the operator text says. Where
 * onnxruntime and onnx's reference differ it is -1: a total below zero
 * under SAME, above zero with output_shape alone, or an output_shape past
 * what output_padding could reach (stride - 1 past the natural size). */
static int64_t conv_transpose_derived(ConvFold *g, int i, int64_t in, int64_t ek, int64_t opad,
                                      int mode, int64_t out)
{
    int64_t s = g->stride[i];
    out = out > 0 ? out : in * s;
    int64_t total = s * (in - 1) + opad + ek - out;
    g->head[i] = 0;
    if (mode == 1 || mode == 2) {
        if (total < 0)
            return -1;
        g->head[i] = mode == 1 ? total / 2 : total - total / 2;
        return out;
    }
    return total > 0 || opad - total >= s ? -1 : out;
}

/* ConvTranspose's output_shape (spatial dims) into out, zeros when absent;
 * nonzero when present and not sp values. */
static int conv_output_shape(const Op *op, int sp, int64_t *out)
{
    const Attr *a = op_attr(op, "output_shape");
    if (a && (a->type != ATTR_INTS || a->n != (size_t)sp))
        return -1;
    return op_attr_ints_or(op, "output_shape", out, (size_t)sp, 0);
}

/* The output dims and each axis's head padding; -1 when the geometry is not
 * one (or, folding, one the fold leaves to onnxruntime). */
static int conv_fold_geometry(const Op *op, ConvFold *g, bool folding)
{
    static const char *const autos[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    const Tensor *x = g->x, *w = g->w;
    int sp = g->sp = (int)x->ndims - 2;
    int64_t pads[2 * EVAL_MAX_RANK], ks[EVAL_MAX_RANK], opad[EVAL_MAX_RANK], oshape[EVAL_MAX_RANK];
    int mode = eval_attr_choice(op, "auto_pad", autos, 4);
    bool derived = g->transpose && (mode == 1 || mode == 2 || op_attr(op, "output_shape"));
    g->group = op_attr_int(op, "group", 1);
    /* W: [M, C/group, k...] for Conv, [C, M/group, k...] for ConvTranspose */
    int64_t wc = g->transpose ? w->dims[0] : w->dims[1] * g->group;
    int64_t m = g->transpose ? w->dims[1] * g->group : w->dims[0];
    if (sp < 1 || w->ndims != x->ndims || mode == 4 || g->group < 1 || wc != x->dims[1] ||
        x->dims[1] % g->group || m % g->group ||
        (derived && (folding || op_attr(op, "pads") || conv_output_shape(op, sp, oshape))) ||
        op_attr_ints_or(op, "strides", g->stride, (size_t)sp, 1) ||
        op_attr_ints_or(op, "dilations", g->dil, (size_t)sp, 1) ||
        op_attr_ints_or(op, "pads", pads, 2 * (size_t)sp, 0) ||
        op_attr_ints_or(op, "kernel_shape", ks, (size_t)sp, 0) ||
        op_attr_ints_or(op, "output_padding", opad, (size_t)sp, 0))
        return -1;
    g->cg = x->dims[1] / g->group;
    g->mg = m / g->group;
    g->ydims[0] = x->dims[0];
    g->ydims[1] = m;
    for (int i = 0; i < sp; i++) {
        g->k[i] = w->dims[2 + i];
        if (g->stride[i] < 1 || g->dil[i] < 1 || (ks[i] && ks[i] != g->k[i]) || pads[i] < 0 ||
            pads[sp + i] < 0 || opad[i] < 0)
            return -1;
        int64_t ek = (g->k[i] - 1) * g->dil[i] + 1;
        bool valid = mode == 3;
        g->ydims[2 + i] =
            derived ? conv_transpose_derived(g, i, x->dims[2 + i], ek, opad[i], mode, oshape[i])
                    : conv_fold_out(g, i, x->dims[2 + i], ek, valid ? 0 : pads[i],
                                    valid ? 0 : pads[sp + i], opad[i], mode);
        if (g->ydims[2 + i] < 1)
            return -1;
    }
    eval_strides(x->dims, x->ndims, g->xs);
    eval_strides(w->dims, w->ndims, g->ws);
    return 0;
}

/* The input position along axis i that kernel offset k reads for output
 * position o, or -1 when it reads padding (or, transposed, no input lands
 * there). */
static int64_t conv_fold_pos(const ConvFold *g, int i, int64_t o, int64_t k)
{
    int64_t in = g->x->dims[2 + i];
    if (!g->transpose) {
        int64_t at = o * g->stride[i] - g->head[i] + k * g->dil[i];
        return at >= 0 && at < in ? at : -1;
    }
    int64_t t = o + g->head[i] - k * g->dil[i];
    if (t < 0 || t % g->stride[i])
        return -1;
    return t / g->stride[i] < in ? t / g->stride[i] : -1;
}

/* Output element (n, m, o[]) in double. */
static double conv_fold_at(const ConvFold *g, int64_t n, int64_t m, const int64_t *o)
{
    int32_t dt = g->x->dtype;
    size_t size = dtype_size(dt);
    int64_t grp = m / g->mg, c0 = grp * g->cg, kn = 1;
    /* the weight of (input channel c0 + ci, output channel m): Conv W[m, ci],
     * ConvTranspose W[c0 + ci, m - grp*mg] */
    int64_t w0 = g->transpose ? c0 * g->ws[0] + (m - grp * g->mg) * g->ws[1] : m * g->ws[0];
    int64_t wstep = g->transpose ? g->ws[0] : g->ws[1];
    for (int i = 0; i < g->sp; i++)
        kn *= g->k[i];
    double sum = g->bb ? eval_load(dt, g->bb + (size_t)m * size).f : 0;
    for (int64_t kk = 0; kk < kn; kk++) {
        int64_t rest = kk, xo = 0, wo = 0;
        bool inside = true;
        for (int i = g->sp - 1; i >= 0 && inside; i--) {
            int64_t off = rest % g->k[i], at = conv_fold_pos(g, i, o[i], off);
            rest /= g->k[i];
            inside = at >= 0;
            xo += at * g->xs[2 + i];
            wo += off * g->ws[2 + i];
        }
        if (!inside)
            continue;
        const uint8_t *xp = g->xb + (size_t)(n * g->xs[0] + c0 * g->xs[1] + xo) * size;
        const uint8_t *wp = g->wb + (size_t)(w0 + wo) * size;
        for (int64_t ci = 0; ci < g->cg; ci++)
            sum += eval_load(dt, xp + (size_t)(ci * g->xs[1]) * size).f *
                   eval_load(dt, wp + (size_t)(ci * wstep) * size).f;
    }
    return sum;
}

/* One group's geometry for dense_conv2d over the last two spatial axes, a
 * 1-D Conv as one row; a 3-D one's first axis is left to conv_dense. */
static DenseConv conv_dense_geometry(const ConvFold *g)
{
    int a = g->sp == 1 ? -1 : g->sp - 2, b = g->sp - 1; /* spatial axes of rows, columns */
    const int64_t *xd = g->x->dims;
    DenseConv d = {g->cg, g->mg, a < 0 ? 1 : xd[2 + a], xd[2 + b], a < 0 ? 1 : g->ydims[2 + a],
                   g->ydims[2 + b], a < 0 ? 1 : g->k[a], g->k[b],
                   a < 0 ? 1 : g->stride[a], g->stride[b], a < 0 ? 1 : g->dil[a],
                   g->dil[b], a < 0 ? 0 : g->head[a], g->head[b],
                   g->xs[1], 0, g->ws[1]};
    d.ycs = d.oh * d.ow * (g->sp == 3 ? g->ydims[2] : 1);
    return d;
}

/* One (image, group) of a Conv of 1 to 3 spatial axes: the planes of a 3-D
 * one each through dense_conv2d, kernel depth by kernel depth. */
static void conv_dense_group(const ConvFold *g, const DenseConv *d, const double *x,
                             const double *w, double *y)
{
    if (g->sp < 3) {
        dense_conv2d(d, x, w, y);
        return;
    }
    int64_t plane_in = d->h * d->w, plane_out = d->oh * d->ow, kplane = d->kh * d->kw;
    for (int64_t od = 0; od < g->ydims[2]; od++)
        for (int64_t kd = 0; kd < g->k[0]; kd++) {
            int64_t id = od * g->stride[0] - g->head[0] + kd * g->dil[0];
            if (id >= 0 && id < g->x->dims[2])
                dense_conv2d(d, x + id * plane_in, w + kd * kplane, y + od * plane_out);
        }
}

/* A Conv's operands as doubles and its result, Y starting at the bias:
 * what the dense paths compute on (conv_doubles), stored into t and freed
 * after (conv_doubles_done). */
typedef struct ConvDoubles {
    double *x, *w, *y;
} ConvDoubles;

static bool conv_doubles(const ConvFold *g, const Tensor *t, ConvDoubles *b)
{
    int32_t dt = g->x->dtype;
    size_t n_out = (size_t)tensor_numel(t), size = dtype_size(dt);
    int64_t plane = dims_numel(g->ydims + 2, (size_t)g->sp), m = g->ydims[1];
    b->x = dense_load(dt, g->xb, (size_t)tensor_numel(g->x));
    b->w = b->x ? dense_load(dt, g->wb, (size_t)tensor_numel(g->w)) : NULL;
    b->y = b->w ? malloc((n_out ? n_out : 1) * sizeof *b->y) : NULL;
    for (size_t e = 0; b->y && e < n_out; e++)
        b->y[e] = g->bb ? eval_load(dt, g->bb + (size_t)((int64_t)e / plane % m) * size).f : 0;
    return b->y != NULL;
}

static int conv_doubles_done(Tensor *t, ConvDoubles *b)
{
    size_t n_out = (size_t)tensor_numel(t), size = dtype_size(t->dtype);
    for (size_t e = 0; b->y && e < n_out; e++)
        eval_store(t->dtype, (uint8_t *)t->data + e * size, (EvalNum){.f = b->y[e]});
    int rc = b->y ? EVAL_OK : EVAL_OOM;
    free(b->x);
    free(b->w);
    free(b->y);
    return rc;
}

/* Conv of 1 to 3 spatial axes in double: Y starts at the bias, each
 * (image, group) through conv_dense_group. */
static int conv_dense(const ConvFold *g, Tensor *t)
{
    DenseConv d = conv_dense_geometry(g);
    int64_t plane = d.ycs, m = g->ydims[1];
    ConvDoubles b;
    if (conv_doubles(g, t, &b))
        for (int64_t n = 0; n < g->ydims[0]; n++)
            for (int64_t grp = 0; grp < g->group; grp++)
                conv_dense_group(g, &d, b.x + n * g->xs[0] + grp * g->cg * g->xs[1],
                                 b.w + grp * g->mg * g->ws[0], b.y + (n * m + grp * g->mg) * plane);
    return conv_doubles_done(t, &b);
}

/* Per axis i and kernel offset k, the output coordinate input position p
 * reaches: tgt[i][k * in + p], or -1 outside the output. */
static int64_t **conv_transpose_targets(const ConvFold *g)
{
    int64_t **tgt = calloc((size_t)g->sp, sizeof *tgt);
    for (int i = 0; tgt && i < g->sp; i++) {
        int64_t in = g->x->dims[2 + i];
        if (!(tgt[i] = malloc((size_t)(g->k[i] * in + 1) * sizeof **tgt))) {
            while (i-- > 0)
                free(tgt[i]);
            free(tgt);
            return NULL;
        }
        for (int64_t k = 0; k < g->k[i]; k++)
            for (int64_t p = 0; p < in; p++) {
                int64_t o = p * g->stride[i] - g->head[i] + k * g->dil[i];
                tgt[i][k * in + p] = o >= 0 && o < g->ydims[2 + i] ? o : -1;
            }
    }
    return tgt;
}

/* Adds wv * xc (one input channel) through kernel offset kk into yc (one
 * output channel): row by row along the last axis. */
static void conv_transpose_offset(const ConvFold *g, int64_t *const *tgt, int64_t kk,
                                  double wv, const double *xc, double *yc)
{
    int64_t off[EVAL_MAX_RANK], pos[EVAL_MAX_RANK] = {0}, last = g->sp - 1;
    int64_t in_last = g->x->dims[2 + last], rows = g->xs[1] / (in_last ? in_last : 1);
    for (int i = g->sp - 1; i >= 0; i--) {
        off[i] = kk % g->k[i];
        kk /= g->k[i];
    }
    const int64_t *tl = tgt[last] + off[last] * in_last;
    for (int64_t r = 0; r < rows; r++) {
        int64_t base = 0;
        for (int i = 0; i < last && base >= 0; i++) {
            int64_t o = tgt[i][off[i] * g->x->dims[2 + i] + pos[i]];
            base = o < 0 ? -1 : base * g->ydims[2 + i] + o;
        }
        if (base >= 0) {
            double *yr = yc + base * g->ydims[2 + last];
            const double *xr = xc + r * in_last;
            for (int64_t p = 0; p < in_last; p++)
                if (tl[p] >= 0)
                    yr[tl[p]] += wv * xr[p];
        }
        for (int i = last - 1; i >= 0 && ++pos[i] == g->x->dims[2 + i]; i--)
            pos[i] = 0;
    }
}

/* ConvTranspose for the interpreter: every input channel scattered through
 * every kernel offset into every output channel of its group, in double.
 * The terms of an output element come in another order than conv_fold_at's,
 * so the fold keeps that one (its folded bits stay as they were); here only
 * the last bit may differ. */
static int conv_transpose_dense(const ConvFold *g, Tensor *t)
{
    int64_t in_plane = g->xs[1], out_plane = dims_numel(g->ydims + 2, (size_t)g->sp), kn = g->ws[1];
    int64_t **tgt = conv_transpose_targets(g);
    ConvDoubles b = {NULL, NULL, NULL};
    if (tgt && conv_doubles(g, t, &b))
        for (int64_t n = 0; n < g->ydims[0]; n++)
            for (int64_t ch = 0; ch < g->x->dims[1]; ch++) {
                const double *xc = b.x + (n * g->x->dims[1] + ch) * in_plane;
                const double *wc = b.w + ch * g->ws[0];
                double *yg = b.y + (n * g->ydims[1] + ch / g->cg * g->mg) * out_plane;
                for (int64_t mm = 0; mm < g->mg; mm++)
                    for (int64_t kk = 0; kk < kn; kk++)
                        conv_transpose_offset(g, tgt, kk, wc[mm * kn + kk], xc, yg + mm * out_plane);
            }
    for (int i = 0; tgt && i < g->sp; i++)
        free(tgt[i]);
    free(tgt);
    return conv_doubles_done(t, &b);
}

static int conv_run(EvalCtx *c, bool transpose)
{
    ConvFold g;
    memset(&g, 0, sizeof g);
    g.transpose = transpose;
    c->exact = EVAL_ROUNDS; /* sums in double, rounded once */
    g.x = eval_in(c, 0);
    g.w = eval_in(c, 1);
    g.b = c->n_in > 2 && c->in[2] ? eval_in(c, 2) : NULL;
    int32_t dt = g.x ? g.x->dtype : DT_BOOL;
    if (!g.x || !g.w || !dtype_is_float(dt) || g.w->dtype != dt || g.x->ndims < 3 ||
        g.x->ndims > EVAL_MAX_RANK || (c->n_in > 2 && c->in[2] && !g.b) ||
        conv_fold_geometry(c->op, &g, c->folding) ||
        (g.b && (g.b->dtype != dt || g.b->ndims != 1 || g.b->dims[0] != g.ydims[1])))
        return eval_decline(c, "unsupported or mismatched operands");
    double macs = (double)tensor_numel(g.w) * (double)g.ydims[0]; /* the loop's visits */
    for (int i = 0; i < g.sp; i++)
        macs *= (double)g.ydims[2 + i];
    if (eval_over_macs(c, macs))
        return eval_decline(c, "too many multiply-adds for a fold");
    g.xb = eval_bytes(c, g.x);
    g.wb = g.xb ? eval_bytes(c, g.w) : NULL;
    g.bb = g.wb && g.b ? eval_bytes(c, g.b) : NULL;
    Tensor *t = g.wb && (g.bb || !g.b) ? eval_out(c, 0, dt, g.x->ndims, g.ydims) : NULL;
    if (!t)
        return eval_out_failed(c);
    if (!transpose && g.sp <= 3)
        return conv_dense(&g, t);
    if (transpose && !c->folding)
        return conv_transpose_dense(&g, t);
    size_t size = dtype_size(dt), n_out = (size_t)tensor_numel(t);
    int64_t idx[EVAL_MAX_RANK] = {0};
    for (size_t e = 0; e < n_out; e++) {
        int64_t rest = (int64_t)e;
        for (int i = (int)t->ndims - 1; i >= 0; i--) {
            idx[i] = rest % g.ydims[i];
            rest /= g.ydims[i];
        }
        EvalNum v = {.f = conv_fold_at(&g, idx[0], idx[1], idx + 2)};
        eval_store(dt, (uint8_t *)t->data + e * size, v);
    }
    return EVAL_OK;
}

static int eval_conv(EvalCtx *c) { return conv_run(c, false); }
static int eval_conv_transpose(EvalCtx *c) { return conv_run(c, true); }

static const OpKernel kernels[] = {
    {"", "Conv", 1, eval_conv},
    {"", "ConvTranspose", 1, eval_conv_transpose},
};

const OpKernelTable eval_conv_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
