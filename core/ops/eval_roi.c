/* eval_roi.c - the RoiAlign kernel (eval.h): each region of interest of a
 * [N, C, H, W] feature map cut into output_height x output_width bins,
 * each bin the average (or the "max" of weighted corners, as onnxruntime
 * defines it) of a grid of bilinear samples. For the reference interpreter
 * only (formatter/fold.c never folds RoiAlign).
 *
 * The region's corners, sizes, bin sizes and sample positions are computed
 * in the rois' type, one rounding per operation as onnxruntime does in
 * float: the sample grid's size is a ceiling of a bin size, and a sample
 * outside [-1, H] x [-1, W] counts zero, so a last-bit difference there
 * would change the result by a whole sample. The interpolation and the sums
 * are in double. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

typedef struct RoiSpec {
    int32_t dt;  /* the rois' type: what region arithmetic rounds to */
    bool avg, half_pixel;
    int64_t oh, ow, ratio, height, width;
    double scale;
} RoiSpec;

/* The bilinear sample of plane (height x width doubles) at (y, x), its
 * corners' weighted values in corner[4]; false when it lies outside. */
static bool roi_sample(const RoiSpec *s, const double *plane, double y, double x, double *corner)
{
    if (y < -1.0 || y > (double)s->height || x < -1.0 || x > (double)s->width)
        return false;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= s->height - 1) {
        y0 = y1 = s->height - 1;
        y = (double)y0;
    }
    if (x0 >= s->width - 1) {
        x0 = x1 = s->width - 1;
        x = (double)x0;
    }
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
    corner[0] = hy * hx * plane[y0 * s->width + x0];
    corner[1] = hy * lx * plane[y0 * s->width + x1];
    corner[2] = ly * hx * plane[y1 * s->width + x0];
    corner[3] = ly * lx * plane[y1 * s->width + x1];
    return true;
}

/* Sample i of grid samples in bin p (bins of `bin` from start) along one
 * axis: start + p*bin + (i + 0.5)*bin/grid, each operation rounded to dt. */
static double roi_position(int32_t dt, double start, int64_t p, double bin, int64_t i, int64_t grid)
{
    double within = eval_round_to(dt, eval_round_to(dt, ((double)i + 0.5) * bin) / (double)grid);
    return eval_round_to(dt, eval_round_to(dt, start + eval_round_to(dt, (double)p * bin)) + within);
}

/* One region (corners box[4] in input coordinates) over every channel of
 * image `planes` into out (C * oh * ow doubles). */
static void roi_one(const RoiSpec *s, const double *box, const double *planes, int64_t channels,
                    double *out)
{
    int32_t dt = s->dt;
    double off = s->half_pixel ? 0.5 : 0;
    double x0 = eval_round_to(dt, eval_round_to(dt, box[0] * s->scale) - off);
    double y0 = eval_round_to(dt, eval_round_to(dt, box[1] * s->scale) - off);
    double x1 = eval_round_to(dt, eval_round_to(dt, box[2] * s->scale) - off);
    double y1 = eval_round_to(dt, eval_round_to(dt, box[3] * s->scale) - off);
    double rw = eval_round_to(dt, x1 - x0), rh = eval_round_to(dt, y1 - y0);
    if (!s->half_pixel) { /* malformed regions become 1 x 1 */
        rw = rw < 1 ? 1 : rw;
        rh = rh < 1 ? 1 : rh;
    }
    double bh = eval_round_to(dt, rh / (double)s->oh);
    double bw = eval_round_to(dt, rw / (double)s->ow);
    int64_t gh = s->ratio > 0 ? s->ratio : (int64_t)ceil(bh);
    int64_t gw = s->ratio > 0 ? s->ratio : (int64_t)ceil(bw);
    double count = gh * gw > 1 ? (double)(gh * gw) : 1;
    for (int64_t c = 0; c < channels; c++) {
        const double *plane = planes + c * s->height * s->width;
        for (int64_t ph = 0; ph < s->oh; ph++)
            for (int64_t pw = 0; pw < s->ow; pw++) {
                double acc = 0;
                bool seen = false;
                for (int64_t iy = 0; iy < gh; iy++) {
                    double y = roi_position(dt, y0, ph, bh, iy, gh);
                    for (int64_t ix = 0; ix < gw; ix++) {
                        double x = roi_position(dt, x0, pw, bw, ix, gw), k[4] = {0, 0, 0, 0};
                        roi_sample(s, plane, y, x, k);
                        double v = s->avg ? k[0] + k[1] + k[2] + k[3]
                                          : fmax(fmax(k[0], k[1]), fmax(k[2], k[3]));
                        acc = s->avg ? acc + v : !seen || v > acc ? v : acc;
                        seen = true;
                    }
                }
                out[(c * s->oh + ph) * s->ow + pw] = s->avg ? acc / count : acc;
            }
    }
}

/* Reads the attributes; nonzero when unsupported. RoiAlign-10 has no
 * coordinate_transformation_mode (its regions are not shifted by half a
 * pixel); from 16 it defaults to half_pixel. */
static int roi_spec(EvalCtx *c, const Tensor *x, const Tensor *rois, RoiSpec *s)
{
    static const char *const modes[] = {"avg", "max"};
    static const char *const ctms[] = {"half_pixel", "output_half_pixel"};
    int mode = eval_attr_choice(c->op, "mode", modes, 2);
    int ctm = c->opset >= 16 ? eval_attr_choice(c->op, "coordinate_transformation_mode", ctms, 2) : 1;
    s->dt = rois->dtype;
    s->avg = mode == 0;
    s->half_pixel = ctm == 0;
    s->oh = op_attr_int(c->op, "output_height", 1);
    s->ow = op_attr_int(c->op, "output_width", 1);
    s->ratio = op_attr_int(c->op, "sampling_ratio", 0);
    s->scale = eval_round_to(s->dt, op_attr_float(c->op, "spatial_scale", 1.0f));
    s->height = x->dims[2];
    s->width = x->dims[3];
    return mode == 2 || ctm == 2 || s->oh < 1 || s->ow < 1 || s->ratio < 0 || s->height < 1 ||
           s->width < 1;
}

/* RoiAlign-10/16: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2),
 * batch_indices [R] -> [R, C, output_height, output_width]. */
static int eval_roi_align(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *rois = eval_in(c, 1), *bi = eval_in(c, 2);
    RoiSpec s;
    if (!x || !rois || !bi || !dtype_is_float(x->dtype) || !dtype_is_float(rois->dtype) ||
        !eval_index_type(bi) || x->ndims != 4 || rois->ndims != 2 || rois->dims[1] != 4 ||
        bi->ndims != 1 || bi->dims[0] != rois->dims[0] || roi_spec(c, x, rois, &s))
        return eval_decline(c, "an unsupported input or attribute");
    if (rois->inexact)
        return eval_decline_step(c); /* the sample grid is a ceiling of the region's size */
    int64_t nr = rois->dims[0], ch = x->dims[1], ydims[4] = {nr, ch, s.oh, s.ow};
    double *xv = eval_doubles(c, x), *rv = xv ? eval_doubles(c, rois) : NULL;
    const uint8_t *ib = rv ? eval_bytes(c, bi) : NULL;
    Tensor *y = ib ? eval_out(c, 0, x->dtype, 4, ydims) : NULL;
    double *out = y ? arena_alloc(c->arena, (size_t)(ch * s.oh * s.ow) * sizeof *out) : NULL;
    if (!out)
        return y ? EVAL_OOM : ib ? eval_out_failed(c) : (c->why ? EVAL_DECLINE : EVAL_OOM);
    size_t per = (size_t)(ch * s.oh * s.ow), size = dtype_size(x->dtype);
    for (int64_t r = 0; r < nr; r++) {
        int64_t b = eval_index_at(bi, ib, (size_t)r, x->dims[0]);
        if (b < 0 || eval_load(bi->dtype, ib + (size_t)r * dtype_size(bi->dtype)).i < 0)
            return eval_decline(c, "a batch index out of range");
        roi_one(&s, rv + r * 4, xv + b * ch * s.height * s.width, ch, out);
        for (size_t k = 0; k < per; k++)
            eval_store(x->dtype, (uint8_t *)y->data + ((size_t)r * per + k) * size,
                       (EvalNum){.f = out[k]});
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "RoiAlign", 10, eval_roi_align},
    {"", "RoiAlign", 16, eval_roi_align},
};

const OpKernelTable eval_roi_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
