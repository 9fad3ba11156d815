/* ops_shape.c - rules for operators that move, cut or build shapes:
 * Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
 * Split, Slice, Gather*, Expand, Tile, ConstantOfShape, Range, NonZero,
 * Constant, DepthToSpace, SpaceToDepth.
 *
 * Shape-like integer tensors carry their contents (dims, possibly symbolic)
 * through Shape, Gather, Slice, Squeeze, Unsqueeze, Concat and Reshape, so
 * that the Reshape, Expand or Range that finally reads them resolves. */
#include <string.h>

#include "ops.h"

enum { SHAPE_MAX = 64 };

/* Input i's integer contents (NULL entries unknown): the count, or -1. */
static long shape_in_vals(const InferCtx *c, size_t i, Dim *v)
{
    const InferFact *f = infer_in(c, i);
    if (!f->value || f->n_value > SHAPE_MAX)
        return -1;
    memcpy(v, f->value, f->n_value * sizeof *v);
    return (long)f->n_value;
}

/* The ints attribute name: its length, or -1 when absent or too long. */
static long shape_attr_ints(const Op *op, const char *name, int64_t *v)
{
    return op_attr_ints(op, name, v, SHAPE_MAX);
}

/* Axes from the attribute (older versions) or from input i (newer):
 * count, -1 absent, -2 present but unknown. */
static long shape_axes(const InferCtx *c, int64_t *axes, size_t input, bool from_input)
{
    if (!from_input)
        return shape_attr_ints(c->op, "axes", axes);
    if (!infer_has_in(c, input))
        return -1;
    long n = infer_in_ints(c, input, axes, SHAPE_MAX);
    return n < 0 ? -2 : n;
}

static bool shape_const_is(Dim d, int64_t v) { return d && dim_is_const(d) && dim_value(d) == v; }

/* Shape (start/end since 15): int64 [n], contents the dims. */
static int shape_shape(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0)
        return infer_set(c, 0, DT_INT64, 1, NULL);
    int64_t r = x->rank, s = op_attr_int(c->op, "start", 0), e = op_attr_int(c->op, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    int64_t n = e > s ? e - s : 0;
    Dim len = dim_const(c->dt, n);
    if (infer_set(c, 0, DT_INT64, 1, &len))
        return -1;
    return infer_set_value(c, 0, x->dims + s, (size_t)n);
}

static int shape_size(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_set(c, 0, DT_INT64, 0, NULL))
        return -1;
    if (x->rank < 0)
        return 0;
    Dim n = infer_dims_product(c, x, 0, x->rank);
    return infer_set_value(c, 0, &n, 1);
}

/* The -1 at d[neg] of a Reshape of x to d[n]: x's element count over the
 * other output dims, each dim the two sides share (the same handle: a dim
 * copied by 0, or equal) cancelled first, so that [s+1, b, 2, 32] to
 * [s+1, b, -1] gives 64 where dividing the products (2 polynomials) could
 * not. */
static Dim shape_reshape_rest(InferCtx *c, const InferFact *x, const Dim *d, long n, long neg)
{
    bool used[SHAPE_MAX] = {false};
    Dim num = dim_const(c->dt, 1), den = dim_const(c->dt, 1);
    if (x->rank > SHAPE_MAX)
        return dim_fresh(c->dt);
    for (long i = 0; i < n; i++) {
        int k = 0;
        while (i != neg && k < x->rank && (used[k] || x->dims[k] != d[i]))
            k++;
        if (i != neg && k < x->rank)
            used[k] = true;
        else if (i != neg)
            den = dim_mul(c->dt, den, d[i]);
    }
    for (int k = 0; k < x->rank; k++)
        num = used[k] ? num : dim_mul(c->dt, num, x->dims[k]);
    return dim_div_exact_dim(c->dt, num, den);
}

/* Output dim i of a Reshape to t (n entries): 0 copies the input's dim
 * unless allowzero, -1 is solved from the element count. */
static int shape_reshape_to(InferCtx *c, const Dim *t, long n)
{
    const InferFact *x = infer_in(c, 0);
    bool allowzero = op_attr_int(c->op, "allowzero", 0) != 0, unknown = x->rank < 0;
    Dim d[SHAPE_MAX];
    long neg = -1;
    for (long i = 0; i < n; i++) {
        d[i] = t[i];
        if (!t[i]) {
            d[i] = dim_fresh(c->dt);
            unknown = true;
        } else if (shape_const_is(t[i], 0) && !allowzero) {
            unknown |= x->rank <= i;
            d[i] = x->rank > i ? x->dims[i] : dim_fresh(c->dt);
        } else if (shape_const_is(t[i], -1)) {
            if (neg >= 0)
                return infer_bad(c, "more than one -1 in the target shape");
            neg = i;
        } else if (dim_is_const(t[i]) && dim_value(t[i]) < -1) {
            return infer_bad(c, "negative target dim %lld", (long long)dim_value(t[i]));
        }
    }
    if (neg >= 0)
        d[neg] = unknown ? dim_fresh(c->dt) : shape_reshape_rest(c, x, d, n, neg);
    if (infer_set(c, 0, x->dtype, (int)n, d))
        return -1;
    return x->value ? infer_set_value(c, 0, x->value, x->n_value) : 0;
}

static int shape_reshape(InferCtx *c)
{
    Dim t[SHAPE_MAX];
    long n = shape_in_vals(c, 1, t);
    if (n >= 0)
        return shape_reshape_to(c, t, n);
    const InferFact *s = infer_in(c, 1);
    int rank = s->rank == 1 && dim_is_const(s->dims[0]) ? (int)dim_value(s->dims[0]) : -1;
    return infer_set(c, 0, infer_in(c, 0)->dtype, rank <= SHAPE_MAX ? rank : -1, NULL);
}

static int shape_reshape_1(InferCtx *c)
{
    int64_t v[SHAPE_MAX];
    Dim t[SHAPE_MAX];
    long n = shape_attr_ints(c->op, "shape", v);
    if (n < 0)
        return infer_set_dtype(c, 0, infer_in(c, 0)->dtype);
    for (long i = 0; i < n; i++)
        t[i] = dim_const(c->dt, v[i]);
    return shape_reshape_to(c, t, n);
}

static int shape_flatten(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int64_t axis = op_attr_int(c->op, "axis", 1);
    if (x->rank < 0)
        return infer_set(c, 0, x->dtype, 2, NULL);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return infer_bad(c, "axis out of range");
    Dim d[2] = {infer_dims_product(c, x, 0, (int)axis),
                infer_dims_product(c, x, (int)axis, x->rank)};
    return infer_set(c, 0, x->dtype, 2, d);
}

/* Marks the normalised axes in mark (rank entries); -1 on a bad or
 * repeated axis. */
static int shape_mark_axes(InferCtx *c, const int64_t *axes, long n, int rank, bool *mark)
{
    memset(mark, 0, (size_t)rank * sizeof *mark);
    for (long i = 0; i < n; i++) {
        int a = infer_axis(axes[i], rank);
        if (a < 0 || mark[a])
            return infer_bad(c, "axis %lld out of range or repeated", (long long)axes[i]);
        mark[a] = true;
    }
    return 0;
}

static int shape_squeeze_with(InferCtx *c, const int64_t *axes, long n)
{
    const InferFact *x = infer_in(c, 0);
    bool mark[SHAPE_MAX];
    if (x->rank < 0 || x->rank > SHAPE_MAX || n == -2)
        return infer_set_dtype(c, 0, x->dtype);
    if (n >= 0 && shape_mark_axes(c, axes, n, x->rank, mark))
        return -1;
    for (int i = 0; n < 0 && i < x->rank; i++) { /* no axes: every 1 goes */
        if (!dim_is_const(x->dims[i]))
            return infer_set_dtype(c, 0, x->dtype);
        mark[i] = dim_value(x->dims[i]) == 1;
    }
    Dim d[SHAPE_MAX];
    int k = 0;
    for (int i = 0; i < x->rank; i++)
        if (!mark[i])
            d[k++] = x->dims[i];
    if (infer_set(c, 0, x->dtype, k, d))
        return -1;
    return x->value ? infer_set_value(c, 0, x->value, x->n_value) : 0;
}

static int shape_squeeze(InferCtx *c)
{
    int64_t axes[SHAPE_MAX];
    return shape_squeeze_with(c, axes, shape_axes(c, axes, 1, c->opset >= 13));
}

static int shape_unsqueeze(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int64_t axes[SHAPE_MAX];
    long n = shape_axes(c, axes, 1, c->opset >= 13);
    if (n < 0 || x->rank < 0 || x->rank + n > SHAPE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    int rank = x->rank + (int)n;
    bool mark[SHAPE_MAX];
    if (shape_mark_axes(c, axes, n, rank, mark))
        return -1;
    Dim d[SHAPE_MAX];
    for (int i = 0, k = 0; i < rank; i++)
        d[i] = mark[i] ? dim_const(c->dt, 1) : x->dims[k++];
    if (infer_set(c, 0, x->dtype, rank, d))
        return -1;
    return x->value ? infer_set_value(c, 0, x->value, x->n_value) : 0;
}

static int shape_transpose(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    int64_t perm[SHAPE_MAX];
    long n = shape_attr_ints(c->op, "perm", perm);
    if (x->rank < 0 || x->rank > SHAPE_MAX)
        return infer_set(c, 0, x->dtype, (int)n, NULL);
    bool seen[SHAPE_MAX] = {false};
    Dim d[SHAPE_MAX];
    if (n >= 0 && n != x->rank)
        return infer_bad(c, "perm has %ld entries for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++) {
        int64_t p = n < 0 ? x->rank - 1 - i : perm[i];
        if (p < 0 || p >= x->rank || seen[p])
            return infer_bad(c, "perm is not a permutation");
        seen[p] = true;
        d[i] = x->dims[p];
    }
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* Contents of a 1-D Concat whose inputs all carry theirs. */
static int shape_concat_value(InferCtx *c)
{
    Dim v[SHAPE_MAX];
    size_t n = 0;
    for (size_t i = 0; i < c->n_in; i++) {
        const InferFact *f = infer_in(c, i);
        if (!f->value || f->rank > 1 || n + f->n_value > SHAPE_MAX)
            return 0;
        memcpy(v + n, f->value, f->n_value * sizeof *v);
        n += f->n_value;
    }
    return infer_set_value(c, 0, v, n);
}

/* The known dim among the inputs' dims at axis i: a constant if any. */
static Dim shape_concat_dim(InferCtx *c, int rank, int i)
{
    Dim best = NULL;
    for (size_t k = 0; k < c->n_in; k++) {
        const InferFact *f = infer_in(c, k);
        if (f->rank == rank && (!best || dim_is_const(f->dims[i])))
            best = f->dims[i];
    }
    return best ? best : dim_fresh(c->dt);
}

static int shape_concat(InferCtx *c)
{
    int rank = -1;
    int32_t dtype = 0;
    bool all = true;
    for (size_t i = 0; i < c->n_in; i++) {
        const InferFact *f = infer_in(c, i);
        dtype = dtype ? dtype : f->dtype;
        if (f->rank >= 0 && rank >= 0 && f->rank != rank)
            return infer_bad(c, "inputs of ranks %d and %d", rank, f->rank);
        rank = f->rank >= 0 ? f->rank : rank;
        all &= f->rank >= 0;
    }
    if (rank < 1 || rank > SHAPE_MAX)
        return rank == 0 ? infer_bad(c, "scalar inputs") : infer_set_dtype(c, 0, dtype);
    int axis = infer_axis(op_attr_int(c->op, "axis", c->opset < 4 ? 1 : 0), rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim d[SHAPE_MAX];
    for (int i = 0; i < rank; i++)
        d[i] = shape_concat_dim(c, rank, i);
    d[axis] = all ? dim_const(c->dt, 0) : dim_fresh(c->dt);
    for (size_t k = 0; all && k < c->n_in; k++)
        d[axis] = dim_add(c->dt, d[axis], infer_in(c, k)->dims[axis]);
    if (infer_set(c, 0, dtype, rank, d))
        return -1;
    return shape_concat_value(c);
}

/* The sizes of a Split: the split attribute or input, else equal parts
 * (opset 18: the last one smaller when the size does not divide). */
static int shape_split_sizes(InferCtx *c, Dim total, Dim *sizes)
{
    int64_t v[SHAPE_MAX];
    long n = c->opset >= 13 || (c->opset < 2 && infer_has_in(c, 1))
                 ? (infer_has_in(c, 1) ? infer_in_ints(c, 1, v, SHAPE_MAX) : -1)
                 : shape_attr_ints(c->op, "split", v);
    if (n >= 0 && (size_t)n != c->n_out)
        return infer_bad(c, "split has %ld entries for %zu outputs", n, c->n_out);
    if (n < 0 && infer_has_in(c, 1) && c->opset >= 13)
        return 1; /* sizes given but unknown */
    int64_t parts = (int64_t)c->n_out;
    Dim even = c->opset >= 18 ? dim_ceildiv(c->dt, total, parts) : dim_div_exact(c->dt, total, parts);
    for (size_t i = 0; i < c->n_out; i++)
        sizes[i] = n >= 0 ? dim_const(c->dt, v[i]) : even;
    if (n < 0 && c->opset >= 18)
        sizes[c->n_out - 1] = dim_sub(c->dt, total, dim_mul(c->dt, even, dim_const(c->dt, parts - 1)));
    return 0;
}

static int shape_split(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    for (size_t i = 0; i < c->n_out; i++)
        infer_set_dtype(c, i, x->dtype);
    if (x->rank < 0 || x->rank > SHAPE_MAX || c->n_out > SHAPE_MAX)
        return 0;
    int axis = infer_axis(op_attr_int(c->op, "axis", 0), x->rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim sizes[SHAPE_MAX], d[SHAPE_MAX];
    int rc = shape_split_sizes(c, x->dims[axis], sizes);
    if (rc < 0)
        return -1;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (size_t i = 0; i < c->n_out; i++) {
        d[axis] = rc ? dim_fresh(c->dt) : sizes[i];
        if (infer_set(c, i, x->dtype, x->rank, d))
            return -1;
    }
    return 0;
}

/* --- Slice --- */

enum { SLICE_BIG = 2147483647 }; /* an end at least this large means "to the end" */

/* Length of a slice of a static size d >= 0 (ONNX's clamping rules); the
 * arithmetic stays inside int64 for any start, end and step != 0. */
static int64_t slice_len_static(int64_t d, int64_t s, int64_t e, int64_t step)
{
    s = s < 0 ? (s < -d ? -d : s) + d : s;
    e = e < 0 ? (e < -d ? -d - 1 : e) + d : e;
    if (step > 0) {
        s = s > d ? d : s;
        e = e > d ? d : e;
        return e > s ? (e - s - 1) / step + 1 : 0;
    }
    s = s > d - 1 ? d - 1 : s;
    e = e > d - 1 ? d - 1 : e;
    uint64_t mag = 0 - (uint64_t)step; /* |step|, also for INT64_MIN */
    return s > e ? (int64_t)((uint64_t)(s - e - 1) / mag) + 1 : 0;
}

/* Length of a slice of dim d, or a fresh symbol. A symbolic d resolves for
 * step 1, a constant start >= 0 and an end that reaches d (a huge end, or
 * d itself), when d - start is provably non-negative. */
static Dim slice_len(InferCtx *c, Dim d, Dim s, Dim e, Dim step)
{
    if (!s || !e || !step || !dim_is_const(step) || !dim_is_const(s))
        return dim_fresh(c->dt);
    int64_t st = dim_value(step), s0 = dim_value(s);
    if (dim_is_const(d) && dim_is_const(e))
        return dim_const(c->dt, slice_len_static(dim_value(d), s0, dim_value(e), st));
    bool to_end = e == d || (dim_is_const(e) && dim_value(e) >= SLICE_BIG);
    if (st != 1 || s0 < 0 || !to_end)
        return dim_fresh(c->dt);
    Dim len = dim_sub(c->dt, d, s);
    return dim_nonneg(len) ? len : dim_fresh(c->dt);
}

/* Contents of a 1-D slice of a tensor that carries them. */
static int slice_value(InferCtx *c, const Dim *s, const Dim *e, const Dim *st)
{
    const InferFact *x = infer_in(c, 0);
    if (!x->value || x->rank != 1 || !s[0] || !e[0] || !st[0] || !dim_is_const(s[0]) ||
        !dim_is_const(e[0]) || !dim_is_const(st[0]))
        return 0;
    int64_t d = (int64_t)x->n_value, step = dim_value(st[0]), b = dim_value(s[0]);
    int64_t len = slice_len_static(d, b, dim_value(e[0]), step);
    b = b < 0 ? (b < -d ? -d : b) + d : b;
    b = step > 0 ? (b > d ? d : b) : (b > d - 1 ? d - 1 : b);
    Dim v[SHAPE_MAX];
    for (int64_t i = 0; i < len && i < SHAPE_MAX; i++)
        v[i] = x->value[b + i * step];
    return infer_set_value(c, 0, v, (size_t)len);
}

static int slice_apply(InferCtx *c, const Dim *s, const Dim *e, const int64_t *axes, const Dim *st,
                       long n)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0 || x->rank > SHAPE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    Dim d[SHAPE_MAX];
    bool mark[SHAPE_MAX];
    if (shape_mark_axes(c, axes, n, x->rank, mark))
        return -1;
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    for (long i = 0; i < n; i++) {
        int a = infer_axis(axes[i], x->rank);
        if (shape_const_is(st[i], 0))
            return infer_bad(c, "step 0");
        d[a] = slice_len(c, x->dims[a], s[i], e[i], st[i]);
    }
    if (infer_set(c, 0, x->dtype, x->rank, d))
        return -1;
    return n == 1 && infer_axis(axes[0], 1) == 0 ? slice_value(c, s, e, st) : 0;
}

static int slice_attr_form(InferCtx *c)
{
    int64_t sv[SHAPE_MAX], ev[SHAPE_MAX], axes[SHAPE_MAX];
    Dim s[SHAPE_MAX], e[SHAPE_MAX], st[SHAPE_MAX];
    long n = shape_attr_ints(c->op, "starts", sv);
    if (n < 0 || shape_attr_ints(c->op, "ends", ev) != n)
        return infer_bad(c, "starts and ends missing or of different lengths");
    long na = shape_attr_ints(c->op, "axes", axes);
    if (na >= 0 && na != n)
        return infer_bad(c, "axes has %ld entries for %ld starts", na, n);
    for (long i = 0; i < n; i++) {
        axes[i] = na < 0 ? i : axes[i];
        s[i] = dim_const(c->dt, sv[i]);
        e[i] = dim_const(c->dt, ev[i]);
        st[i] = dim_const(c->dt, 1);
    }
    return slice_apply(c, s, e, axes, st, n);
}

static int slice_input_form(InferCtx *c)
{
    Dim s[SHAPE_MAX], e[SHAPE_MAX], st[SHAPE_MAX];
    int64_t axes[SHAPE_MAX];
    long n = shape_in_vals(c, 1, s), ne = shape_in_vals(c, 2, e);
    long na = infer_has_in(c, 3) ? infer_in_ints(c, 3, axes, SHAPE_MAX) : -1;
    long ns = infer_has_in(c, 4) ? shape_in_vals(c, 4, st) : -1;
    const InferFact *x = infer_in(c, 0);
    if (n < 0 || ne != n || (infer_has_in(c, 3) && na != n) || (infer_has_in(c, 4) && ns != n))
        return infer_set(c, 0, x->dtype, x->rank, NULL); /* rank kept, sizes unknown */
    for (long i = 0; i < n; i++) {
        axes[i] = na < 0 ? i : axes[i];
        st[i] = ns < 0 ? dim_const(c->dt, 1) : st[i];
    }
    return slice_apply(c, s, e, axes, st, n);
}

/* --- gathering --- */

/* Contents of Gather on axis 0 of a 1-D tensor that carries them. */
static int gather_value(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *ind = infer_in(c, 1);
    int64_t idx[SHAPE_MAX];
    long n = infer_in_ints(c, 1, idx, SHAPE_MAX);
    if (!x->value || x->rank != 1 || n < 0 || ind->rank > 1)
        return 0;
    Dim v[SHAPE_MAX];
    for (long i = 0; i < n; i++) {
        int64_t k = idx[i] < 0 ? idx[i] + (int64_t)x->n_value : idx[i];
        if (k < 0 || k >= (int64_t)x->n_value)
            return infer_bad(c, "index %lld out of range", (long long)idx[i]);
        v[i] = x->value[k];
    }
    return infer_set_value(c, 0, v, (size_t)n);
}

static int shape_gather(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *ind = infer_in(c, 1);
    if (x->rank < 0 || ind->rank < 0 || x->rank + ind->rank > SHAPE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    int axis = infer_axis(op_attr_int(c->op, "axis", 0), x->rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim d[SHAPE_MAX];
    int k = 0;
    for (int i = 0; i < axis; i++)
        d[k++] = x->dims[i];
    for (int i = 0; i < ind->rank; i++)
        d[k++] = ind->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        d[k++] = x->dims[i];
    if (infer_set(c, 0, x->dtype, k, d))
        return -1;
    return axis == 0 ? gather_value(c) : 0;
}

static int shape_gather_elements(InferCtx *c)
{
    const InferFact *ind = infer_in(c, 1);
    return infer_set(c, 0, infer_in(c, 0)->dtype, ind->rank, ind->dims);
}

/* GatherND: indices[:-1] + data[batch_dims + indices[-1]:]. */
static int shape_gather_nd(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *ind = infer_in(c, 1);
    int64_t b = op_attr_int(c->op, "batch_dims", 0);
    if (x->rank < 0 || ind->rank < 1 || !dim_is_const(ind->dims[ind->rank - 1]))
        return infer_set_dtype(c, 0, x->dtype);
    int64_t k = dim_value(ind->dims[ind->rank - 1]);
    if (b < 0 || k < 0 || b + k > x->rank || ind->rank - 1 + x->rank - b - k > SHAPE_MAX)
        return infer_bad(c, "indices reach past the data's rank");
    Dim d[SHAPE_MAX];
    int n = 0;
    for (int i = 0; i < ind->rank - 1; i++)
        d[n++] = ind->dims[i];
    for (int64_t i = b + k; i < x->rank; i++)
        d[n++] = x->dims[i];
    return infer_set(c, 0, x->dtype, n, d);
}

/* --- building from a shape input --- */

/* A fact whose dims are input i's contents (unknown entries fresh):
 * rank, or -1 when even the length is unknown. */
static int shape_from_input(InferCtx *c, size_t i, Dim *d)
{
    long n = shape_in_vals(c, i, d);
    for (long k = 0; k < n; k++)
        d[k] = d[k] ? d[k] : dim_fresh(c->dt);
    if (n >= 0)
        return (int)n;
    const InferFact *s = infer_in(c, i);
    if (s->rank != 1 || !dim_is_const(s->dims[0]) || dim_value(s->dims[0]) > SHAPE_MAX)
        return -1;
    for (int64_t k = 0; k < dim_value(s->dims[0]); k++)
        d[k] = dim_fresh(c->dt);
    return (int)dim_value(s->dims[0]);
}

static int shape_expand(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    Dim d[SHAPE_MAX];
    int n = shape_from_input(c, 1, d);
    if (n < 0 || x->rank < 0)
        return infer_set_dtype(c, 0, x->dtype);
    InferFact target = {0, n, d, NULL, 0, FACT_TENSOR}, out;
    const InferFact *both[2] = {x, &target};
    if (infer_broadcast(c, both, 2, &out))
        return -1;
    return infer_set(c, 0, x->dtype, out.rank, out.dims);
}

static int shape_tile(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    Dim rep[SHAPE_MAX], d[SHAPE_MAX];
    long n = shape_in_vals(c, 1, rep);
    if (x->rank < 0 || x->rank > SHAPE_MAX)
        return infer_set_dtype(c, 0, x->dtype);
    if (n >= 0 && n != x->rank)
        return infer_bad(c, "%ld repeats for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++)
        d[i] = n >= 0 && rep[i] ? dim_mul(c->dt, x->dims[i], rep[i]) : dim_fresh(c->dt);
    return infer_set(c, 0, x->dtype, x->rank, d);
}

/* The element count of static dims d (n of them) when at most SHAPE_MAX,
 * else -1. */
static int64_t shape_small_numel(const Dim *d, int n)
{
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        int64_t v = dim_is_const(d[i]) ? dim_value(d[i]) : -1;
        if (v < 0 || v > SHAPE_MAX || numel * v > SHAPE_MAX)
            return -1;
        numel *= v;
    }
    return n < 0 ? -1 : numel;
}

/* ConstantOfShape: the shape input's contents; the value attribute's type
 * (float by default), and contents when the value is an integer and the
 * result small. */
static int shape_constant_of_shape(InferCtx *c)
{
    const Attr *a = op_attr(c->op, "value");
    const Tensor *t = a && a->type == ATTR_TENSOR && a->tensors ? a->tensors[0] : NULL;
    int32_t dtype = t ? t->dtype : DT_FLOAT;
    Dim d[SHAPE_MAX], vals[SHAPE_MAX];
    int n = shape_from_input(c, 0, d);
    if (infer_set(c, 0, dtype, n, d))
        return -1;
    int64_t numel = shape_small_numel(d, n);
    if (!t || numel < 0 || !facts_dtype_is_int(dtype) || tensor_numel(t) != 1 || !t->data ||
        t->nbytes < dtype_size(dtype))
        return 0;
    Dim v = dim_const(c->dt, facts_tensor_int(t, 0));
    for (int64_t i = 0; i < numel; i++)
        vals[i] = v;
    return infer_set_value(c, 0, vals, (size_t)numel);
}

/* Range(start, limit, delta): max(ceil((limit - start) / delta), 0)
 * elements; symbolically limit - start when delta is 1 and that is
 * provably non-negative. */
static int shape_range(InferCtx *c)
{
    Dim s[SHAPE_MAX], l[SHAPE_MAX], st[SHAPE_MAX];
    int32_t dtype = infer_in(c, 0)->dtype;
    if (shape_in_vals(c, 0, s) != 1 || shape_in_vals(c, 1, l) != 1 || shape_in_vals(c, 2, st) != 1 ||
        !s[0] || !l[0] || !st[0] || !dim_is_const(st[0]) || !dim_is_const(s[0]))
        return infer_set(c, 0, dtype, 1, NULL);
    int64_t delta = dim_value(st[0]);
    if (delta == 0)
        return infer_bad(c, "delta is 0");
    Dim span = dim_sub(c->dt, l[0], s[0]), n;
    if (dim_is_const(span)) {
        int64_t v = dim_value(span);
        uint64_t mag = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
        uint64_t dist = delta > 0 ? (v > 0 ? (uint64_t)v : 0) : (v < 0 ? 0 - (uint64_t)v : 0);
        n = dim_const(c->dt, dist ? (int64_t)((dist - 1) / mag + 1) : 0);
    } else {
        n = delta == 1 && dim_nonneg(span) ? span : dim_fresh(c->dt);
    }
    return infer_set(c, 0, dtype, 1, &n);
}

static int shape_nonzero(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    Dim d[2] = {x->rank >= 0 ? dim_const(c->dt, x->rank) : dim_fresh(c->dt), dim_fresh(c->dt)};
    return infer_set(c, 0, DT_INT64, 2, d);
}

/* Constant: value (a tensor), value_float(s), value_int(s), value_string(s). */
static int shape_constant(InferCtx *c)
{
    const Attr *a = c->op->n_attrs == 1 ? &c->op->attrs[0] : NULL;
    if (!a)
        return infer_bad(c, "Constant needs exactly one value attribute");
    if (a->type == ATTR_TENSOR && !strcmp(a->name, "value") && a->tensors && a->tensors[0])
        return infer_set_tensor(c, 0, a->tensors[0]);
    Dim n = dim_const(c->dt, (int64_t)a->n), v[SHAPE_MAX];
    switch (a->type) {
    case ATTR_FLOAT: return infer_set(c, 0, DT_FLOAT, 0, NULL);
    case ATTR_FLOATS: return infer_set(c, 0, DT_FLOAT, 1, &n);
    case ATTR_STRING: return infer_set(c, 0, DT_STRING, 0, NULL);
    case ATTR_STRINGS: return infer_set(c, 0, DT_STRING, 1, &n);
    case ATTR_INT:
        v[0] = dim_const(c->dt, a->i);
        return infer_set(c, 0, DT_INT64, 0, NULL) ? -1 : infer_set_value(c, 0, v, 1);
    case ATTR_INTS:
        if (infer_set(c, 0, DT_INT64, 1, &n))
            return -1;
        for (size_t i = 0; i < a->n && i < SHAPE_MAX; i++)
            v[i] = dim_const(c->dt, a->ints[i]);
        return a->n <= SHAPE_MAX ? infer_set_value(c, 0, v, a->n) : 0;
    default: return 0; /* sparse_value: left unknown */
    }
}

/* DepthToSpace [N, C/(b*b), H*b, W*b] and SpaceToDepth, its inverse. */
static int shape_depth_space(InferCtx *c, bool to_space)
{
    const InferFact *x = infer_in(c, 0);
    int64_t b = op_attr_int(c->op, "blocksize", 0);
    if (x->rank != 4 || b <= 0 || b > INT32_MAX)
        return x->rank < 0 ? infer_set_dtype(c, 0, x->dtype) : infer_bad(c, "needs rank 4 and a blocksize");
    Dim bb = dim_const(c->dt, b), d[4] = {x->dims[0], NULL, NULL, NULL};
    d[1] = to_space ? dim_div_exact(c->dt, x->dims[1], b * b) : dim_mul(c->dt, x->dims[1], dim_const(c->dt, b * b));
    for (int i = 2; i < 4; i++)
        d[i] = to_space ? dim_mul(c->dt, x->dims[i], bb) : dim_div_exact(c->dt, x->dims[i], b);
    return infer_set(c, 0, x->dtype, 4, d);
}

static int shape_depth_to_space(InferCtx *c) { return shape_depth_space(c, true); }
static int shape_space_to_depth(InferCtx *c) { return shape_depth_space(c, false); }

static const OpSchema ops_shape[] = {
    {"", "Shape", 1, 1, 1, 1, 1, shape_shape},
    {"", "Size", 1, 1, 1, 1, 1, shape_size},
    {"", "Reshape", 1, 1, 1, 1, 1, shape_reshape_1},
    {"", "Reshape", 5, 2, 2, 1, 1, shape_reshape},
    {"", "Flatten", 1, 1, 1, 1, 1, shape_flatten},
    {"", "Squeeze", 1, 1, 2, 1, 1, shape_squeeze},
    {"", "Unsqueeze", 1, 1, 2, 1, 1, shape_unsqueeze},
    {"", "Transpose", 1, 1, 1, 1, 1, shape_transpose},
    {"", "Concat", 1, 1, OPS_VARIADIC, 1, 1, shape_concat},
    {"", "Concat", 4, 1, OPS_VARIADIC, 1, 1, shape_concat}, /* axis required */
    {"", "Split", 1, 1, 2, 1, OPS_VARIADIC, shape_split},
    {"", "Split", 2, 1, 2, 1, OPS_VARIADIC, shape_split}, /* split input gone (13: back) */
    {"", "Slice", 1, 1, 1, 1, 1, slice_attr_form},
    {"", "Slice", 10, 3, 5, 1, 1, slice_input_form},
    {"", "Gather", 1, 2, 2, 1, 1, shape_gather},
    {"", "GatherElements", 11, 2, 2, 1, 1, shape_gather_elements},
    {"", "GatherND", 11, 2, 2, 1, 1, shape_gather_nd},
    {"", "Expand", 8, 2, 2, 1, 1, shape_expand},
    {"", "Tile", 6, 2, 2, 1, 1, shape_tile},
    {"", "ConstantOfShape", 9, 1, 1, 1, 1, shape_constant_of_shape},
    {"", "Range", 11, 3, 3, 1, 1, shape_range},
    {"", "NonZero", 9, 1, 1, 1, 1, shape_nonzero},
    {"", "Constant", 1, 0, 0, 1, 1, shape_constant},
    {"", "DepthToSpace", 1, 1, 1, 1, 1, shape_depth_to_space},
    {"", "SpaceToDepth", 1, 1, 1, 1, 1, shape_space_to_depth},
};

const OpTable ops_shape_table = {ops_shape, sizeof ops_shape / sizeof ops_shape[0]};
