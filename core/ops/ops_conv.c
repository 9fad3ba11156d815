/* ops_conv.c - rules for convolution, pooling, normalisation and matrix
 * products: Conv, ConvTranspose, Max/Average/LpPool, the global pools,
 * BatchNormalization, LayerNormalization, RMSNormalization, Gemm, MatMul.
 * Spatial sizes follow the operators' formulas with symbolic dims (floor
 * division by a stride stays exact only when provable, else the dim is a
 * fresh symbol). */
#include <string.h>

#include "ops.h"

enum { CONV_MAX_SPATIAL = 8 };

typedef enum ConvPad { PAD_NOTSET, PAD_SAME, PAD_VALID } ConvPad;

typedef struct ConvGeom {
    int n; /* spatial rank */
    int64_t kernel[CONV_MAX_SPATIAL], stride[CONV_MAX_SPATIAL], dilation[CONV_MAX_SPATIAL];
    int64_t pads[2 * CONV_MAX_SPATIAL], out_pad[CONV_MAX_SPATIAL];
    bool kernel_known;
    ConvPad pad;
    bool ceil_mode;
} ConvGeom;

static ConvPad conv_auto_pad(const Op *op)
{
    const Attr *a = op_attr(op, "auto_pad");
    if (!a || a->type != ATTR_STRING)
        return PAD_NOTSET;
    if (a->s.len >= 4 && !memcmp(a->s.ptr, "SAME", 4))
        return PAD_SAME;
    return a->s.len == 5 && !memcmp(a->s.ptr, "VALID", 5) ? PAD_VALID : PAD_NOTSET;
}

/* Geometry the size formulas can take without int64 overflow: each
 * value within +-2^31 (real models are far below). */
static int conv_geom_bounded(InferCtx *c, const ConvGeom *g)
{
    const int64_t lim = INT32_MAX;
    for (int i = 0; i < g->n; i++) {
        int64_t v[6] = {g->kernel[i], g->stride[i], g->dilation[i], g->pads[i], g->pads[i + g->n],
                        g->out_pad[i]};
        for (int k = 0; k < 6; k++)
            if (v[k] > lim || v[k] < -lim)
                return infer_bad(c, "geometry attribute out of range");
    }
    return 0;
}

/* Reads the geometry attributes for n spatial axes; the kernel from
 * kernel_shape, else from the weight's static dims (w, may be NULL). */
static int conv_geom(InferCtx *c, int n, const InferFact *w, ConvGeom *g)
{
    const Op *op = c->op;
    g->n = n;
    g->pad = conv_auto_pad(op);
    g->ceil_mode = op_attr_int(op, "ceil_mode", 0) != 0;
    if (n > CONV_MAX_SPATIAL || op_attr_ints_or(op, "strides", g->stride, (size_t)n, 1) ||
        op_attr_ints_or(op, "dilations", g->dilation, (size_t)n, 1) ||
        op_attr_ints_or(op, "pads", g->pads, 2 * (size_t)n, 0) ||
        op_attr_ints_or(op, "output_padding", g->out_pad, (size_t)n, 0))
        return infer_bad(c, "geometry attributes do not match %d spatial axes", n);
    g->kernel_known = op_attr(op, "kernel_shape") != NULL;
    if (op_attr_ints_or(op, "kernel_shape", g->kernel, (size_t)n, 0))
        return infer_bad(c, "kernel_shape does not match %d spatial axes", n);
    if (!g->kernel_known && w && w->rank == n + 2) {
        g->kernel_known = true;
        for (int i = 0; i < n; i++) {
            g->kernel_known &= dim_is_const(w->dims[i + 2]);
            g->kernel[i] = dim_value(w->dims[i + 2]);
        }
    }
    for (int i = 0; i < n; i++)
        if (g->stride[i] <= 0 || g->dilation[i] <= 0)
            return infer_bad(c, "strides and dilations must be positive");
    return conv_geom_bounded(c, g);
}

/* Pooling with ceil_mode: ceil(span/s) + 1 windows, but a window that would
 * start in the end padding is dropped (onnxruntime does; the operator text
 * says so since onnx 1.16), while onnx 1.12's inference keeps it. Where the
 * two differ the dim is a fresh symbol: the exact size would contradict
 * onnx's checker, onnx's size onnxruntime's planner. The last window starts
 * at ceil(span/s)*s <= x + pads - ek + s - 1, inside x + pad_begin for every
 * x when pad_end + s - 1 < ek. */
static Dim pool_ceil_dim(InferCtx *c, const ConvGeom *g, int i, Dim x, Dim span, int64_t ek)
{
    DimTable *dt = c->dt;
    int64_t s = g->stride[i], begin = g->pad == PAD_VALID ? 0 : g->pads[i];
    int64_t end = g->pad == PAD_VALID ? 0 : g->pads[i + g->n];
    Dim steps = dim_ceildiv(dt, span, s);
    bool inside = dim_is_const(x) && dim_is_const(steps)
                      ? dim_value(steps) * s < dim_value(x) + begin
                      : end + s - 1 < ek;
    return inside ? dim_add(dt, steps, dim_const(dt, 1)) : dim_fresh(dt);
}

/* Output size of spatial axis i for input size x (Conv and pooling). */
static Dim conv_out_dim(InferCtx *c, const ConvGeom *g, int i, Dim x)
{
    DimTable *dt = c->dt;
    int64_t s = g->stride[i];
    if (g->pad == PAD_SAME)
        return dim_ceildiv(dt, x, s);
    if (!g->kernel_known)
        return dim_fresh(dt);
    int64_t ek = (g->kernel[i] - 1) * g->dilation[i] + 1;
    int64_t pads = g->pad == PAD_VALID ? 0 : g->pads[i] + g->pads[i + g->n];
    Dim span = dim_add(dt, x, dim_const(dt, pads - ek));
    if (g->ceil_mode)
        return pool_ceil_dim(c, g, i, x, span, ek);
    return dim_add(dt, dim_floordiv(dt, span, s), dim_const(dt, 1));
}

/* Output size of ConvTranspose axis i: s*(x-1) + out_pad + ek - pads. Under
 * SAME padding x*s, less what padding cannot take away when out_pad + ek < s
 * (onnxruntime pads by max(0, out_pad + ek - s), onnx agrees); with an
 * out_pad, onnx 1.12's inference says x*s + out_pad where onnxruntime keeps
 * x*s: a fresh symbol, which neither contradicts. */
static Dim convt_out_dim(InferCtx *c, const ConvGeom *g, int i, Dim x)
{
    DimTable *dt = c->dt;
    Dim sx = dim_mul(dt, x, dim_const(dt, g->stride[i]));
    if (!g->kernel_known)
        return dim_fresh(dt);
    int64_t ek = (g->kernel[i] - 1) * g->dilation[i] + 1;
    if (g->pad == PAD_SAME && g->out_pad[i])
        return dim_fresh(dt);
    if (g->pad == PAD_SAME)
        return ek < g->stride[i] ? dim_add(dt, sx, dim_const(dt, ek - g->stride[i])) : sx;
    int64_t pads = g->pad == PAD_VALID ? 0 : g->pads[i] + g->pads[i + g->n];
    return dim_add(dt, sx, dim_const(dt, g->out_pad[i] + ek - pads - g->stride[i]));
}

/* The rank of a conv-like op: the input's, else the weight's. */
static int conv_rank(InferCtx *c)
{
    int r = infer_in_rank(c, 0);
    return r >= 0 ? r : infer_in_rank(c, 1);
}

/* N, channels, then each spatial axis through out_dim. */
static int conv_finish(InferCtx *c, int rank, const ConvGeom *g, Dim channels, bool transpose,
                       int32_t dtype)
{
    const InferFact *x = infer_in(c, 0);
    Dim *d = infer_dims_new(c, rank);
    if (!d)
        return -1;
    d[0] = x->rank == rank ? x->dims[0] : dim_fresh(c->dt);
    d[1] = channels;
    for (int i = 0; i < rank - 2; i++) {
        Dim in = x->rank == rank ? x->dims[i + 2] : dim_fresh(c->dt);
        d[i + 2] = transpose ? convt_out_dim(c, g, i, in) : conv_out_dim(c, g, i, in);
    }
    return infer_set(c, 0, dtype, rank, d);
}

/* A forward convolution of input 0 by the weight at input w_in; the
 * output has dtype (0: unknown). */
static int conv_forward(InferCtx *c, size_t w_in, int32_t dtype)
{
    const InferFact *w = infer_in(c, w_in);
    int rank = infer_in_rank(c, 0) >= 0 ? infer_in_rank(c, 0) : w->rank;
    if (rank < 0)
        return infer_set_dtype(c, 0, dtype);
    if (rank < 3)
        return infer_bad(c, "input rank %d is below 3", rank);
    ConvGeom g;
    if (conv_geom(c, rank - 2, w, &g))
        return -1;
    Dim m = w->rank == rank ? w->dims[0] : dim_fresh(c->dt);
    return conv_finish(c, rank, &g, m, false, dtype);
}

static int conv_conv(InferCtx *c) { return conv_forward(c, 1, infer_in(c, 0)->dtype); }
static int conv_conv_integer(InferCtx *c) { return conv_forward(c, 1, DT_INT32); }
/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) */
static int conv_qlinear(InferCtx *c) { return conv_forward(c, 3, infer_in(c, 7)->dtype); }

static int conv_transpose(InferCtx *c)
{
    const InferFact *w = infer_in(c, 1);
    int rank = conv_rank(c);
    if (rank < 3)
        return rank < 0 ? infer_set_dtype(c, 0, infer_in(c, 0)->dtype)
                        : infer_bad(c, "input rank %d is below 3", rank);
    ConvGeom g;
    if (conv_geom(c, rank - 2, w, &g))
        return -1;
    int64_t group = op_attr_int(c->op, "group", 1);
    Dim m = w->rank == rank ? dim_mul(c->dt, w->dims[1], dim_const(c->dt, group)) : dim_fresh(c->dt);
    const Attr *os = op_attr(c->op, "output_shape");
    if (os && os->type == ATTR_INTS && (os->n == (size_t)rank - 2 || os->n == (size_t)rank)) {
        const InferFact *x = infer_in(c, 0);
        Dim d[2 + CONV_MAX_SPATIAL];
        d[0] = x->rank == rank ? x->dims[0] : dim_fresh(c->dt);
        d[1] = m;
        for (int i = 0; i < rank - 2; i++)
            d[i + 2] = dim_const(c->dt, os->ints[os->n - (size_t)(rank - 2) + (size_t)i]);
        return infer_set(c, 0, x->dtype, rank, d);
    }
    return conv_finish(c, rank, &g, m, true, infer_in(c, 0)->dtype);
}

static int conv_pool(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0)
        return infer_set_dtype(c, 0, x->dtype);
    if (x->rank < 3)
        return infer_bad(c, "input rank %d is below 3", x->rank);
    ConvGeom g;
    if (conv_geom(c, x->rank - 2, NULL, &g))
        return -1;
    if (!g.kernel_known && g.pad != PAD_SAME)
        return infer_bad(c, "kernel_shape is missing");
    if (conv_finish(c, x->rank, &g, x->dims[1], false, x->dtype))
        return -1;
    /* MaxPool's Indices: int64, the shape of Y */
    return c->n_out > 1 ? infer_set(c, 1, DT_INT64, c->out[0].rank, c->out[0].dims) : 0;
}

/* MaxUnpool: output_shape when given, else the inverse of the pooling:
 * (x - 1) * stride + kernel - pads, which is ConvTranspose's formula. */
static int conv_maxunpool(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *shape = infer_in(c, 2);
    if (x->rank < 3 || x->rank > 2 + CONV_MAX_SPATIAL)
        return infer_set(c, 0, x->dtype, x->rank, NULL);
    if (infer_has_in(c, 2)) {
        Dim d[2 + CONV_MAX_SPATIAL];
        if (!shape->value || shape->n_value != (size_t)x->rank)
            return infer_set(c, 0, x->dtype, x->rank, NULL);
        for (int i = 0; i < x->rank; i++)
            d[i] = shape->value[i] ? shape->value[i] : dim_fresh(c->dt);
        return infer_set(c, 0, x->dtype, x->rank, d);
    }
    ConvGeom g;
    if (conv_geom(c, x->rank - 2, NULL, &g))
        return -1;
    return conv_finish(c, x->rank, &g, x->dims[1], true, x->dtype);
}

static int conv_global_pool(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0)
        return infer_set_dtype(c, 0, x->dtype);
    if (x->rank < 2)
        return infer_bad(c, "input rank %d is below 2", x->rank);
    Dim *d = infer_dims_new(c, x->rank);
    if (!d)
        return -1;
    for (int i = 0; i < x->rank; i++)
        d[i] = i < 2 ? x->dims[i] : dim_const(c->dt, 1);
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* Y like X; the optional statistics outputs like the mean and variance
 * inputs (running or saved, per channel). */
static int conv_batchnorm(InferCtx *c)
{
    if (infer_copy(c, 0, 0))
        return -1;
    for (size_t i = 1; i < c->n_out; i++)
        if (infer_copy(c, i, i % 2 ? 3 : 4))
            return -1;
    return 0;
}

/* Y like X; Mean and InvStdDev keep X's leading axes, 1 from axis on. */
static int conv_layernorm(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_copy(c, 0, 0))
        return -1;
    if (c->n_out < 2 || x->rank < 0)
        return 0;
    int axis = infer_axis(op_attr_int(c->op, "axis", -1), x->rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim *d = infer_dims_new(c, x->rank);
    if (!d)
        return -1;
    for (int i = 0; i < x->rank; i++)
        d[i] = i < axis ? x->dims[i] : dim_const(c->dt, 1);
    int32_t stash = (int32_t)op_attr_int(c->op, "stash_type", DT_FLOAT);
    for (size_t i = 1; i < c->n_out; i++)
        if (infer_set(c, i, stash, x->rank, d))
            return -1;
    return 0;
}

static int conv_gemm(InferCtx *c)
{
    const InferFact *a = infer_in(c, 0), *b = infer_in(c, 1);
    if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
        return infer_bad(c, "Gemm inputs must be 2-D");
    bool ta = op_attr_int(c->op, "transA", 0), tb = op_attr_int(c->op, "transB", 0);
    Dim d[2];
    d[0] = a->rank == 2 ? a->dims[ta ? 1 : 0] : dim_fresh(c->dt);
    d[1] = b->rank == 2 ? b->dims[tb ? 0 : 1] : dim_fresh(c->dt);
    return infer_set(c, 0, a->dtype, 2, d);
}

/* numpy matmul: 1-D operands get a 1 prepended/appended and then removed;
 * the batch axes broadcast. */
static int conv_matmul_shape(InferCtx *c, int32_t dtype)
{
    const InferFact *a = infer_in(c, 0), *b = infer_in(c, 1);
    if (a->rank < 0 || b->rank < 0)
        return infer_set_dtype(c, 0, dtype);
    if (a->rank == 0 || b->rank == 0)
        return infer_bad(c, "MatMul operands must not be scalars");
    int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    InferFact fa = {0, ba, a->dims, NULL, 0, FACT_TENSOR};
    InferFact fb = {0, bb, b->dims, NULL, 0, FACT_TENSOR}, batch;
    const InferFact *both[2] = {&fa, &fb};
    if (infer_broadcast(c, both, 2, &batch))
        return -1;
    int rank = batch.rank + (a->rank > 1) + (b->rank > 1);
    Dim *d = infer_dims_new(c, rank);
    if (!d)
        return -1;
    memcpy(d, batch.dims, (size_t)batch.rank * sizeof *d);
    int k = batch.rank;
    if (a->rank > 1)
        d[k++] = a->dims[a->rank - 2];
    if (b->rank > 1)
        d[k++] = b->dims[b->rank - 1];
    return infer_set(c, 0, dtype, rank, d);
}

static int conv_matmul(InferCtx *c) { return conv_matmul_shape(c, infer_in(c, 0)->dtype); }
static int conv_matmul_integer(InferCtx *c) { return conv_matmul_shape(c, DT_INT32); }

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): the
 * MatMul of inputs 0 and 3, typed like the output zero point. */
static int conv_qlinear_matmul(InferCtx *c)
{
    const InferFact *saved = c->in[1];
    c->in[1] = c->in[3];
    int rc = conv_matmul_shape(c, infer_in(c, 7)->dtype);
    c->in[1] = saved;
    return rc;
}

/* --- Einsum --- */

enum { EINSUM_MAX = 16 };

typedef struct Einsum {
    Dim letter[52];   /* dim of each subscript letter (a-z, A-Z) seen */
    int count[52];    /* occurrences over the inputs */
    InferFact ell[EINSUM_MAX]; /* each input's "..." dims */
    size_t n_ell;
} Einsum;

static int einsum_index(char ch)
{
    return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 26 : -1;
}

/* Reads one input's subscripts (term of length len) against its fact. */
static int einsum_term(Einsum *e, const char *term, size_t len, const InferFact *x)
{
    const char *dots = memchr(term, '.', len);
    size_t letters = len - (dots ? 3 : 0);
    if (x->rank < 0 || (size_t)x->rank < letters || (!dots && (size_t)x->rank != letters) ||
        e->n_ell == EINSUM_MAX)
        return -1;
    int n_ell = x->rank - (int)letters, axis = 0;
    e->ell[e->n_ell++] =
        (InferFact){0, n_ell, x->dims + (dots ? dots - term : 0), NULL, 0, FACT_TENSOR};
    for (size_t i = 0; i < len; i++) {
        if (term[i] == '.') {
            axis += n_ell;
            i += 2;
            continue;
        }
        int k = einsum_index(term[i]);
        if (k < 0)
            return -1;
        Dim d = x->dims[axis++];
        if (!e->letter[k] || (dim_is_const(d) && dim_value(d) != 1))
            e->letter[k] = d;
        e->count[k]++;
    }
    return 0;
}

/* The output: explicit subscripts after "->" ("..." for the broadcast
 * ellipsis dims), else the ellipsis dims then the letters used once, in
 * ASCII order (ONNX's implicit mode). */
static int einsum_output(InferCtx *c, const Einsum *e, const char *out, const InferFact *ell)
{
    Dim d[EINSUM_MAX + 52];
    int n = 0;
    int32_t dtype = infer_in(c, 0)->dtype;
    if (!out) {
        for (int i = 0; i < ell->rank; i++)
            d[n++] = ell->dims[i];
        for (char ch = 'A'; ch <= 'z'; ch++) {
            int k = einsum_index(ch);
            if (k >= 0 && e->count[k] == 1 && n < EINSUM_MAX + 52)
                d[n++] = e->letter[k];
        }
        return infer_set(c, 0, dtype, n, d);
    }
    for (const char *p = out; *p; p++) {
        if (*p == '.') {
            for (int i = 0; i < ell->rank && n < EINSUM_MAX + 52; i++)
                d[n++] = ell->dims[i];
            p += p[1] == '.' && p[2] == '.' ? 2 : 0;
            continue;
        }
        int k = einsum_index(*p);
        if (k < 0 || !e->letter[k] || n == EINSUM_MAX + 52)
            return infer_set_dtype(c, 0, dtype);
        d[n++] = e->letter[k];
    }
    return infer_set(c, 0, dtype, n, d);
}

static int conv_einsum(InferCtx *c)
{
    const Attr *a = op_attr(c->op, "equation");
    char eq[256];
    size_t n = 0;
    for (size_t i = 0; a && a->type == ATTR_STRING && i < a->s.len && n + 1 < sizeof eq; i++)
        if (a->s.ptr[i] != ' ')
            eq[n++] = (char)a->s.ptr[i];
    eq[n] = '\0';
    char *arrow = strstr(eq, "->");
    if (arrow)
        *arrow = '\0';
    Einsum e = {{NULL}, {0}, {{0}}, 0};
    size_t k = 0;
    for (char *t = eq, *comma; t; t = comma ? comma + 1 : NULL, k++) {
        comma = strchr(t, ',');
        size_t len = comma ? (size_t)(comma - t) : strlen(t);
        if (k >= c->n_in || einsum_term(&e, t, len, infer_in(c, k)))
            return infer_set_dtype(c, 0, infer_in(c, 0)->dtype);
    }
    const InferFact *ells[EINSUM_MAX];
    InferFact ell;
    for (size_t i = 0; i < e.n_ell; i++)
        ells[i] = &e.ell[i];
    if (k != c->n_in || infer_broadcast(c, ells, e.n_ell, &ell))
        return infer_set_dtype(c, 0, infer_in(c, 0)->dtype);
    return einsum_output(c, &e, arrow ? arrow + 2 : NULL, &ell);
}

static const OpSchema ops_conv[] = {
    {"", "Conv", 1, 2, 3, 1, 1, conv_conv},
    {"", "ConvInteger", 10, 2, 4, 1, 1, conv_conv_integer},
    {"", "QLinearConv", 10, 8, 9, 1, 1, conv_qlinear},
    {"", "ConvTranspose", 1, 2, 3, 1, 1, conv_transpose},
    {"", "MaxPool", 1, 1, 1, 1, 2, conv_pool},
    {"", "AveragePool", 1, 1, 1, 1, 1, conv_pool},
    {"", "LpPool", 1, 1, 1, 1, 1, conv_pool},
    {"", "MaxUnpool", 9, 2, 3, 1, 1, conv_maxunpool},
    {"", "GlobalAveragePool", 1, 1, 1, 1, 1, conv_global_pool},
    {"", "GlobalMaxPool", 1, 1, 1, 1, 1, conv_global_pool},
    {"", "GlobalLpPool", 1, 1, 1, 1, 1, conv_global_pool},
    {"", "BatchNormalization", 1, 5, 5, 1, 5, conv_batchnorm},
    {"", "LayerNormalization", 17, 2, 3, 1, 3, conv_layernorm},
    {"com.microsoft", "LayerNormalization", 1, 2, 3, 1, 3, conv_layernorm},
    {"", "RMSNormalization", 23, 2, 2, 1, 1, conv_layernorm}, /* Y only: x's type and shape */
    {"", "GroupNormalization", 18, 3, 3, 1, 1, conv_batchnorm},
    {"", "Gemm", 1, 2, 3, 1, 1, conv_gemm},
    {"", "MatMul", 1, 2, 2, 1, 1, conv_matmul},
    {"", "Einsum", 12, 1, OPS_VARIADIC, 1, 1, conv_einsum},
    {"", "MatMulInteger", 10, 2, 4, 1, 1, conv_matmul_integer},
    {"", "QLinearMatMul", 10, 8, 8, 1, 1, conv_qlinear_matmul},
};

const OpTable ops_conv_table = {ops_conv, sizeof ops_conv / sizeof ops_conv[0]};
