/* eval_scatter.c - kernels of ScatterND and ScatterElements (eval.h): a
 * copy of the data with the updates written at the indexed places, or
 * combined with what is there (reduction add, mul, max, min).
 *
 * Without a reduction, two updates of one place leave a result the
 * specification calls undefined (onnxruntime keeps the last), so such a
 * node is not folded. */
#include <string.h>

#include "eval.h"

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN, RED_BAD } Reduction;

static Reduction scatter_reduction(const Op *op)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    return (Reduction)eval_attr_choice(op, "reduction", names, sizeof names / sizeof *names);
}

static EvalNum scatter_combine(Reduction red, bool fl, EvalNum a, EvalNum b)
{
    switch (red) {
    case RED_ADD:
        return fl ? (EvalNum){.f = a.f + b.f} : (EvalNum){.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i)};
    case RED_MUL:
        return fl ? (EvalNum){.f = a.f * b.f} : (EvalNum){.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i)};
    case RED_MAX:
        return fl ? (a.f >= b.f ? a : b) : (a.i >= b.i ? a : b);
    case RED_MIN:
        return fl ? (a.f <= b.f ? a : b) : (a.i <= b.i ? a : b);
    default:
        return b;
    }
}

/* Writes n elements of update u over place p (both of type dt). */
static void scatter_put(int32_t dt, Reduction red, uint8_t *p, const uint8_t *u, size_t n)
{
    size_t size = dtype_size(dt);
    if (red == RED_NONE) {
        memcpy(p, u, n * size);
        return;
    }
    bool fl = dtype_is_float(dt);
    for (size_t k = 0; k < n; k++) {
        EvalNum v = scatter_combine(red, fl, eval_load(dt, p + k * size), eval_load(dt, u + k * size));
        eval_store(dt, p + k * size, v);
    }
}

typedef struct Scatter {
    const Tensor *x, *idx, *upd;
    const uint8_t *xb, *ib, *ub;
    Reduction red;
    Tensor *out;
    uint8_t *seen; /* places written, without a reduction */
} Scatter;

/* The inputs and a copy of the data as the result; EVAL_OK or a decline. */
static int scatter_begin(EvalCtx *c, Scatter *s, size_t places)
{
    s->x = eval_in(c, 0), s->idx = eval_in(c, 1), s->upd = eval_in(c, 2);
    s->red = scatter_reduction(c->op);
    c->exact = s->red == RED_NONE ? EVAL_KEEPS : EVAL_ROUNDS; /* add or mul twice: rounded once */
    if (!s->x || !eval_index_type(s->idx) || !s->upd || s->upd->dtype != s->x->dtype ||
        s->red == RED_BAD || (s->red != RED_NONE && s->x->dtype == DT_BOOL))
        return eval_decline(c, "an unsupported input, index type or reduction");
    s->xb = eval_bytes(c, s->x);
    s->ib = s->xb ? eval_bytes(c, s->idx) : NULL;
    s->ub = s->ib ? eval_bytes(c, s->upd) : NULL;
    s->out = s->ub ? eval_out(c, 0, s->x->dtype, s->x->ndims, s->x->dims) : NULL;
    if (!s->out)
        return eval_out_failed(c);
    memcpy((uint8_t *)s->out->data, s->xb, s->out->nbytes);
    s->seen = s->red == RED_NONE ? arena_alloc(c->arena, places ? places : 1) : NULL;
    if (s->red == RED_NONE && !s->seen)
        return EVAL_OOM;
    if (s->seen)
        memset(s->seen, 0, places ? places : 1);
    return EVAL_OK;
}

/* Marks place k written; false when it was already (see the file comment). */
static bool scatter_once(Scatter *s, size_t k)
{
    if (!s->seen)
        return true;
    if (s->seen[k])
        return false;
    s->seen[k] = 1;
    return true;
}

/* ScatterND: indices [..., k] address slices data[i0..ik-1, :] of size
 * data.shape[k:]; updates hold one such slice per index tuple. */
static int eval_scatter_nd(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *idx = eval_in(c, 1), *upd = eval_in(c, 2);
    if (!x || !idx || !upd || !idx->ndims)
        return eval_decline(c, "an unsupported input");
    size_t k = (size_t)idx->dims[idx->ndims - 1], q = idx->ndims;
    if (k > x->ndims || upd->ndims != q - 1 + x->ndims - k ||
        memcmp(upd->dims, idx->dims, (q - 1) * sizeof *upd->dims) ||
        memcmp(upd->dims + q - 1, x->dims + k, (x->ndims - k) * sizeof *upd->dims))
        return eval_decline(c, "the updates' shape does not match");
    Scatter s;
    size_t places = (size_t)dims_numel(x->dims, k);
    int rc = scatter_begin(c, &s, places);
    if (rc)
        return rc;
    size_t slice = (size_t)dims_numel(x->dims + k, x->ndims - k), size = dtype_size(x->dtype);
    size_t n = (size_t)dims_numel(idx->dims, q - 1);
    for (size_t t = 0; t < n; t++) {
        size_t place = 0;
        for (size_t a = 0; a < k; a++) {
            int64_t j = eval_index_at(idx, s.ib, t * k + a, x->dims[a]);
            if (j < 0)
                return eval_decline(c, "an index out of range");
            place = place * (size_t)x->dims[a] + (size_t)j;
        }
        if (!scatter_once(&s, place))
            return eval_decline(c, "two updates of one place without a reduction");
        scatter_put(x->dtype, s.red, (uint8_t *)s.out->data + place * slice * size,
                    s.ub + t * slice * size, slice);
    }
    return EVAL_OK;
}

/* ScatterElements: update element i goes where i is, except along axis,
 * where the index tensor says. */
static int eval_scatter_elements(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *idx = eval_in(c, 1), *upd = eval_in(c, 2);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", 0), (int)x->ndims) : -1;
    if (axis < 0 || !idx || !upd || idx->ndims != x->ndims || upd->ndims != idx->ndims ||
        memcmp(upd->dims, idx->dims, idx->ndims * sizeof *idx->dims))
        return eval_decline(c, "an unsupported input, axis or updates' shape");
    Scatter s;
    int rc = scatter_begin(c, &s, (size_t)tensor_numel(x));
    if (rc)
        return rc;
    int64_t xs[EVAL_MAX_RANK], is[EVAL_MAX_RANK];
    eval_strides(x->dims, x->ndims, xs);
    eval_strides(idx->dims, idx->ndims, is);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(idx);
    for (size_t t = 0; t < n; t++) {
        int64_t to = eval_elements_offset(x, idx, s.ib, axis, t, xs, is);
        if (to < 0)
            return eval_decline(c, "an index out of range");
        if (!scatter_once(&s, (size_t)to))
            return eval_decline(c, "two updates of one place without a reduction");
        scatter_put(x->dtype, s.red, (uint8_t *)s.out->data + (size_t)to * size,
                    s.ub + t * size, 1);
    }
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "ScatterND", 11, eval_scatter_nd},
    {"", "ScatterElements", 11, eval_scatter_elements},
    {"", "Scatter", 9, eval_scatter_elements}, /* ScatterElements before it was renamed */
};

const OpKernelTable eval_scatter_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
