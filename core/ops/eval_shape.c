/* eval_shape.c - kernels of shape and data-movement operations (eval.h):
 * Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand,
 * Tile, Slice, Concat, Split, Gather, GatherElements, ConstantOfShape and
 * Range. Reshapes share their input's bytes; Transpose, Expand, Tile and
 * Slice are element plans (computed while written when large); the others
 * copy in memory. */
#include <math.h>
#include <string.h>

#include "eval.h"

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* An int64 result from n values. */
static int ints_out(EvalCtx *c, size_t i, const int64_t *v, size_t n, bool scalar)
{
    int64_t len = (int64_t)n;
    Tensor *t = eval_out(c, i, DT_INT64, scalar ? 0 : 1, &len);
    if (!t)
        return eval_out_failed(c);
    for (size_t k = 0; k < n; k++)
        eval_store(DT_INT64, (uint8_t *)t->data + 8 * k, (EvalNum){.i = v[k]});
    return EVAL_OK;
}

/* Shape and Size need the input's dims only: any constant will do. */
static const Tensor *dims_in(const EvalCtx *c)
{
    const Tensor *x = c->n_in ? c->in[0] : NULL;
    return x && !x->sparse && tensor_numel(x) >= 0 ? x : NULL;
}

static int eval_shape(EvalCtx *c)
{
    const Tensor *x = dims_in(c);
    if (!x)
        return eval_decline(c, "the input is not a dense constant");
    c->exact = EVAL_CHECKED; /* reads only the shape */
    int64_t r = (int64_t)x->ndims;
    int64_t start = op_attr_int(c->op, "start", 0), end = op_attr_int(c->op, "end", r);
    start = clamp64(start < 0 ? start + r : start, 0, r);
    end = clamp64(end < 0 ? end + r : end, 0, r);
    return ints_out(c, 0, x->dims + start, end > start ? (size_t)(end - start) : 0, false);
}

static int eval_size(EvalCtx *c)
{
    const Tensor *x = dims_in(c);
    if (!x)
        return eval_decline(c, "the input is not a dense constant");
    c->exact = EVAL_CHECKED; /* reads only the shape */
    int64_t n = tensor_numel(x);
    return ints_out(c, 0, &n, 1, true);
}

/* Output 0 is input 0's elements under dims (same count). */
static int reshaped(EvalCtx *c, const Tensor *x, size_t rank, const int64_t *dims)
{
    if (dims_numel(dims, rank) != tensor_numel(x))
        return eval_decline(c, "the new shape holds a different number of elements");
    c->out[0] = tensor_reshaped(c->arena, x, rank, dims);
    return c->out[0] ? EVAL_OK : EVAL_OOM;
}

static int eval_reshape(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t dims[EVAL_MAX_RANK];
    long n;
    const Attr *a = op_attr(c->op, "shape");
    if (c->opset < 5 && a && a->type == ATTR_INTS && a->n <= EVAL_MAX_RANK) {
        n = (long)a->n;
        attr_copy_ints(a, dims);
    } else {
        n = eval_ints(c, 1, dims, EVAL_MAX_RANK);
    }
    if (!x || n < 0)
        return eval_decline(c, "the data or the shape is not a supported constant");
    bool allowzero = op_attr_int(c->op, "allowzero", 0) != 0;
    int64_t known = 1;
    int infer = -1;
    for (long k = 0; k < n; k++) {
        if (dims[k] == 0 && !allowzero) {
            if ((size_t)k >= x->ndims)
                return eval_decline(c, "a 0 in the shape past the input's rank");
            dims[k] = x->dims[k];
        }
        if (dims[k] == -1 && infer < 0)
            infer = (int)k;
        else if (dims[k] < 0 || __builtin_mul_overflow(known, dims[k], &known))
            return eval_decline(c, "an invalid shape");
    }
    if (infer >= 0)
        dims[infer] = known ? tensor_numel(x) / known : 0;
    return reshaped(c, x, (size_t)n, dims);
}

static int eval_flatten(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int axis = x ? (int)op_attr_int(c->op, "axis", 1) : -1;
    axis = x && axis < 0 ? axis + (int)x->ndims : axis;
    if (!x || axis < 0 || axis > (int)x->ndims)
        return eval_decline(c, "an unsupported input or axis");
    int64_t dims[2] = {dims_numel(x->dims, (size_t)axis),
                       dims_numel(x->dims + axis, x->ndims - (size_t)axis)};
    return reshaped(c, x, 2, dims);
}

/* The axes of Squeeze/Unsqueeze/Reduce*: attribute before `input_since`,
 * input 1 from then on. -1 when they cannot be read; 0 with none given. */
static long axes_of(EvalCtx *c, int64_t input_since, size_t slot, int64_t *axes)
{
    if (c->opset >= input_since)
        return slot < c->n_in && c->in[slot] ? eval_ints(c, slot, axes, EVAL_MAX_RANK) : 0;
    return op_attr(c->op, "axes") ? op_attr_ints(c->op, "axes", axes, EVAL_MAX_RANK) : 0;
}

static int eval_squeeze(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t axes[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    long n = axes_of(c, 13, 1, axes);
    if (!x || n < 0)
        return eval_decline(c, "the data or the axes are not a supported constant");
    bool drop[EVAL_MAX_RANK] = {false};
    for (long k = 0; k < n; k++) {
        int a = eval_axis(axes[k], (int)x->ndims);
        if (a < 0 || x->dims[a] != 1)
            return eval_decline(c, "an axis to squeeze is not of size 1");
        drop[a] = true;
    }
    size_t rank = 0;
    for (size_t a = 0; a < x->ndims; a++)
        if (n ? !drop[a] : x->dims[a] != 1)
            dims[rank++] = x->dims[a];
    return reshaped(c, x, rank, dims);
}

static int eval_unsqueeze(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t axes[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    long n = axes_of(c, 13, 1, axes);
    int rank = x ? (int)x->ndims + (int)n : 0;
    if (!x || n <= 0 || rank > EVAL_MAX_RANK)
        return eval_decline(c, "the data or the axes are not a supported constant");
    bool added[EVAL_MAX_RANK] = {false};
    for (long k = 0; k < n; k++) {
        int a = eval_axis(axes[k], rank);
        if (a < 0 || added[a])
            return eval_decline(c, "an invalid axis");
        added[a] = true;
    }
    for (int a = 0, j = 0; a < rank; a++)
        dims[a] = added[a] ? 1 : x->dims[j++];
    return reshaped(c, x, (size_t)rank, dims);
}

static int eval_transpose(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    if (!x)
        return eval_decline(c, "the input is absent or of an unsupported type");
    int rank = (int)x->ndims;
    const Attr *pa = op_attr(c->op, "perm");
    if (pa && (pa->type != ATTR_INTS || pa->n != (size_t)rank))
        return eval_decline(c, "an invalid perm");
    int64_t strides[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    EvalAxis axes[EVAL_MAX_RANK];
    bool seen[EVAL_MAX_RANK] = {false};
    eval_strides(x->dims, x->ndims, strides);
    for (int a = 0; a < rank; a++) {
        int from = pa ? eval_axis(pa->ints[a], rank) : rank - 1 - a;
        if (from < 0 || seen[from])
            return eval_decline(c, "an invalid perm");
        seen[from] = true;
        dims[a] = x->dims[from];
        axes[a] = (EvalAxis){0, 1, 0, strides[from]};
    }
    EvalPlan p;
    eval_plan_init(&p, x->dtype, rank, dims, NULL);
    eval_plan_mapped(&p, x, axes);
    return eval_plan_run(c, &p);
}

static int eval_expand(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t shape[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    long n = eval_ints(c, 1, shape, EVAL_MAX_RANK);
    if (!x || n < 0)
        return eval_decline(c, "the data or the shape is not a supported constant");
    Tensor s = {.ndims = (size_t)n, .dims = shape};
    const Tensor *both[2] = {x, &s};
    int rank = eval_broadcast(both, 2, dims);
    if (rank < 0)
        return eval_decline(c, "the shape does not broadcast with the input");
    EvalPlan p;
    eval_plan_init(&p, x->dtype, rank, dims, NULL);
    eval_plan_broadcast(&p, x);
    return eval_plan_run(c, &p);
}

static int eval_tile(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t reps[EVAL_MAX_RANK], strides[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    long n = eval_ints(c, 1, reps, EVAL_MAX_RANK);
    if (!x || n != (long)x->ndims)
        return eval_decline(c, "the repeats are not one constant per axis");
    EvalAxis axes[EVAL_MAX_RANK];
    eval_strides(x->dims, x->ndims, strides);
    for (long a = 0; a < n; a++) {
        if (reps[a] < 0)
            return eval_decline(c, "a negative repeat");
        dims[a] = x->dims[a] * reps[a];
        axes[a] = (EvalAxis){0, 1, x->dims[a], strides[a]};
    }
    EvalPlan p;
    eval_plan_init(&p, x->dtype, (int)n, dims, NULL);
    eval_plan_mapped(&p, x, axes);
    return eval_plan_run(c, &p);
}

/* Slice's starts, ends, axes and steps (attributes before opset 10). */
typedef struct SliceArgs {
    int64_t starts[EVAL_MAX_RANK], ends[EVAL_MAX_RANK], axes[EVAL_MAX_RANK], steps[EVAL_MAX_RANK];
    long n;
} SliceArgs;

static long attr_ints(const Op *op, const char *name, int64_t *v)
{
    return op_attr_ints(op, name, v, EVAL_MAX_RANK);
}

static int slice_args(EvalCtx *c, SliceArgs *s, int rank)
{
    bool attrs = c->opset < 10;
    s->n = attrs ? attr_ints(c->op, "starts", s->starts) : eval_ints(c, 1, s->starts, EVAL_MAX_RANK);
    long ne = attrs ? attr_ints(c->op, "ends", s->ends) : eval_ints(c, 2, s->ends, EVAL_MAX_RANK);
    bool has_axes = attrs ? op_attr(c->op, "axes") != NULL : c->n_in > 3 && c->in[3];
    bool has_steps = !attrs && c->n_in > 4 && c->in[4];
    long na = !has_axes ? s->n : attrs ? attr_ints(c->op, "axes", s->axes)
                                       : eval_ints(c, 3, s->axes, EVAL_MAX_RANK);
    long ns = has_steps ? eval_ints(c, 4, s->steps, EVAL_MAX_RANK) : s->n;
    if (s->n < 0 || ne != s->n || na != s->n || ns != s->n)
        return -1;
    for (long k = 0; k < s->n; k++) {
        s->axes[k] = has_axes ? eval_axis(s->axes[k], rank) : k;
        s->steps[k] = has_steps ? s->steps[k] : 1;
        if (s->axes[k] < 0 || !s->steps[k])
            return -1;
    }
    return 0;
}

/* Start and count along one axis of size d, as onnx clamps them. */
static void slice_range(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first,
                        int64_t *count)
{
    start = start < 0 ? start + d : start;
    end = end < 0 ? end + d : end;
    if (step > 0) {
        start = clamp64(start, 0, d);
        end = clamp64(end, 0, d);
        *count = end > start ? (end - start + step - 1) / step : 0;
    } else {
        start = clamp64(start, 0, d - 1);
        end = clamp64(end, -1, d - 1);
        *count = start > end ? (start - end - step - 1) / -step : 0;
    }
    *first = start;
}

static int eval_slice(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    SliceArgs s;
    if (!x || slice_args(c, &s, (int)x->ndims))
        return eval_decline(c, "the data or the slice bounds are not supported constants");
    int64_t strides[EVAL_MAX_RANK], dims[EVAL_MAX_RANK];
    EvalAxis axes[EVAL_MAX_RANK];
    eval_strides(x->dims, x->ndims, strides);
    for (size_t a = 0; a < x->ndims; a++) {
        dims[a] = x->dims[a];
        axes[a] = (EvalAxis){0, 1, 0, strides[a]};
    }
    for (long k = 0; k < s.n; k++) {
        int64_t a = s.axes[k], first;
        slice_range(x->dims[a], s.starts[k], s.ends[k], s.steps[k], &first, &dims[a]);
        axes[a] = (EvalAxis){first, s.steps[k], 0, strides[a]};
    }
    EvalPlan p;
    eval_plan_init(&p, x->dtype, (int)x->ndims, dims, NULL);
    eval_plan_mapped(&p, x, axes);
    return eval_plan_run(c, &p);
}

/* Copies count blocks: block b of `len` bytes from src + b*src_pitch to
 * dst + b*dst_pitch. */
static void copy_blocks(uint8_t *dst, size_t dst_pitch, const uint8_t *src, size_t src_pitch,
                        size_t len, size_t count)
{
    for (size_t b = 0; b < count; b++)
        memcpy(dst + b * dst_pitch, src + b * src_pitch, len);
}

static int eval_concat(EvalCtx *c)
{
    const Tensor *x0 = eval_in(c, 0);
    int axis = x0 ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x0->ndims) : -1;
    if (axis < 0)
        return eval_decline(c, "an unsupported input or axis");
    int64_t dims[EVAL_MAX_RANK];
    memcpy(dims, x0->dims, x0->ndims * sizeof *dims);
    dims[axis] = 0;
    for (size_t k = 0; k < c->n_in; k++) {
        const Tensor *x = eval_in(c, k);
        if (!x || x->dtype != x0->dtype || x->ndims != x0->ndims)
            return eval_decline(c, "inputs of different types or ranks");
        for (size_t a = 0; a < x->ndims; a++)
            if ((int)a != axis && x->dims[a] != x0->dims[a])
                return eval_decline(c, "inputs of different shapes");
        dims[axis] += x->dims[axis];
    }
    Tensor *t = eval_out(c, 0, x0->dtype, x0->ndims, dims);
    if (!t)
        return eval_out_failed(c);
    size_t outer = (size_t)dims_numel(dims, (size_t)axis), size = dtype_size(x0->dtype);
    size_t inner = (size_t)dims_numel(dims + axis + 1, x0->ndims - (size_t)axis - 1) * size;
    size_t pitch = (size_t)dims[axis] * inner, at = 0;
    for (size_t k = 0; k < c->n_in; k++) {
        const uint8_t *b = eval_bytes(c, c->in[k]);
        if (!b)
            return eval_out_failed(c);
        size_t len = (size_t)c->in[k]->dims[axis] * inner;
        copy_blocks((uint8_t *)t->data + at, pitch, b, len, len, outer);
        at += len;
    }
    return EVAL_OK;
}

/* Split's part sizes along axis (of size d) into parts (c->n_out of them). */
static int split_sizes(EvalCtx *c, int64_t d, int64_t *parts)
{
    int64_t given[EVAL_MAX_RANK * 4];
    long n = c->opset >= 13 ? (c->n_in > 1 && c->in[1] ? eval_ints(c, 1, given, EVAL_MAX_RANK * 4) : 0)
                            : (op_attr(c->op, "split") ? attr_ints(c->op, "split", given) : 0);
    if (n < 0 || (n && (size_t)n != c->n_out) || !c->n_out || c->n_out > EVAL_MAX_RANK * 4)
        return -1;
    int64_t sum = 0, each = (d + (int64_t)c->n_out - 1) / (int64_t)c->n_out;
    for (size_t k = 0; k < c->n_out; k++) { /* equal parts, the last one smaller (opset 18) */
        parts[k] = n ? given[k] : clamp64(d - each * (int64_t)k, 0, each);
        if (parts[k] < 0)
            return -1;
        sum += parts[k];
    }
    return sum == d && (n || c->opset >= 18 || d % (int64_t)c->n_out == 0) ? 0 : -1;
}

static int eval_split(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : -1;
    int64_t parts[EVAL_MAX_RANK * 4], dims[EVAL_MAX_RANK];
    if (axis < 0 || split_sizes(c, x->dims[axis], parts))
        return eval_decline(c, "an unsupported input, axis or split");
    const uint8_t *b = eval_bytes(c, x);
    if (!b)
        return eval_out_failed(c);
    memcpy(dims, x->dims, x->ndims * sizeof *dims);
    size_t size = dtype_size(x->dtype), outer = (size_t)dims_numel(dims, (size_t)axis);
    size_t inner = (size_t)dims_numel(dims + axis + 1, x->ndims - (size_t)axis - 1) * size;
    size_t pitch = (size_t)x->dims[axis] * inner, at = 0;
    for (size_t k = 0; k < c->n_out; k++) {
        dims[axis] = parts[k];
        Tensor *t = eval_out(c, k, x->dtype, x->ndims, dims);
        if (!t)
            return eval_out_failed(c);
        size_t len = (size_t)parts[k] * inner;
        copy_blocks((uint8_t *)t->data, len, b + at, pitch, len, outer);
        at += len;
    }
    return EVAL_OK;
}

/* Index k of an int32/int64 index tensor, normalised against d; -1 when out
 * of range. */
static int eval_gather(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *idx = eval_in(c, 1);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : -1;
    if (axis < 0 || !eval_index_type(idx) || x->ndims + idx->ndims > EVAL_MAX_RANK + 1)
        return eval_decline(c, "an unsupported input, index type or axis");
    int64_t dims[EVAL_MAX_RANK * 2];
    size_t rank = 0;
    for (int a = 0; a < axis; a++)
        dims[rank++] = x->dims[a];
    for (size_t a = 0; a < idx->ndims; a++)
        dims[rank++] = idx->dims[a];
    for (size_t a = (size_t)axis + 1; a < x->ndims; a++)
        dims[rank++] = x->dims[a];
    const uint8_t *xb = eval_bytes(c, x), *ib = xb ? eval_bytes(c, idx) : NULL;
    Tensor *t = ib && rank <= EVAL_MAX_RANK ? eval_out(c, 0, x->dtype, rank, dims) : NULL;
    if (!t)
        return rank > EVAL_MAX_RANK ? eval_decline(c, "the result's rank is too high")
                                    : eval_out_failed(c);
    size_t size = dtype_size(x->dtype), outer = (size_t)dims_numel(x->dims, (size_t)axis);
    size_t inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1) * size;
    size_t n_idx = (size_t)tensor_numel(idx), d = (size_t)x->dims[axis];
    for (size_t k = 0; k < n_idx; k++) {
        int64_t j = eval_index_at(idx, ib, k, (int64_t)d);
        if (j < 0)
            return eval_decline(c, "an index out of range");
        copy_blocks((uint8_t *)t->data + k * inner, n_idx * inner, xb + (size_t)j * inner,
                    d * inner, inner, outer);
    }
    return EVAL_OK;
}

static int eval_gather_elements(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *idx = eval_in(c, 1);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : -1;
    if (axis < 0 || !eval_index_type(idx) || idx->ndims != x->ndims)
        return eval_decline(c, "an unsupported input, index type or axis");
    const uint8_t *xb = eval_bytes(c, x), *ib = xb ? eval_bytes(c, idx) : NULL;
    Tensor *t = ib ? eval_out(c, 0, x->dtype, idx->ndims, idx->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    int64_t xs[EVAL_MAX_RANK], is[EVAL_MAX_RANK];
    eval_strides(x->dims, x->ndims, xs);
    eval_strides(idx->dims, idx->ndims, is);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(idx);
    for (size_t k = 0; k < n; k++) {
        int64_t from = eval_elements_offset(x, idx, ib, axis, k, xs, is);
        if (from < 0)
            return eval_decline(c, "an index out of range");
        memcpy((uint8_t *)t->data + k * size, xb + (size_t)from * size, size);
    }
    return EVAL_OK;
}

static int eval_constant_of_shape(EvalCtx *c)
{
    int64_t dims[EVAL_MAX_RANK];
    long rank = eval_ints(c, 0, dims, EVAL_MAX_RANK);
    const Attr *a = op_attr(c->op, "value");
    const Tensor *v = a && a->type == ATTR_TENSOR && a->n == 1 ? a->tensors[0] : NULL;
    if (rank < 0 || (a && (!v || !v->data || tensor_numel(v) != 1 || !eval_dtype_ok(v->dtype))))
        return eval_decline(c, "the shape or the value is not a supported constant");
    Tensor *t = eval_out(c, 0, v ? v->dtype : DT_FLOAT, (size_t)rank, dims);
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(t->dtype), n = (size_t)tensor_numel(t);
    for (size_t k = 0; v && k < n; k++) /* without a value: float zeros, as made */
        memcpy((uint8_t *)t->data + k * size, v->data, size);
    return EVAL_OK;
}

/* Range accumulates value += delta in the element type, as onnxruntime. */
static int eval_range(EvalCtx *c)
{
    const Tensor *s = eval_in(c, 0), *l = eval_in(c, 1), *d = eval_in(c, 2);
    if (!s || !l || !d || tensor_numel(s) != 1 || l->dtype != s->dtype || d->dtype != s->dtype ||
        tensor_numel(l) != 1 || tensor_numel(d) != 1 || s->dtype == DT_BOOL)
        return eval_decline(c, "start, limit and delta are not scalars of one type");
    if (eval_any_inexact(c)) /* the count is a ceiling: a step at each integer */
        return eval_decline_step(c);
    const uint8_t *sb = eval_bytes(c, s), *lb = sb ? eval_bytes(c, l) : NULL;
    const uint8_t *db = lb ? eval_bytes(c, d) : NULL;
    if (!db)
        return eval_out_failed(c);
    int32_t dt = s->dtype;
    bool fl = dtype_is_float(dt);
    EvalNum v = eval_load(dt, sb), lim = eval_load(dt, lb), dl = eval_load(dt, db);
    double span = fl ? (lim.f - v.f) / dl.f : ((double)lim.i - (double)v.i) / (double)dl.i;
    if (fl ? dl.f == 0 : dl.i == 0)
        return eval_decline(c, "delta is zero");
    int64_t n = span > 0 ? (int64_t)ceil(span) : 0;
    Tensor *t = eval_out(c, 0, dt, 1, &n);
    if (!t)
        return eval_out_failed(c);
    size_t size = dtype_size(dt);
    for (int64_t k = 0; k < n; k++) {
        uint8_t *p = (uint8_t *)t->data + (size_t)k * size;
        eval_store(dt, p, v);
        v = eval_load(dt, p); /* rounded to the type */
        if (fl)
            v.f += dl.f;
        else
            v.i = (int64_t)((uint64_t)v.i + (uint64_t)dl.i);
    }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "Shape", 1, eval_shape}, {"", "Size", 1, eval_size}, {"", "Reshape", 1, eval_reshape},
    {"", "Flatten", 1, eval_flatten}, {"", "Squeeze", 1, eval_squeeze},
    {"", "Unsqueeze", 1, eval_unsqueeze}, {"", "Transpose", 1, eval_transpose},
    {"", "Expand", 8, eval_expand}, {"", "Tile", 6, eval_tile}, {"", "Slice", 1, eval_slice},
    {"", "Concat", 4, eval_concat}, {"", "Split", 2, eval_split}, {"", "Gather", 1, eval_gather},
    {"", "GatherElements", 11, eval_gather_elements},
    {"", "ConstantOfShape", 9, eval_constant_of_shape}, {"", "Range", 11, eval_range},
};

const OpKernelTable eval_shape_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
