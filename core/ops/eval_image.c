/* eval_image.c - kernels that move or gather image elements (eval.h):
 * DepthToSpace (DCR and CRD), SpaceToDepth, CenterCropPad, Col2Im and
 * MaxUnpool. For the reference interpreter only (formatter/fold.c never
 * folds these ops). All but Col2Im only move elements (exact); Col2Im sums
 * overlapping blocks in double and rounds once.
 *
 * MaxUnpool with an output_shape other than the one its attributes give
 * declines: onnxruntime places the indices in the output_shape tensor, onnx's
 * reference in the inferred one and pads after (its backend case). */
#include <stdint.h>
#include <string.h>

#include "eval.h"

/* DepthToSpace [N, C, H, W] -> [N, C/(b*b), H*b, W*b]; DCR reads channel
 * (i*b + j)*C' + c for block offset (i, j), CRD (c*b + i)*b + j. */
static int eval_depth_to_space(EvalCtx *c)
{
    static const char *const modes[] = {"DCR", "CRD"};
    const Tensor *x = eval_in(c, 0);
    int64_t b = op_attr_int(c->op, "blocksize", 0);
    int mode = eval_attr_choice(c->op, "mode", modes, 2);
    if (!x || x->ndims != 4 || b < 1 || mode == 2 || x->dims[1] % (b * b))
        return eval_decline(c, "an unsupported input, blocksize or mode");
    const uint8_t *xb = eval_bytes(c, x);
    int64_t n = x->dims[0], ch = x->dims[1] / (b * b), h = x->dims[2], w = x->dims[3];
    int64_t ydims[4] = {n, ch, h * b, w * b};
    Tensor *y = xb ? eval_out(c, 0, x->dtype, 4, ydims) : NULL;
    if (!y)
        return xb ? eval_out_failed(c) : EVAL_DECLINE;
    size_t size = dtype_size(x->dtype);
    uint8_t *dst = (uint8_t *)y->data;
    for (int64_t in = 0; in < n; in++)
        for (int64_t k = 0; k < ch; k++)
            for (int64_t r = 0; r < h * b; r++)
                for (int64_t q = 0; q < w * b; q++, dst += size) {
                    int64_t i = r % b, j = q % b;
                    int64_t src_c = mode == 0 ? (i * b + j) * ch + k : (k * b + i) * b + j;
                    int64_t at = ((in * x->dims[1] + src_c) * h + r / b) * w + q / b;
                    memcpy(dst, xb + (size_t)at * size, size);
                }
    return EVAL_OK;
}

/* SpaceToDepth [N, C, H, W] -> [N, C*b*b, H/b, W/b]: output channel
 * (i*b + j)*C + c holds the block offset (i, j) of channel c, or with
 * SpaceToDepth-28's mode CRD channel (c*b + i)*b + j. */
static int eval_space_to_depth(EvalCtx *c)
{
    static const char *const modes[] = {"DCR", "CRD"};
    const Tensor *x = eval_in(c, 0);
    int64_t b = op_attr_int(c->op, "blocksize", 0);
    int mode = eval_attr_choice(c->op, "mode", modes, 2);
    if (!x || x->ndims != 4 || b < 1 || mode == 2 || x->dims[2] % b || x->dims[3] % b)
        return eval_decline(c, "an unsupported input, blocksize or mode");
    const uint8_t *xb = eval_bytes(c, x);
    int64_t n = x->dims[0], ch = x->dims[1], h = x->dims[2] / b, w = x->dims[3] / b;
    int64_t ydims[4] = {n, ch * b * b, h, w};
    Tensor *y = xb ? eval_out(c, 0, x->dtype, 4, ydims) : NULL;
    if (!y)
        return xb ? eval_out_failed(c) : EVAL_DECLINE;
    size_t size = dtype_size(x->dtype);
    uint8_t *dst = (uint8_t *)y->data;
    for (int64_t in = 0; in < n; in++)
        for (int64_t oc = 0; oc < ch * b * b; oc++)
            for (int64_t r = 0; r < h; r++)
                for (int64_t q = 0; q < w; q++, dst += size) {
                    int64_t k = mode ? oc / (b * b) : oc % ch;
                    int64_t i = mode ? oc / b % b : oc / ch / b, j = mode ? oc % b : oc / ch % b;
                    int64_t at = ((in * ch + k) * x->dims[2] + r * b + i) * x->dims[3] + q * b + j;
                    memcpy(dst, xb + (size_t)at * size, size);
                }
    return EVAL_OK;
}

/* CenterCropPad-18: each of `axes` (default all) cropped or zero-padded to
 * shape's size around its centre; an odd difference puts the extra element
 * at the end. */
static int eval_center_crop_pad(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t shape[EVAL_MAX_RANK], axes[EVAL_MAX_RANK], ydims[EVAL_MAX_RANK], shift[EVAL_MAX_RANK];
    const Attr *at = op_attr(c->op, "axes");
    long n_shape = eval_ints(c, 1, shape, EVAL_MAX_RANK);
    size_t n_axes = at ? at->n : x ? x->ndims : 0;
    if (!x || n_shape < 0 || (size_t)n_shape != n_axes || n_axes > EVAL_MAX_RANK ||
        (at && (at->type != ATTR_INTS || op_attr_ints_or(c->op, "axes", axes, n_axes, 0))))
        return eval_decline(c, "an unsupported input, shape or axes");
    memcpy(ydims, x->dims, x->ndims * sizeof *ydims);
    memset(shift, 0, sizeof shift);
    for (size_t k = 0; k < n_axes; k++) {
        int a = eval_axis(at ? axes[k] : (int64_t)k, (int)x->ndims);
        if (a < 0 || shape[k] < 0)
            return eval_decline(c, "an axis out of range or a negative size");
        ydims[a] = shape[k];
        shift[a] = (shape[k] - x->dims[a]) / 2; /* toward zero: the extra element at the end */
    }
    const uint8_t *xb = eval_bytes(c, x);
    Tensor *y = xb ? eval_out(c, 0, x->dtype, x->ndims, ydims) : NULL;
    if (!y)
        return xb ? eval_out_failed(c) : EVAL_DECLINE;
    int64_t xs[EVAL_MAX_RANK], idx[EVAL_MAX_RANK] = {0};
    eval_strides(x->dims, x->ndims, xs);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(y);
    for (size_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (size_t a = 0; a < x->ndims && off >= 0; a++) {
            int64_t i = idx[a] - shift[a];
            off = i < 0 || i >= x->dims[a] ? -1 : off + i * xs[a];
        }
        if (off >= 0)
            memcpy((uint8_t *)y->data + e * size, xb + (size_t)off * size, size);
        for (int a = (int)x->ndims - 1; a >= 0 && ++idx[a] == ydims[a]; a--)
            idx[a] = 0;
    }
    return EVAL_OK;
}

/* Col2Im's geometry: image dims, block dims, and per axis stride, dilation
 * and head padding, the count of block positions. */
typedef struct Col2Im {
    int sp;
    int64_t image[EVAL_MAX_RANK], block[EVAL_MAX_RANK], blocks[EVAL_MAX_RANK];
    int64_t stride[EVAL_MAX_RANK], dil[EVAL_MAX_RANK], pads[2 * EVAL_MAX_RANK];
    int64_t kernel, positions; /* elements of a block, block positions */
} Col2Im;

static int col2im_geometry(EvalCtx *c, const Tensor *x, Col2Im *g)
{
    long ni = eval_ints(c, 1, g->image, EVAL_MAX_RANK - 2);
    long nb = eval_ints(c, 2, g->block, EVAL_MAX_RANK - 2);
    g->sp = (int)ni;
    if (ni < 1 || ni != nb || x->ndims != 3 ||
        op_attr_ints_or(c->op, "strides", g->stride, (size_t)ni, 1) ||
        op_attr_ints_or(c->op, "dilations", g->dil, (size_t)ni, 1) ||
        op_attr_ints_or(c->op, "pads", g->pads, 2 * (size_t)ni, 0))
        return -1;
    g->kernel = 1;
    g->positions = 1;
    for (int i = 0; i < g->sp; i++) {
        int64_t ek = (g->block[i] - 1) * g->dil[i] + 1;
        if (g->block[i] < 1 || g->stride[i] < 1 || g->dil[i] < 1 || g->image[i] < 0)
            return -1;
        g->blocks[i] = (g->image[i] + g->pads[i] + g->pads[g->sp + i] - ek) / g->stride[i] + 1;
        if (g->blocks[i] < 1)
            return -1;
        g->kernel *= g->block[i];
        g->positions *= g->blocks[i];
    }
    return x->dims[1] % g->kernel || x->dims[2] != g->positions ? -1 : 0;
}

/* Adds block column (kernel offset k, all block positions) of x's row into
 * image plane y (doubles). */
static void col2im_add(const Col2Im *g, const double *row, int64_t k, double *plane)
{
    int64_t ko[EVAL_MAX_RANK], bo[EVAL_MAX_RANK] = {0}, rest = k;
    for (int i = g->sp - 1; i >= 0; i--) {
        ko[i] = rest % g->block[i];
        rest /= g->block[i];
    }
    for (int64_t p = 0; p < g->positions; p++) {
        int64_t at = 0;
        for (int i = 0; i < g->sp && at >= 0; i++) {
            int64_t o = bo[i] * g->stride[i] - g->pads[i] + ko[i] * g->dil[i];
            at = o < 0 || o >= g->image[i] ? -1 : at * g->image[i] + o;
        }
        if (at >= 0)
            plane[at] += row[p];
        for (int i = g->sp - 1; i >= 0 && ++bo[i] == g->blocks[i]; i--)
            bo[i] = 0;
    }
}

/* Col2Im-18: [N, C*prod(block_shape), L] -> [N, C, image_shape...], the
 * blocks summed where they overlap. */
static int eval_col2im(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    Col2Im g;
    if (!x || !dtype_is_float(x->dtype) || col2im_geometry(c, x, &g))
        return eval_decline(c, "an unsupported input, image_shape, block_shape or attribute");
    int64_t ydims[EVAL_MAX_RANK] = {x->dims[0], x->dims[1] / g.kernel};
    memcpy(ydims + 2, g.image, (size_t)g.sp * sizeof *ydims);
    double *v = eval_doubles(c, x);
    Tensor *y = v ? eval_out(c, 0, x->dtype, (size_t)g.sp + 2, ydims) : NULL;
    if (!y)
        return v ? eval_out_failed(c) : (c->why ? EVAL_DECLINE : EVAL_OOM);
    size_t plane = (size_t)dims_numel(g.image, (size_t)g.sp), size = dtype_size(x->dtype);
    double *acc = arena_alloc(c->arena, (plane + 1) * sizeof *acc);
    if (!acc)
        return EVAL_OOM;
    for (int64_t n = 0; n < ydims[0] * ydims[1]; n++) {
        memset(acc, 0, plane * sizeof *acc);
        for (int64_t k = 0; k < g.kernel; k++)
            col2im_add(&g, v + (size_t)((n * g.kernel + k) * g.positions), k, acc);
        for (size_t e = 0; e < plane; e++)
            eval_store(y->dtype, (uint8_t *)y->data + ((size_t)n * plane + e) * size,
                       (EvalNum){.f = acc[e]});
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* MaxUnpool: X's elements at the flat positions I gives in a zero tensor
 * of (in - 1) * stride - pads + kernel per spatial axis. */
static int eval_max_unpool(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *ind = eval_in(c, 1);
    int64_t ks[EVAL_MAX_RANK], st[EVAL_MAX_RANK], pads[2 * EVAL_MAX_RANK], ydims[EVAL_MAX_RANK];
    int64_t given[EVAL_MAX_RANK];
    size_t sp = x ? x->ndims - 2 : 0;
    const Attr *ka = op_attr(c->op, "kernel_shape");
    if (!x || !ind || x->ndims < 3 || x->ndims > EVAL_MAX_RANK || !ka || ka->n != sp ||
        ind->dtype != DT_INT64 || tensor_numel(ind) != tensor_numel(x) ||
        op_attr_ints_or(c->op, "kernel_shape", ks, sp, 0) ||
        op_attr_ints_or(c->op, "strides", st, sp, 1) ||
        op_attr_ints_or(c->op, "pads", pads, 2 * sp, 0))
        return eval_decline(c, "an unsupported input, indices or attribute");
    ydims[0] = x->dims[0];
    ydims[1] = x->dims[1];
    for (size_t i = 0; i < sp; i++)
        ydims[2 + i] = (x->dims[2 + i] - 1) * st[i] - pads[i] - pads[sp + i] + ks[i];
    long n_given = c->n_in > 2 && c->in[2] ? eval_ints(c, 2, given, EVAL_MAX_RANK) : 0;
    if (n_given < 0 || (n_given && (n_given != (long)x->ndims ||
                                    memcmp(given, ydims, x->ndims * sizeof *given))))
        return eval_decline(c, "an output_shape other than the inferred one");
    const uint8_t *xb = eval_bytes(c, x), *ib = xb ? eval_bytes(c, ind) : NULL;
    Tensor *y = ib ? eval_out(c, 0, x->dtype, x->ndims, ydims) : NULL;
    if (!y)
        return ib ? eval_out_failed(c) : EVAL_DECLINE;
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(x);
    int64_t total = tensor_numel(y);
    for (size_t e = 0; e < n; e++) {
        int64_t at = eval_load(DT_INT64, ib + e * 8).i;
        if (at < 0 || at >= total)
            return eval_decline(c, "an index out of range");
        memcpy((uint8_t *)y->data + (size_t)at * size, xb + e * size, size);
    }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "DepthToSpace", 1, eval_depth_to_space},
    {"", "SpaceToDepth", 1, eval_space_to_depth},
    {"", "CenterCropPad", 18, eval_center_crop_pad},
    {"", "Col2Im", 18, eval_col2im},
    {"", "MaxUnpool", 9, eval_max_unpool},
};

const OpKernelTable eval_image_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
