/* eval_index.c - kernels that place elements by computed coordinates
 * (eval.h): Pad, GatherND, OneHot and EyeLike. Computed in memory; no
 * arithmetic, so every result is exact. */
#include <string.h>

#include "eval.h"

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP, PAD_BAD } PadMode;

/* "wrap" before opset 19, and anything unknown, give PAD_BAD. */
static PadMode pad_mode(const EvalCtx *c)
{
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    PadMode m = (PadMode)eval_attr_choice(c->op, "mode", names, sizeof names / sizeof *names);
    return m == PAD_WRAP && c->opset < 19 ? PAD_BAD : m;
}

/* Pad-18's axes (input 3): pads holds a begin and an end for each of them
 * (begins first), every other axis is not padded. -1 when unreadable, or an
 * axis is out of range or named twice. */
static int pad_pads_of_axes(EvalCtx *c, size_t r, int64_t *pads)
{
    int64_t axes[EVAL_MAX_RANK], given[2 * EVAL_MAX_RANK];
    long na = eval_ints(c, 3, axes, EVAL_MAX_RANK);
    if (na < 0 || eval_ints(c, 1, given, 2 * EVAL_MAX_RANK) != 2 * na)
        return -1;
    bool seen[EVAL_MAX_RANK] = {false};
    memset(pads, 0, 2 * r * sizeof *pads);
    for (long k = 0; k < na; k++) {
        int a = eval_axis(axes[k], (int)r);
        if (a < 0 || seen[a])
            return -1;
        seen[a] = true;
        pads[a] = given[k];
        pads[(size_t)a + r] = given[k + na];
    }
    return 0;
}

/* Pads [begins..., ends...] of a rank-r input: the attribute "paddings"
 * (opset 1) or "pads" (2 to 10), input 1 from opset 11, for the axes of
 * input 3 when given (opset 18). -1 when unreadable. */
static int pad_pads(EvalCtx *c, size_t r, int64_t *pads)
{
    long n;
    if (c->opset >= 18 && c->n_in > 3 && c->in[3])
        return pad_pads_of_axes(c, r, pads);
    if (c->opset >= 11)
        n = eval_ints(c, 1, pads, 2 * EVAL_MAX_RANK);
    else
        n = op_attr_ints(c->op, c->opset < 2 ? "paddings" : "pads", pads, 2 * EVAL_MAX_RANK);
    return n == (long)(2 * r) ? 0 : -1;
}

/* The constant: attribute "value" (a float) before opset 11, the optional
 * scalar input 2 (of the data's type) from 11; 0 without either. */
static int pad_value(EvalCtx *c, const Tensor *x, EvalNum *v)
{
    bool fl = dtype_is_float(x->dtype);
    if (c->opset < 11) {
        EvalNum f = {.f = op_attr_float(c->op, "value", 0)};
        *v = eval_convert(f, DT_FLOAT, x->dtype);
        return 0;
    }
    *v = fl ? (EvalNum){.f = 0} : (EvalNum){.i = 0};
    if (c->n_in <= 2 || !c->in[2])
        return 0;
    const Tensor *t = eval_in(c, 2);
    const uint8_t *b = t && t->dtype == x->dtype && tensor_numel(t) == 1 ? eval_bytes(c, t) : NULL;
    if (!b)
        return -1;
    *v = eval_load(t->dtype, b);
    return 0;
}

/* Input coordinate i of an axis of size d after mode's mapping; -1 for the
 * constant. */
static int64_t pad_coord(PadMode mode, int64_t i, int64_t d)
{
    if (i >= 0 && i < d)
        return i;
    if (mode == PAD_EDGE)
        return i < 0 ? 0 : d - 1;
    if (mode == PAD_REFLECT)
        return i < 0 ? -i : 2 * (d - 1) - i;
    if (mode == PAD_WRAP) /* pad_check: at most d on either side */
        return i < 0 ? i + d : i - d;
    return -1;
}

static int pad_check(PadMode mode, const Tensor *x, const int64_t *pads, int64_t *dims)
{
    size_t r = x->ndims;
    for (size_t a = 0; a < r; a++) {
        int64_t d = x->dims[a], lo = pads[a], hi = pads[a + r];
        if (__builtin_add_overflow(d, lo, &dims[a]) ||
            __builtin_add_overflow(dims[a], hi, &dims[a]) || dims[a] < 0 || lo < -d || hi < -d ||
            (mode == PAD_EDGE && !d && (lo > 0 || hi > 0)))
            return -1;
        /* onnxruntime rejects reflection past the far edge. */
        if (mode == PAD_REFLECT && (lo > 0 || hi > 0) && (lo > d - 1 || hi > d - 1))
            return -1;
        /* Wrapping more than once, or after a crop (the spec crops first,
         * then wraps what is left), is left to the runtime. */
        if (mode == PAD_WRAP && (lo < 0 || hi < 0 || lo > d || hi > d))
            return -1;
    }
    return 0;
}

static int eval_pad(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t pads[2 * EVAL_MAX_RANK], dims[EVAL_MAX_RANK], xs[EVAL_MAX_RANK];
    EvalNum value;
    PadMode mode = pad_mode(c);
    if (!x || mode == PAD_BAD || pad_pads(c, x->ndims, pads) ||
        pad_value(c, x, &value) || pad_check(mode, x, pads, dims))
        return eval_decline(c, "an unsupported input, mode or pads");
    const uint8_t *b = eval_bytes(c, x);
    Tensor *t = b ? eval_out(c, 0, x->dtype, x->ndims, dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    eval_strides(x->dims, x->ndims, xs);
    size_t n = (size_t)tensor_numel(t), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++) {
        int64_t off = 0;
        size_t rest = e;
        for (size_t a = x->ndims; a-- > 0 && off >= 0;) {
            int64_t o = (int64_t)(rest % (size_t)dims[a]);
            rest /= (size_t)dims[a];
            int64_t i = pad_coord(mode, o - pads[a], x->dims[a]);
            off = i < 0 ? -1 : off + i * xs[a];
        }
        uint8_t *p = (uint8_t *)t->data + e * size;
        if (off < 0)
            eval_store(x->dtype, p, value);
        else
            memcpy(p, b + (size_t)off * size, size);
    }
    return EVAL_OK;
}

/* GatherND: data [B..., D...], indices [B..., I..., k] with batch_dims B
 * (opset 12); output [B..., I..., D[k:]...]. */
static int eval_gathernd(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *idx = eval_in(c, 1);
    int64_t nb = op_attr_int(c->op, "batch_dims", 0), dims[EVAL_MAX_RANK];
    if (!x || !idx || idx->dtype != DT_INT64 || !idx->ndims || nb < 0 ||
        (size_t)nb >= idx->ndims || (size_t)nb >= x->ndims)
        return eval_decline(c, "an unsupported input or batch_dims");
    size_t b = (size_t)nb, k = (size_t)idx->dims[idx->ndims - 1], rank = 0;
    if (b + k > x->ndims || idx->ndims - 1 + x->ndims - b - k > EVAL_MAX_RANK)
        return eval_decline(c, "indices longer than the data's rank");
    for (size_t a = 0; a < b; a++)
        if (x->dims[a] != idx->dims[a])
            return eval_decline(c, "batch dims that differ");
    for (size_t a = 0; a + 1 < idx->ndims; a++)
        dims[rank++] = idx->dims[a];
    for (size_t a = b + k; a < x->ndims; a++)
        dims[rank++] = x->dims[a];
    const uint8_t *xb = eval_bytes(c, x), *ib = xb ? eval_bytes(c, idx) : NULL;
    Tensor *t = ib ? eval_out(c, 0, x->dtype, rank, dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    int64_t xs[EVAL_MAX_RANK];
    eval_strides(x->dims, x->ndims, xs);
    size_t size = dtype_size(x->dtype), slice = (size_t)dims_numel(x->dims + b + k, x->ndims - b - k);
    size_t batches = (size_t)dims_numel(x->dims, b);
    size_t per = (size_t)dims_numel(idx->dims + b, idx->ndims - 1 - b); /* tuples per batch */
    for (size_t q = 0; q < batches * per; q++) {
        size_t off = q / per * (size_t)(b ? xs[b - 1] : 0);
        for (size_t j = 0; j < k; j++) {
            int64_t i = eval_index_at(idx, ib, q * k + j, x->dims[b + j]);
            if (i < 0)
                return eval_decline(c, "an index out of range");
            off += (size_t)(i * xs[b + j]);
        }
        memcpy((uint8_t *)t->data + q * slice * size, xb + off * size, slice * size);
    }
    return EVAL_OK;
}

/* Element k of a numeric tensor as an integer (floats truncated, as
 * onnxruntime casts OneHot's indices and depth). */
static int64_t as_int(const Tensor *t, const uint8_t *b, size_t k)
{
    return eval_convert(eval_load(t->dtype, b + k * dtype_size(t->dtype)), t->dtype, DT_INT64).i;
}

/* OneHot: values[1] where the output's coordinate on `axis` equals the
 * index (negative ones counted from depth), values[0] elsewhere. */
static int eval_onehot(EvalCtx *c)
{
    const Tensor *idx = eval_in(c, 0), *dep = eval_in(c, 1), *val = eval_in(c, 2);
    if (!idx || !dep || !val || tensor_numel(dep) != 1 || tensor_numel(val) != 2 ||
        idx->dtype == DT_BOOL || idx->ndims + 1 > EVAL_MAX_RANK)
        return eval_decline(c, "unsupported indices, depth or values");
    if (idx->inexact || dep->inexact) /* float indices or depth truncated: a step at each integer */
        return eval_decline_step(c);
    int axis = eval_axis(op_attr_int(c->op, "axis", -1), (int)idx->ndims + 1);
    const uint8_t *ib = eval_bytes(c, idx), *db = ib ? eval_bytes(c, dep) : NULL;
    const uint8_t *vb = db ? eval_bytes(c, val) : NULL;
    if (!vb)
        return eval_out_failed(c);
    int64_t depth = as_int(dep, db, 0), dims[EVAL_MAX_RANK];
    if (axis < 0 || depth <= 0)
        return eval_decline(c, "an unsupported axis or depth");
    for (int a = 0, j = 0; a <= (int)idx->ndims; a++)
        dims[a] = a == axis ? depth : idx->dims[j++];
    Tensor *t = eval_out(c, 0, val->dtype, idx->ndims + 1, dims);
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(val->dtype), n = (size_t)tensor_numel(t);
    size_t inner = (size_t)dims_numel(dims + axis + 1, idx->ndims - (size_t)axis);
    for (size_t e = 0; e < n; e++) {
        size_t in = e % inner, o = e / inner / (size_t)depth, d = e / inner % (size_t)depth;
        int64_t i = as_int(idx, ib, o * inner + in);
        i = i < 0 && c->opset >= 11 ? i + depth : i; /* negative from opset 11 */
        memcpy((uint8_t *)t->data + e * size, vb + (i == (int64_t)d ? size : 0), size);
    }
    return EVAL_OK;
}

/* EyeLike: ones on the k-th diagonal of a 2-D shape, in attribute dtype
 * (the input's type when absent). */
static int eval_eyelike(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int32_t dt = x ? (int32_t)op_attr_int(c->op, "dtype", x->dtype) : 0;
    if (!x || x->ndims != 2 || !eval_dtype_ok(dt))
        return eval_decline(c, "an unsupported input or dtype");
    c->exact = EVAL_CHECKED; /* reads only the input's shape */
    Tensor *t = eval_out(c, 0, dt, 2, x->dims);
    if (!t)
        return eval_out_failed(c);
    int64_t k = op_attr_int(c->op, "k", 0), cols = x->dims[1];
    EvalNum one = dtype_is_float(dt) ? (EvalNum){.f = 1} : (EvalNum){.i = 1};
    for (int64_t i = 0; i < x->dims[0]; i++)
        if (i + k >= 0 && i + k < cols)
            eval_store(dt, (uint8_t *)t->data + (size_t)(i * cols + i + k) * dtype_size(dt), one);
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "Pad", 1, eval_pad},         {"", "GatherND", 11, eval_gathernd},
    {"", "OneHot", 9, eval_onehot},   {"", "EyeLike", 9, eval_eyelike},
};

const OpKernelTable eval_index_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
