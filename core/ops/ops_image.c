/* ops_image.c - rules for the image-layout operators of opset 18 on:
 * Col2Im-18 (columns back to an image), CenterCropPad-18 (crop or pad
 * chosen axes to given sizes), AffineGrid-20 (the sampling grid of an affine
 * transform, GridSample's input) and ImageDecoder-20 (an encoded image to
 * [H, W, C] uint8, sizes known only at run time). */
#include "ops.h"

enum { IMAGE_MAX = 64 };

/* [N, C * prod(block_shape), L] with image_shape and block_shape (inputs
 * 1 and 2) -> [N, C, *image_shape]. */
static int image_col2im(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int64_t image[IMAGE_MAX], block[IMAGE_MAX];
    long ni = infer_in_ints(c, 1, image, IMAGE_MAX - 2);
    long nb = infer_in_ints(c, 2, block, IMAGE_MAX);
    if (ni < 0 || x->rank != 3)
        return infer_set(c, 0, x->dtype, ni < 0 ? -1 : (int)ni + 2, NULL);
    Dim d[IMAGE_MAX];
    d[0] = x->dims[0];
    int64_t prod = 1;
    for (long i = 0; i < nb && prod > 0; i++)
        prod = block[i] > 0 && prod <= INT64_MAX / block[i] ? prod * block[i] : 0;
    d[1] = nb == ni && prod > 0 ? dim_div_exact(c->dt, x->dims[1], prod) : dim_fresh(c->dt);
    for (long i = 0; i < ni; i++)
        d[i + 2] = dim_const(c->dt, image[i]);
    return infer_set(c, 0, x->dtype, (int)ni + 2, d);
}

/* The input's shape with each axis listed (all of them by default) set to
 * the matching entry of shape (input 1). */
static int image_center_crop_pad(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int64_t sizes[IMAGE_MAX], axes[IMAGE_MAX];
    long ns = infer_in_ints(c, 1, sizes, IMAGE_MAX);
    long na = op_attr_ints(c->op, "axes", axes, IMAGE_MAX);
    if (x->rank < 0 || x->rank > IMAGE_MAX || ns < 0)
        return infer_set(c, 0, x->dtype, x->rank, NULL);
    for (long i = 0; na < 0 && i < x->rank; i++)
        axes[i] = i;
    if (na < 0)
        na = x->rank;
    if (na != ns)
        return infer_bad(c, "shape has %ld entries for %ld axes", ns, na);
    Dim d[IMAGE_MAX];
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dims[i];
    for (long i = 0; i < na; i++) {
        int a = infer_axis(axes[i], x->rank);
        if (a < 0)
            return infer_bad(c, "axis %lld out of range", (long long)axes[i]);
        d[a] = dim_const(c->dt, sizes[i]);
    }
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* theta [N, 2, 3] with size [N, C, H, W] -> [N, H, W, 2]; theta [N, 3, 4]
 * with size [N, C, D, H, W] -> [N, D, H, W, 3]. */
static int image_affine_grid(InferCtx *c)
{
    const InferFact *theta = infer_in(c, 0);
    int64_t size[5];
    long n = infer_in_ints(c, 1, size, 5);
    if (n != 4 && n != 5)
        return infer_set_dtype(c, 0, theta->dtype);
    Dim d[5];
    d[0] = dim_const(c->dt, size[0]);
    for (long i = 2; i < n; i++)
        d[i - 1] = dim_const(c->dt, size[i]);
    d[n - 1] = dim_const(c->dt, n - 2);
    return infer_set(c, 0, theta->dtype, (int)n, d);
}

static int image_decoder(InferCtx *c) { return infer_set(c, 0, DT_UINT8, 3, NULL); }

static const OpSchema ops_image[] = {
    {"", "Col2Im", 18, 3, 3, 1, 1, image_col2im},
    {"", "CenterCropPad", 18, 2, 2, 1, 1, image_center_crop_pad},
    {"", "AffineGrid", 20, 2, 2, 1, 1, image_affine_grid},
    {"", "ImageDecoder", 20, 1, 1, 1, 1, image_decoder},
};

const OpTable ops_image_table = {ops_image, sizeof ops_image / sizeof ops_image[0]};
