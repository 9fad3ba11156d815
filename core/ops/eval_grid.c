/* eval_grid.c - kernels for sampling a tensor at computed positions
 * (eval.h): GridSample-16 (4-D input, bilinear/nearest/bicubic) and
 * GridSample-20 (N-D input, linear/nearest/cubic), AffineGrid-20 (the
 * grid of an affine transform) and DeformConv-19 (2-D: a convolution whose
 * taps are sampled bilinearly at learned offsets, zero outside). For the
 * reference interpreter only (formatter/fold.c never folds these ops).
 *
 * The grid's last axis holds normalized coordinates in [-1, 1], innermost
 * spatial axis first (x = width). Each is mapped to a pixel position: with
 * align_corners, -1 and 1 are the centres of the first and last pixels;
 * without, their outer edges. A position outside the borders (the pixel
 * centres with align_corners, the edges without) is clamped to the pixels
 * (border) or folded back (reflection); then each tap of the interpolation
 * reads its pixel through the same padding (zeros: 0 outside). Linear and
 * cubic are separable: the weight of a tap is the product of one weight per
 * axis (cubic: Keys' kernel with a = -0.75). Nearest rounds half to even as
 * onnxruntime's nearbyint does. Weighted sums are taken in double and
 * rounded once to the output type. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

enum { GRID_LINEAR = 0, GRID_NEAREST = 1, GRID_CUBIC = 2 };
enum { PAD_ZEROS = 0, PAD_BORDER = 1, PAD_REFLECTION = 2 };
enum { GRID_MAX_SP = 6, GRID_MAX_TAPS = 4 };

typedef struct GridSpec {
    int mode, pad, sp; /* interpolation, padding mode, spatial rank */
    bool align;
    int64_t dims[GRID_MAX_SP];       /* spatial dims of X */
    double lo[GRID_MAX_SP], hi[GRID_MAX_SP]; /* borders */
} GridSpec;

/* The taps of one axis: pixel indices (already through the padding; -1:
 * reads zero padding) and their weights. */
typedef struct GridAxisTaps {
    int n;
    int64_t at[GRID_MAX_TAPS];
    double w[GRID_MAX_TAPS];
} GridAxisTaps;

/* x folded back into [lo, hi] by reflecting at the nearer border. */
static double grid_reflect(double x, double lo, double hi)
{
    double range = hi - lo;
    if (x < lo) {
        double dx = lo - x;
        int64_t n = (int64_t)(dx / range);
        double r = dx - (double)n * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        int64_t n = (int64_t)(dx / range);
        double r = dx - (double)n * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

/* Pixel index i of axis a through the padding; -1 when it reads zero. */
static int64_t grid_pixel(const GridSpec *s, int a, int64_t i)
{
    int64_t d = s->dims[a];
    if (s->pad == PAD_ZEROS)
        return i >= 0 && i < d ? i : -1;
    if (s->pad == PAD_BORDER)
        return i < 0 ? 0 : i >= d ? d - 1 : i;
    int64_t r = (int64_t)grid_reflect((double)i, s->lo[a], s->hi[a]);
    return r < 0 ? 0 : r >= d ? d - 1 : r;
}

/* Keys' cubic convolution weights of the 4 taps around a point t past the
 * second one (0 <= t < 1). */
static void grid_cubic_weights(double t, double *w)
{
    const double a = -0.75;
    double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
    w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
    w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
    w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
    w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

/* The taps of axis a for normalized coordinate g; 1 when nearest mode's
 * rounding is too close to call for an inexact g. */
static int grid_axis_taps(const GridSpec *s, int a, double g, bool inexact, int32_t gdt,
                          GridAxisTaps *t)
{
    int64_t d = s->dims[a];
    double x = s->align ? (g + 1) / 2.0 * (double)(d - 1) : ((g + 1) * (double)d - 1) / 2.0;
    if (s->mode == GRID_NEAREST) {
        double fl = floor(x);
        if (inexact && eval_near_step(gdt, x, fl + 0.5))
            return 1;
        x = nearbyint(x);
    }
    if (x < s->lo[a] || x > s->hi[a]) {
        if (s->pad == PAD_BORDER)
            x = x < 0 ? 0 : x > (double)(d - 1) ? (double)(d - 1) : x;
        else if (s->pad == PAD_REFLECTION)
            x = grid_reflect(x, s->lo[a], s->hi[a]);
    }
    if (s->mode == GRID_NEAREST) {
        t->n = 1;
        t->at[0] = grid_pixel(s, a, (int64_t)x);
        t->w[0] = 1;
        return 0;
    }
    double fl = floor(x), f = x - fl;
    int64_t i0 = (int64_t)fl;
    if (s->mode == GRID_LINEAR) {
        t->n = 2;
        t->w[0] = 1 - f;
        t->w[1] = f;
    } else {
        t->n = 4;
        i0 -= 1;
        grid_cubic_weights(f, t->w);
    }
    for (int k = 0; k < t->n; k++)
        t->at[k] = grid_pixel(s, a, i0 + k);
    return 0;
}

/* One output element: the weighted sum over every combination of the
 * axes' taps of plane (the (n, c) slice of X, element strides xs). */
static double grid_sum(const GridSpec *s, const GridAxisTaps *taps, const Tensor *x,
                       const uint8_t *plane, const int64_t *xs)
{
    size_t size = dtype_size(x->dtype);
    int pick[GRID_MAX_SP] = {0};
    double sum = 0;
    for (;;) {
        double w = 1;
        int64_t off = 0;
        for (int a = 0; a < s->sp && off >= 0; a++) {
            int64_t i = taps[a].at[pick[a]];
            w *= taps[a].w[pick[a]];
            off = i < 0 ? -1 : off + i * xs[a];
        }
        if (off >= 0 && w != 0)
            sum += w * eval_load(x->dtype, plane + (size_t)off * size).f;
        int a = s->sp - 1;
        while (a >= 0 && ++pick[a] == taps[a].n)
            pick[a--] = 0;
        if (a < 0)
            return sum;
    }
}

/* Reads the attributes and X's geometry into s; nonzero when unsupported. */
static int grid_spec(EvalCtx *c, const Tensor *x, const Tensor *g, GridSpec *s)
{
    static const char *const modes16[] = {"bilinear", "nearest", "bicubic"};
    static const char *const modes20[] = {"linear", "nearest", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    bool v20 = c->opset >= 20;
    s->mode = eval_attr_choice(c->op, "mode", v20 ? modes20 : modes16, 3);
    s->pad = eval_attr_choice(c->op, "padding_mode", pads, 3);
    s->align = op_attr_int(c->op, "align_corners", 0) != 0;
    s->sp = (int)x->ndims - 2;
    if (s->mode == 3 || s->pad == 3 || s->sp < 1 || s->sp > GRID_MAX_SP || (!v20 && s->sp != 2))
        return 1;
    if (g->ndims != x->ndims || g->dims[0] != x->dims[0] || g->dims[g->ndims - 1] != s->sp)
        return 1;
    for (int a = 0; a < s->sp; a++) {
        int64_t d = x->dims[2 + a];
        s->dims[a] = d;
        s->lo[a] = s->align ? 0 : -0.5;
        s->hi[a] = s->align ? (double)(d - 1) : (double)d - 0.5;
        /* reflecting into a single pixel centre has no range to fold into */
        if (d < 1 || (s->pad == PAD_REFLECTION && s->hi[a] <= s->lo[a]))
            return 1;
    }
    return 0;
}

/* GridSample: X [N, C, D1..Dr], grid [N, O1..Or, r] -> Y [N, C, O1..Or]. */
static int eval_grid_sample(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *g = eval_in(c, 1);
    GridSpec s;
    if (!x || !g || !dtype_is_float(g->dtype) || x->ndims < 3 || grid_spec(c, x, g, &s))
        return eval_decline(c, "an unsupported input, mode, padding_mode or grid shape");
    if (s.mode != GRID_NEAREST && !dtype_is_float(x->dtype))
        return eval_decline(c, "interpolating a non-float input");
    int64_t ydims[EVAL_MAX_RANK], xs[EVAL_MAX_RANK];
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    for (int a = 0; a < s.sp; a++)
        ydims[2 + a] = g->dims[1 + a];
    const uint8_t *xb = eval_bytes(c, x), *gb = eval_bytes(c, g);
    if (!xb || !gb)
        return EVAL_DECLINE;
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, ydims);
    if (!y)
        return eval_out_failed(c);
    eval_strides(x->dims + 2, (size_t)s.sp, xs);
    size_t nc = (size_t)x->dims[1], size = dtype_size(x->dtype), gsize = dtype_size(g->dtype);
    size_t plane = (size_t)dims_numel(x->dims + 2, (size_t)s.sp);
    size_t points = (size_t)dims_numel(g->dims + 1, (size_t)s.sp);
    bool inexact = g->inexact;
    for (size_t n = 0; n < (size_t)x->dims[0]; n++)
        for (size_t p = 0; p < points; p++) {
            GridAxisTaps taps[GRID_MAX_SP];
            const uint8_t *gp = gb + ((n * points + p) * (size_t)s.sp) * gsize;
            for (int a = 0; a < s.sp; a++) {
                /* the grid lists the innermost axis first */
                double gv = eval_load(g->dtype, gp + (size_t)(s.sp - 1 - a) * gsize).f;
                if (grid_axis_taps(&s, a, gv, inexact, g->dtype, &taps[a]))
                    return eval_decline_step(c);
            }
            for (size_t ch = 0; ch < nc; ch++) {
                const uint8_t *src = xb + (n * nc + ch) * plane * size;
                uint8_t *dst = (uint8_t *)y->data + ((n * nc + ch) * points + p) * size;
                if (s.mode == GRID_NEAREST) {
                    int64_t off = 0;
                    for (int a = 0; a < s.sp && off >= 0; a++)
                        off = taps[a].at[0] < 0 ? -1 : off + taps[a].at[0] * xs[a];
                    if (off >= 0)
                        memcpy(dst, src + (size_t)off * size, size);
                    continue;
                }
                eval_store(y->dtype, dst, (EvalNum){.f = grid_sum(&s, taps, x, src, xs)});
            }
        }
    c->exact = s.mode == GRID_NEAREST ? EVAL_KEEPS : EVAL_ROUNDS;
    return EVAL_OK;
}

/* AffineGrid's base coordinate of pixel i of d along one axis: pixel
 * centres spread over [-1, 1] (align_corners) or inside it. */
static double affine_base(int64_t i, int64_t d, bool align)
{
    return align ? -1 + (double)i * 2.0 / (double)(d - 1) : -1 + (double)(2 * i + 1) / (double)d;
}

/* AffineGrid-20: theta [N, r, r+1] (r = 2 or 3), size [N, C, (D,) H, W] ->
 * grid [N, (D,) H, W, r], each point theta[n] times (x, y, (z,) 1), x
 * running along W. */
static int eval_affine_grid(EvalCtx *c)
{
    const Tensor *th = eval_in(c, 0);
    int64_t size[5];
    long ns = eval_ints(c, 1, size, 5);
    bool align = op_attr_int(c->op, "align_corners", 0) != 0;
    int r = (int)ns - 2;
    if (!th || !dtype_is_float(th->dtype) || (r != 2 && r != 3) || th->ndims != 3 ||
        th->dims[0] != size[0] || th->dims[1] != r || th->dims[2] != r + 1)
        return eval_decline(c, "an unsupported theta or size");
    int64_t gdims[5] = {size[0]};
    for (int a = 0; a < r; a++) {
        gdims[1 + a] = size[2 + a];
        if (size[2 + a] < 0 || (align && size[2 + a] == 1))
            return eval_decline(c, "a size of one pixel with align_corners");
    }
    gdims[r + 1] = r;
    double *t = eval_doubles(c, th);
    Tensor *y = t ? eval_out(c, 0, th->dtype, (size_t)r + 2, gdims) : NULL;
    if (!y)
        return t ? eval_out_failed(c) : (c->why ? EVAL_DECLINE : EVAL_OOM);
    size_t points = (size_t)dims_numel(gdims + 1, (size_t)r), osize = dtype_size(th->dtype);
    for (int64_t n = 0; n < size[0]; n++)
        for (size_t p = 0; p < points; p++) {
            double h[4] = {0, 0, 0, 1}; /* x, y, (z,) 1 */
            size_t rest = p;
            for (int a = r - 1; a >= 0; a--) {
                int64_t d = gdims[1 + a];
                h[r - 1 - a] = affine_base((int64_t)(rest % (size_t)d), d, align);
                rest /= (size_t)d;
            }
            h[r] = 1;
            for (int k = 0; k < r; k++) {
                double v = 0;
                for (int j = 0; j <= r; j++)
                    v += t[(size_t)((n * r + k) * (r + 1) + j)] * h[j];
                eval_store(th->dtype, (uint8_t *)y->data + ((size_t)n * points + p) * (size_t)r * osize +
                                          (size_t)k * osize, (EvalNum){.f = v});
            }
        }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* DeformConv's geometry (2-D). */
typedef struct DeformSpec {
    int64_t n, ic, ih, iw, oc, oh, ow, kh, kw, group, og;
    int64_t st[2], dil[2], pads[4];
} DeformSpec;

/* X's plane (ih x iw doubles) sampled bilinearly at (y, x) in pixel
 * coordinates, 0 outside (GridSample's zeros padding, align_corners). */
static double deform_sample(const DeformSpec *g, const double *plane, double y, double x)
{
    double fy = floor(y), fx = floor(x), ly = y - fy, lx = x - fx, v = 0;
    int64_t y0 = (int64_t)fy, x0 = (int64_t)fx;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            int64_t yy = y0 + a, xx = x0 + b;
            double w = (a ? ly : 1 - ly) * (b ? lx : 1 - lx);
            if (yy >= 0 && yy < g->ih && xx >= 0 && xx < g->iw && w != 0)
                v += w * plane[yy * g->iw + xx];
        }
    return v;
}

static int deform_spec(EvalCtx *c, const Tensor *x, const Tensor *w, const Tensor *off,
                       DeformSpec *g)
{
    int64_t ks[2];
    if (x->ndims != 4 || w->ndims != 4 || off->ndims != 4 ||
        op_attr_ints_or(c->op, "strides", g->st, 2, 1) ||
        op_attr_ints_or(c->op, "dilations", g->dil, 2, 1) ||
        op_attr_ints_or(c->op, "pads", g->pads, 4, 0) ||
        op_attr_ints_or(c->op, "kernel_shape", ks, 2, 0))
        return -1;
    g->n = x->dims[0], g->ic = x->dims[1], g->ih = x->dims[2], g->iw = x->dims[3];
    g->oc = w->dims[0], g->kh = w->dims[2], g->kw = w->dims[3];
    g->oh = off->dims[2], g->ow = off->dims[3];
    g->group = op_attr_int(c->op, "group", 1);
    g->og = op_attr_int(c->op, "offset_group", 1);
    if (g->group < 1 || g->og < 1 || g->ic != w->dims[1] * g->group || g->oc % g->group ||
        g->ic % g->og || off->dims[0] != g->n || off->dims[1] != g->og * g->kh * g->kw * 2 ||
        (ks[0] && ks[0] != g->kh) || (ks[1] && ks[1] != g->kw) || g->ih < 2 || g->iw < 2)
        return -1; /* a one-pixel axis: the reference's normalized grid divides by zero */
    for (int a = 0; a < 2; a++) {
        int64_t in = a ? g->iw : g->ih, k = a ? g->kw : g->kh;
        int64_t span = in - ((k - 1) * g->dil[a] + 1) + g->pads[a] + g->pads[2 + a];
        if (g->st[a] < 1 || span < 0 || span / g->st[a] + 1 != (a ? g->ow : g->oh))
            return -1;
    }
    return 0;
}

/* Output element (n, m, i, j): B[m] plus the sum over the group's input
 * channels and kernel taps of W * mask * X sampled at the tap's offset
 * position. */
static double deform_at(const DeformSpec *g, const double *const *v, int64_t n, int64_t m,
                        int64_t i, int64_t j)
{
    const double *xv = v[0], *wv = v[1], *ov = v[2], *mv = v[4];
    int64_t icg = g->ic / g->group, grp = m / (g->oc / g->group), plane = g->oh * g->ow;
    double acc = v[3] ? v[3][m] : 0;
    for (int64_t ci = 0; ci < icg; ci++) {
        int64_t ch = grp * icg + ci, o = ch / (g->ic / g->og);
        const double *xp = xv + (n * g->ic + ch) * g->ih * g->iw;
        for (int64_t a = 0; a < g->kh; a++)
            for (int64_t b = 0; b < g->kw; b++) {
                int64_t tap = (o * g->kh + a) * g->kw + b;
                const double *op = ov + ((n * g->og * g->kh * g->kw + tap) * 2) * plane + i * g->ow + j;
                double y = (double)(i * g->st[0] - g->pads[0] + a * g->dil[0]) + op[0];
                double x = (double)(j * g->st[1] - g->pads[1] + b * g->dil[1]) + op[plane];
                double mk = mv ? mv[(n * g->og * g->kh * g->kw + tap) * plane + i * g->ow + j] : 1;
                acc += wv[((m * icg + ci) * g->kh + a) * g->kw + b] * mk * deform_sample(g, xp, y, x);
            }
    }
    return acc;
}

/* DeformConv-19 (2-D): X, W, offset [N, og*kh*kw*2, oh, ow], B, mask
 * [N, og*kh*kw, oh, ow]. */
static int eval_deform_conv(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *w = eval_in(c, 1), *off = eval_in(c, 2);
    const Tensor *b = eval_in(c, 3), *mask = eval_in(c, 4);
    DeformSpec g;
    if (!x || !w || !off || !dtype_is_float(x->dtype) || w->dtype != x->dtype ||
        off->dtype != x->dtype || (c->n_in > 3 && c->in[3] && (!b || b->dtype != x->dtype)) ||
        (c->n_in > 4 && c->in[4] && (!mask || mask->dtype != x->dtype)) ||
        deform_spec(c, x, w, off, &g) || (b && tensor_numel(b) != g.oc) ||
        (mask && tensor_numel(mask) != g.n * g.og * g.kh * g.kw * g.oh * g.ow))
        return eval_decline(c, "an unsupported or mismatched input or attribute (2-D only)");
    const double *v[5] = {eval_doubles(c, x), eval_doubles(c, w), eval_doubles(c, off),
                          b ? eval_doubles(c, b) : NULL, mask ? eval_doubles(c, mask) : NULL};
    int64_t ydims[4] = {g.n, g.oc, g.oh, g.ow};
    bool have = v[0] && v[1] && v[2] && (!b || v[3]) && (!mask || v[4]);
    Tensor *y = have ? eval_out(c, 0, x->dtype, 4, ydims) : NULL;
    if (!y)
        return have ? eval_out_failed(c) : (c->why ? EVAL_DECLINE : EVAL_OOM);
    size_t size = dtype_size(x->dtype), e = 0;
    for (int64_t n = 0; n < g.n; n++)
        for (int64_t m = 0; m < g.oc; m++)
            for (int64_t i = 0; i < g.oh; i++)
                for (int64_t j = 0; j < g.ow; j++, e++)
                    eval_store(y->dtype, (uint8_t *)y->data + e * size,
                               (EvalNum){.f = deform_at(&g, v, n, m, i, j)});
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "DeformConv", 19, eval_deform_conv},
    {"", "AffineGrid", 20, eval_affine_grid},
    {"", "GridSample", 16, eval_grid_sample},
    {"", "GridSample", 20, eval_grid_sample},
};

const OpKernelTable eval_grid_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
