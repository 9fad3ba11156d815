/* eval_data.c - kernels whose result depends on the input's values, not
 * only its shape (eval.h), for the reference interpreter: NonZero (the
 * coordinates of the elements that are not zero), Compress (the slices a
 * bool condition keeps), Unique (distinct elements or slices, their first
 * positions, the inverse map and counts) and ReverseSequence (each batch
 * entry's first sequence_lens steps reversed) and TensorScatter (a KV
 * cache with each batch entry's update written from its index along an
 * axis, wrapping in circular mode). They move elements, so
 * their results are exact; a value test on an inexact float (is it zero,
 * are two equal) declines as a step (eval.h, Exactness). */
#include <string.h>

#include "eval.h"

/* Outer, axis and inner extents of dims around axis. */
static void data_split(const Tensor *x, int axis, size_t *outer, size_t *len, size_t *inner)
{
    *outer = (size_t)dims_numel(x->dims, (size_t)axis);
    *len = (size_t)x->dims[axis];
    *inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 1);
}

/* --- NonZero --- */

static bool data_is_zero(int32_t dt, const uint8_t *p)
{
    EvalNum v = eval_load(dt, p);
    return dtype_is_float(dt) ? v.f == 0 : v.i == 0;
}

/* Is some element of an inexact float x within a few ulps of zero? */
static bool data_near_zero(const EvalCtx *c, const Tensor *x, const uint8_t *b)
{
    if (!dtype_is_float(x->dtype) || !eval_any_inexact(c))
        return false;
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++)
        if (eval_near_step(x->dtype, eval_load(x->dtype, b + e * size).f, 0))
            return true;
    return false;
}

/* [rank, count] int64 coordinates, in row-major order of the elements. */
static int eval_nonzero(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    const uint8_t *b = x ? eval_bytes(c, x) : NULL;
    if (!b || !x->ndims)
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unsupported input or a scalar");
    if (data_near_zero(c, x, b))
        return eval_decline_step(c);
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype), count = 0;
    for (size_t e = 0; e < n; e++)
        count += !data_is_zero(x->dtype, b + e * size);
    Tensor *y = eval_out(c, 0, DT_INT64, 2, (int64_t[]){(int64_t)x->ndims, (int64_t)count});
    if (!y)
        return eval_out_failed(c);
    uint8_t *out = (uint8_t *)y->data;
    for (size_t e = 0, k = 0; e < n; e++) {
        if (data_is_zero(x->dtype, b + e * size))
            continue;
        size_t rest = e;
        for (size_t a = x->ndims; a-- > 0;) {
            int64_t coord = (int64_t)(rest % (size_t)x->dims[a]);
            rest /= (size_t)x->dims[a];
            eval_store(DT_INT64, out + (a * count + k) * 8, (EvalNum){.i = coord});
        }
        k++;
    }
    c->exact = EVAL_CHECKED;
    return EVAL_OK;
}

/* --- Compress --- */

/* Keeps the slices along axis (of x flattened, without one) whose
 * condition is true; a condition shorter than the axis drops the rest. */
static int eval_compress(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *cond = eval_in(c, 1);
    const uint8_t *xb = x ? eval_bytes(c, x) : NULL, *cb = xb && cond ? eval_bytes(c, cond) : NULL;
    if (!cb || cond->dtype != DT_BOOL || cond->ndims != 1)
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unsupported input or condition");
    const Attr *has_axis = op_attr(c->op, "axis");
    int64_t flat = tensor_numel(x);
    Tensor view = *x;
    if (!has_axis) {
        view.ndims = 1;
        view.dims = &flat;
    }
    int axis = has_axis ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : 0;
    if (axis < 0 || cond->dims[0] > view.dims[axis])
        return eval_decline(c, "an axis out of range or a condition longer than it");
    size_t outer, len, inner, size = dtype_size(x->dtype), kept = 0;
    data_split(&view, axis, &outer, &len, &inner);
    for (int64_t j = 0; j < cond->dims[0]; j++)
        kept += cb[j] != 0;
    int64_t dims[EVAL_MAX_RANK];
    memcpy(dims, view.dims, view.ndims * sizeof *dims);
    dims[axis] = (int64_t)kept;
    Tensor *y = eval_out(c, 0, x->dtype, view.ndims, dims);
    if (!y)
        return eval_out_failed(c);
    uint8_t *out = (uint8_t *)y->data;
    for (size_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < cond->dims[0]; j++)
            if (cb[j]) {
                memcpy(out, xb + (o * len + (size_t)j) * inner * size, inner * size);
                out += inner * size;
            }
    return EVAL_OK;
}

/* --- Unique --- */

/* The slices of Unique: len slices of outer x inner elements. */
typedef struct UniqueSlices {
    const uint8_t *b;
    int32_t dt;
    size_t outer, len, inner, size;
} UniqueSlices;

/* Slices j and k compared element by element, in order (numpy's
 * lexicographic order of rows). */
static int unique_cmp(const UniqueSlices *s, size_t j, size_t k)
{
    for (size_t o = 0; o < s->outer; o++)
        for (size_t i = 0; i < s->inner; i++) {
            EvalNum a = eval_load(s->dt, s->b + ((o * s->len + j) * s->inner + i) * s->size);
            EvalNum b = eval_load(s->dt, s->b + ((o * s->len + k) * s->inner + i) * s->size);
            int r = dtype_is_float(s->dt) ? (a.f > b.f) - (a.f < b.f)
                    : s->dt == DT_UINT64 ? ((uint64_t)a.i > (uint64_t)b.i) -
                                               ((uint64_t)a.i < (uint64_t)b.i)
                                         : (a.i > b.i) - (a.i < b.i);
            if (r)
                return r;
        }
    return 0;
}

/* A stable merge sort of the slice numbers idx[n] (tmp as scratch): equal
 * slices keep their order, so the first of each run is its first position. */
static void unique_sort(const UniqueSlices *s, size_t *idx, size_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2, i = 0, j = h, k = 0;
    unique_sort(s, idx, tmp, h);
    unique_sort(s, idx + h, tmp, n - h);
    while (i < h || j < n)
        tmp[k++] = j >= n || (i < h && unique_cmp(s, idx[i], idx[j]) <= 0) ? idx[i++] : idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

/* Does an inexact float, or a NaN (which numpy and onnxruntime order
 * differently), make the slices' equality uncertain? */
static bool unique_uncertain(const EvalCtx *c, const Tensor *x, const uint8_t *b)
{
    if (!dtype_is_float(x->dtype))
        return false;
    if (eval_any_inexact(c))
        return true;
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++) {
        double v = eval_load(x->dtype, b + e * size).f;
        if (v != v)
            return true;
    }
    return false;
}

/* The distinct slices as groups: order[] holds the slice numbers sorted,
 * group[k] the group of slice k, first[g] and count[g] each group's first
 * slice and size; groups numbered by value. */
static size_t unique_groups(const UniqueSlices *s, const size_t *order, size_t *group,
                            size_t *first, int64_t *count)
{
    size_t n_groups = 0;
    for (size_t r = 0; r < s->len; r++) {
        if (!r || unique_cmp(s, order[r - 1], order[r])) {
            first[n_groups] = order[r];
            count[n_groups++] = 0;
        }
        group[order[r]] = n_groups - 1;
        count[n_groups - 1]++;
    }
    return n_groups;
}

/* sorted = 0: the groups renumbered by first position (rank, first2 and
 * count2 as scratch). */
static void unique_by_position(size_t len, size_t ng, size_t *group, size_t *first,
                               int64_t *count, size_t *rank, size_t *first2, int64_t *count2)
{
    size_t next = 0;
    for (size_t k = 0; k < len; k++)
        if (first[group[k]] == k)
            rank[group[k]] = next++;
    for (size_t g = 0; g < ng; g++) {
        first2[rank[g]] = first[g];
        count2[rank[g]] = count[g];
    }
    memcpy(first, first2, ng * sizeof *first);
    memcpy(count, count2, ng * sizeof *count);
    for (size_t k = 0; k < len; k++)
        group[k] = rank[group[k]];
}

static int unique_write(EvalCtx *c, const Tensor *x, const UniqueSlices *s, int axis,
                        const size_t *first, const size_t *group, const int64_t *count, size_t ng)
{
    int64_t dims[EVAL_MAX_RANK], flat = (int64_t)ng, len = (int64_t)s->len;
    bool flat_x = axis < 0;
    if (!flat_x)
        memcpy(dims, x->dims, x->ndims * sizeof *dims);
    dims[flat_x ? 0 : axis] = flat;
    Tensor *y = eval_out(c, 0, x->dtype, flat_x ? 1 : x->ndims, dims);
    Tensor *ix = y && c->n_out > 1 ? eval_out(c, 1, DT_INT64, 1, &flat) : NULL;
    Tensor *inv = ix && c->n_out > 2 ? eval_out(c, 2, DT_INT64, 1, &len) : NULL;
    Tensor *cnt = inv && c->n_out > 3 ? eval_out(c, 3, DT_INT64, 1, &flat) : NULL;
    if (!y || (c->n_out > 1 && !ix) || (c->n_out > 2 && !inv) || (c->n_out > 3 && !cnt))
        return eval_out_failed(c);
    size_t row = s->inner * s->size;
    for (size_t o = 0; o < s->outer; o++)
        for (size_t g = 0; g < ng; g++)
            memcpy((uint8_t *)y->data + (o * ng + g) * row, s->b + (o * s->len + first[g]) * row,
                   row);
    for (size_t g = 0; ix && g < ng; g++)
        eval_store(DT_INT64, (uint8_t *)ix->data + g * 8, (EvalNum){.i = (int64_t)first[g]});
    for (size_t k = 0; inv && k < s->len; k++)
        eval_store(DT_INT64, (uint8_t *)inv->data + k * 8, (EvalNum){.i = (int64_t)group[k]});
    for (size_t g = 0; cnt && g < ng; g++)
        eval_store(DT_INT64, (uint8_t *)cnt->data + g * 8, (EvalNum){.i = count[g]});
    return EVAL_OK;
}

static int eval_unique(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    const uint8_t *b = x ? eval_bytes(c, x) : NULL;
    if (!b || c->n_out > 4)
        return c->why ? EVAL_DECLINE : eval_decline(c, "an unsupported input");
    if (unique_uncertain(c, x, b))
        return eval_decline(c, "a NaN or an inexact float, whose equality is uncertain");
    const Attr *has_axis = op_attr(c->op, "axis");
    int axis = has_axis ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : -1;
    if (has_axis && axis < 0)
        return eval_decline(c, "an axis out of range");
    UniqueSlices s = {b, x->dtype, 1, (size_t)tensor_numel(x), 1, dtype_size(x->dtype)};
    if (has_axis)
        data_split(x, axis, &s.outer, &s.len, &s.inner);
    size_t n = s.len ? s.len : 1;
    size_t *order = arena_array(c->arena, n, sizeof *order);
    size_t *tmp = order ? arena_array(c->arena, n, sizeof *tmp) : NULL;
    size_t *group = tmp ? arena_array(c->arena, n, sizeof *group) : NULL;
    size_t *first = group ? arena_array(c->arena, n, sizeof *first) : NULL;
    int64_t *count = first ? arena_array(c->arena, n, sizeof *count) : NULL;
    int64_t *count2 = count ? arena_array(c->arena, n, sizeof *count2) : NULL;
    if (!count2)
        return EVAL_OOM;
    for (size_t k = 0; k < s.len; k++)
        order[k] = k;
    unique_sort(&s, order, tmp, s.len);
    size_t ng = unique_groups(&s, order, group, first, count);
    if (!op_attr_int(c->op, "sorted", 1))
        unique_by_position(s.len, ng, group, first, count, order, tmp, count2);
    return unique_write(c, x, &s, axis, first, group, count, ng);
}

/* --- ReverseSequence --- */

static int eval_reverse_sequence(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *lens = eval_in(c, 1);
    int64_t ba = op_attr_int(c->op, "batch_axis", 1), ta = op_attr_int(c->op, "time_axis", 0);
    const uint8_t *xb = x ? eval_bytes(c, x) : NULL;
    const uint8_t *lb = xb && eval_index_type(lens) ? eval_bytes(c, lens) : NULL;
    if (!lb || x->ndims < 2 || ba == ta || ba < 0 || ba > 1 || ta < 0 || ta > 1 ||
        lens->ndims != 1 || lens->dims[0] != x->dims[ba])
        return c->why ? EVAL_DECLINE : eval_decline(c, "unsupported inputs or axes");
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    int64_t strides[EVAL_MAX_RANK], steps = x->dims[ta];
    eval_strides(x->dims, x->ndims, strides);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(x);
    for (size_t e = 0; e < n; e++) {
        int64_t t = (int64_t)e / strides[ta] % steps, bi = (int64_t)e / strides[ba] % x->dims[ba];
        int64_t len = eval_load(lens->dtype, lb + (size_t)bi * dtype_size(lens->dtype)).i;
        if (len < 0 || len > steps)
            return eval_decline(c, "a sequence length outside the time axis");
        int64_t from = t < len ? (int64_t)e + (len - 1 - 2 * t) * strides[ta] : (int64_t)e;
        memcpy((uint8_t *)y->data + e * size, xb + (size_t)from * size, size);
    }
    return EVAL_OK;
}

/* --- TensorScatter --- */

/* Batch entry b's write index (0 without write_indices). */
static int64_t scatter_start(const Tensor *idx, const uint8_t *ib, int64_t b)
{
    if (!idx)
        return 0;
    return eval_load(idx->dtype, ib + (size_t)b * dtype_size(idx->dtype)).i;
}

static int eval_tensor_scatter(EvalCtx *c)
{
    static const char *const modes[] = {"linear", "circular"};
    const Tensor *x = eval_in(c, 0), *u = eval_in(c, 1), *idx = eval_in(c, 2);
    int mode = eval_attr_choice(c->op, "mode", modes, 2);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -2), (int)x->ndims) : -1;
    const uint8_t *xb = axis >= 1 && u ? eval_bytes(c, x) : NULL;
    const uint8_t *ub = xb ? eval_bytes(c, u) : NULL;
    const uint8_t *ib = ub && idx ? eval_bytes(c, idx) : NULL;
    bool ok = ub && mode < 2 && u->dtype == x->dtype && u->ndims == x->ndims &&
              (!idx || (ib && eval_index_type(idx) && tensor_numel(idx) == x->dims[0]));
    for (size_t a = 0; ok && a < x->ndims; a++)
        ok = (int)a == axis ? u->dims[a] <= x->dims[a] : u->dims[a] == x->dims[a];
    if (!ok || (c->n_in > 2 && c->in[2] && !idx))
        return c->why ? EVAL_DECLINE : eval_decline(c, "unsupported inputs, axis or mode");
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    memcpy((uint8_t *)y->data, xb, y->nbytes);
    size_t outer, len, inner, ulen = (size_t)u->dims[axis], size = dtype_size(x->dtype);
    data_split(x, axis, &outer, &len, &inner);
    size_t per_batch = outer / (size_t)x->dims[0];
    for (size_t o = 0; o < outer; o++) {
        int64_t start = scatter_start(idx, ib, (int64_t)(o / per_batch));
        for (size_t t = 0; t < ulen; t++) {
            int64_t at = start + (int64_t)t;
            at = mode == 1 && len ? ((at % (int64_t)len) + (int64_t)len) % (int64_t)len : at;
            if (at < 0 || at >= (int64_t)len)
                return eval_decline(c, "a write index past the cache");
            memcpy((uint8_t *)y->data + ((o * len + (size_t)at) * inner) * size,
                   ub + ((o * ulen + t) * inner) * size, inner * size);
        }
    }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "NonZero", 9, eval_nonzero},
    {"", "Compress", 9, eval_compress},
    {"", "Unique", 11, eval_unique},
    {"", "ReverseSequence", 10, eval_reverse_sequence},
    {"", "TensorScatter", 24, eval_tensor_scatter},
};

const OpKernelTable eval_data_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
