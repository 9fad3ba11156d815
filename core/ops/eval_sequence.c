/* eval_sequence.c - kernels of the sequence and optional ops (eval.h), for
 * the reference interpreter only: SequenceEmpty, SequenceConstruct,
 * SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
 * ConcatFromSequence, SplitToSequence, Optional, OptionalHasElement and
 * OptionalGetElement. Their values are the markers of eval_held.h; every
 * result owns its bytes (element tensors are copied into the node's
 * arena), because the interpreter frees an input's arena once its last
 * reader has run while a sequence outlives that reader. SequenceMap runs a
 * body graph and lives with If and Loop in eval_run.c. */
#include <string.h>

#include "eval.h"
#include "eval_held.h"

/* Input i as a sequence, or NULL. */
static const EvalHeld *seq_in(const EvalCtx *c, size_t i)
{
    const Tensor *t = i < c->n_in ? c->in[i] : NULL;
    return t && t->dtype == EVAL_DT_SEQUENCE ? eval_held(t) : NULL;
}

/* A copy of value t owned by the node's arena; NULL (c->why set) when its
 * bytes cannot be had. */
static const Tensor *seq_take(EvalCtx *c, const Tensor *t)
{
    const Tensor *r = NULL;
    if (eval_held(t))
        r = eval_value_copy(c->arena, t);
    else if (eval_dtype_ok(t->dtype)) {
        const uint8_t *b = eval_bytes(c, t);
        Tensor *n = b ? tensor_new(c->arena, t->dtype, t->ndims, t->dims) : NULL;
        if (n && t->nbytes)
            memcpy((void *)n->data, b, t->nbytes);
        r = n;
    }
    if (!r)
        eval_decline(c, "an element is not a numeric tensor in memory");
    return r;
}

/* The position input i as an index into n + extra slots (negative counted
 * from the end); absent: fallback. -1 when out of range. */
static int64_t seq_position(EvalCtx *c, size_t i, size_t n, size_t extra, int64_t fallback)
{
    if (i >= c->n_in || !c->in[i])
        return fallback;
    int64_t p;
    if (eval_ints(c, i, &p, 1) != 1)
        return -1;
    int64_t lim = (int64_t)(n + extra);
    p = p < 0 ? p + (int64_t)n : p;
    return p >= 0 && p < lim ? p : -1;
}

/* A new sequence as output 0; NULL (EVAL_OOM to return) when out of memory. */
static EvalHeld *seq_out(EvalCtx *c, int32_t elem_type, size_t n)
{
    Tensor *t = eval_held_new(c->arena, EVAL_DT_SEQUENCE, elem_type, n);
    c->out[0] = t;
    return t ? (EvalHeld *)t->data : NULL;
}

static int seq_empty(EvalCtx *c)
{
    int64_t dt = op_attr_int(c->op, "dtype", DT_FLOAT);
    if (!eval_dtype_ok((int32_t)dt))
        return eval_decline(c, "SequenceEmpty of a type the interpreter does not hold");
    return seq_out(c, (int32_t)dt, 0) ? EVAL_OK : EVAL_OOM;
}

static int seq_construct(EvalCtx *c)
{
    for (size_t i = 0; i < c->n_in; i++)
        if (!c->in[i] || eval_held(c->in[i]) || c->in[i]->dtype != c->in[0]->dtype)
            return eval_decline(c, "SequenceConstruct takes tensors of one type");
    EvalHeld *h = seq_out(c, c->n_in ? c->in[0]->dtype : 0, c->n_in);
    if (!h)
        return EVAL_OOM;
    for (size_t i = 0; i < c->n_in; i++)
        if (!(h->items[i] = seq_take(c, c->in[i])))
            return EVAL_DECLINE;
    return EVAL_OK;
}

static int seq_insert(EvalCtx *c)
{
    const EvalHeld *s = seq_in(c, 0);
    const Tensor *t = c->n_in > 1 ? c->in[1] : NULL;
    if (!s || !t || eval_held(t) || (s->elem_type && t->dtype != s->elem_type))
        return eval_decline(c, "SequenceInsert takes a sequence and a tensor of its type");
    int64_t at = seq_position(c, 2, s->n, 1, (int64_t)s->n);
    if (at < 0)
        return eval_decline(c, "SequenceInsert's position is out of range");
    EvalHeld *h = seq_out(c, t->dtype, s->n + 1);
    if (!h)
        return EVAL_OOM;
    for (size_t i = 0, k = 0; i <= s->n; i++) {
        const Tensor *v = (int64_t)i == at ? t : s->items[k++];
        if (!(h->items[i] = seq_take(c, v)))
            return EVAL_DECLINE;
    }
    return EVAL_OK;
}

static int seq_at(EvalCtx *c)
{
    const EvalHeld *s = seq_in(c, 0);
    int64_t at = s && c->n_in > 1 && c->in[1] ? seq_position(c, 1, s->n, 0, -1) : -1;
    if (at < 0)
        return eval_decline(c, "SequenceAt's position is out of range (or not one integer)");
    const Tensor *t = seq_take(c, s->items[at]);
    c->out[0] = (Tensor *)t;
    return t ? EVAL_OK : EVAL_DECLINE;
}

static int seq_erase(EvalCtx *c)
{
    const EvalHeld *s = seq_in(c, 0);
    int64_t at = s && s->n ? seq_position(c, 1, s->n, 0, (int64_t)s->n - 1) : -1;
    if (at < 0)
        return eval_decline(c, "SequenceErase's position is out of range");
    EvalHeld *h = seq_out(c, s->elem_type, s->n - 1);
    if (!h)
        return EVAL_OOM;
    for (size_t i = 0, k = 0; i < s->n; i++)
        if ((int64_t)i != at && !(h->items[k++] = seq_take(c, s->items[i])))
            return EVAL_DECLINE;
    return EVAL_OK;
}

static int seq_length(EvalCtx *c)
{
    const EvalHeld *s = seq_in(c, 0);
    if (!s)
        return eval_decline(c, "SequenceLength takes a sequence");
    Tensor *t = eval_out(c, 0, DT_INT64, 0, NULL);
    if (!t)
        return eval_out_failed(c);
    eval_store(DT_INT64, (uint8_t *)t->data, (EvalNum){.i = (int64_t)s->n});
    return EVAL_OK;
}

/* Outer and inner extents of dims[rank] around axis. */
static void seq_extents(const int64_t *dims, int rank, int axis, size_t *outer, size_t *inner)
{
    *outer = (size_t)dims_numel(dims, (size_t)axis);
    *inner = (size_t)dims_numel(dims + axis + 1, (size_t)(rank - axis - 1));
}

/* ConcatFromSequence's output dims: the elements' (equal but on axis)
 * joined on axis, or stacked on a new axis; false when they do not fit. */
static bool concat_dims(const EvalHeld *s, int axis, bool new_axis, int64_t *dims)
{
    const Tensor *t0 = s->items[0];
    int rank = (int)t0->ndims;
    for (size_t i = 0; i < s->n; i++) {
        const Tensor *t = s->items[i];
        if (eval_held(t) || t->dtype != t0->dtype || (int)t->ndims != rank ||
            (!t->data && t->nbytes))
            return false;
        for (int d = 0; d < rank; d++)
            if (t->dims[d] != t0->dims[d] && (new_axis || d != axis))
                return false;
    }
    int out = 0;
    for (int d = 0; d <= rank; d++) {
        if (new_axis && d == axis)
            dims[out++] = (int64_t)s->n;
        if (d == rank)
            break;
        dims[out] = t0->dims[d];
        if (!new_axis && d == axis)
            for (size_t i = 1; i < s->n; i++)
                dims[out] += s->items[i]->dims[d];
        out++;
    }
    return true;
}

static int seq_concat(EvalCtx *c)
{
    const EvalHeld *s = seq_in(c, 0);
    bool new_axis = op_attr_int(c->op, "new_axis", 0) != 0;
    if (!s || !s->n || (int)s->items[0]->ndims + new_axis > EVAL_MAX_RANK)
        return eval_decline(c, "ConcatFromSequence of an empty sequence or no sequence");
    int rank = (int)s->items[0]->ndims + new_axis;
    int axis = eval_axis(op_attr_int(c->op, "axis", 0), rank);
    int64_t dims[EVAL_MAX_RANK];
    if (axis < 0 || (!new_axis && !rank) || !concat_dims(s, axis, new_axis, dims))
        return eval_decline(c, "ConcatFromSequence: the elements do not join on the axis");
    Tensor *out = eval_out(c, 0, s->items[0]->dtype, (size_t)rank, dims);
    if (!out)
        return eval_out_failed(c);
    size_t outer, inner, size = dtype_size(out->dtype), at = 0;
    seq_extents(dims, rank, axis, &outer, &inner);
    /* each element's block per outer index: its axis length (1 when stacked) x inner */
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < s->n; i++) {
            const Tensor *t = s->items[i];
            size_t len = new_axis ? 1 : (size_t)t->dims[axis], block = len * inner * size;
            if (block) /* an empty element's data may be NULL */
                memcpy((uint8_t *)out->data + at, (const uint8_t *)t->data + o * block, block);
            at += block;
        }
    return EVAL_OK;
}

enum { SEQ_MAX_PIECES = 1 << 20 };

/* SplitToSequence's piece lengths along an axis of length len into
 * lens (at most cap): the split input's sizes, chunks of its scalar, or
 * ones; the count, or -1 when they do not add up to len. */
static long split_lengths(EvalCtx *c, int64_t len, int64_t *lens, size_t cap)
{
    const Tensor *sp = c->n_in > 1 ? c->in[1] : NULL;
    if (!sp) {
        for (int64_t k = 0; k < len; k++)
            lens[k] = 1;
        return (long)len;
    }
    int64_t one;
    if (!sp->ndims) {
        if (eval_ints(c, 1, &one, 1) != 1 || one <= 0)
            return -1;
        long n = 0;
        for (int64_t at = 0; at < len; at += one)
            lens[n++] = len - at < one ? len - at : one;
        return n;
    }
    long n = eval_ints(c, 1, lens, cap), sum = 0;
    for (long k = 0; k < n; k++) {
        if (lens[k] < 0)
            return -1;
        sum += lens[k];
    }
    return n >= 0 && sum == len ? n : -1;
}

static int seq_split(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int rank = x ? (int)x->ndims : 0;
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", 0), rank) : -1;
    const uint8_t *b = axis >= 0 ? eval_bytes(c, x) : NULL;
    if (!b || x->dims[axis] > SEQ_MAX_PIECES)
        return eval_decline(c, "SplitToSequence: no numeric input, or an axis out of range");
    int64_t *lens = arena_array(c->arena, (size_t)x->dims[axis] + 1, sizeof *lens);
    if (!lens)
        return EVAL_OOM;
    long n = split_lengths(c, x->dims[axis], lens, (size_t)x->dims[axis] + 1);
    /* keepdims applies only when split is not given */
    bool squeeze = (c->n_in < 2 || !c->in[1]) && !op_attr_int(c->op, "keepdims", 1);
    EvalHeld *h = n >= 0 ? seq_out(c, x->dtype, (size_t)n) : NULL;
    if (n < 0)
        return eval_decline(c, "SplitToSequence: split does not add up to the axis");
    if (!h)
        return EVAL_OOM;
    size_t outer, inner, size = dtype_size(x->dtype), start = 0;
    seq_extents(x->dims, rank, axis, &outer, &inner);
    for (long k = 0; k < n; k++) {
        int64_t dims[EVAL_MAX_RANK];
        memcpy(dims, x->dims, (size_t)rank * sizeof *dims);
        dims[axis] = lens[k];
        if (squeeze)
            memmove(dims + axis, dims + axis + 1, (size_t)(rank - axis - 1) * sizeof *dims);
        Tensor *t = tensor_new(c->arena, x->dtype, (size_t)(rank - squeeze), dims);
        if (!t)
            return EVAL_OOM;
        size_t block = (size_t)lens[k] * inner * size, row = (size_t)x->dims[axis] * inner * size;
        for (size_t o = 0; block && o < outer; o++)
            memcpy((uint8_t *)t->data + o * block, b + o * row + start * inner * size, block);
        start += (size_t)lens[k];
        h->items[k] = t;
    }
    return EVAL_OK;
}

/* --- optionals --- */

static int opt_wrap(EvalCtx *c)
{
    const Tensor *v = c->n_in ? c->in[0] : NULL;
    Tensor *t = eval_held_new(c->arena, EVAL_DT_OPTIONAL, 0, v ? 1 : 0);
    if (!t)
        return EVAL_OOM;
    EvalHeld *h = (EvalHeld *)t->data;
    if (v) {
        const EvalHeld *vh = eval_held(v);
        if (v->dtype == EVAL_DT_OPTIONAL)
            return eval_decline(c, "Optional of an optional");
        h->elem_type = vh ? vh->elem_type : v->dtype;
        if (!(h->items[0] = seq_take(c, v)))
            return EVAL_DECLINE;
    }
    c->out[0] = t;
    return EVAL_OK;
}

/* A tensor or a sequence given where an optional is expected is a present
 * value, at every opset: opset 18 says so, and before it a Loop carrying an
 * optional whose body returns the plain value (onnx's loop16_seq_none) meets
 * it from the second iteration on, as onnx's reference treats it. An
 * omitted input is an empty optional. */
static int opt_has(EvalCtx *c)
{
    const Tensor *v = c->n_in ? c->in[0] : NULL;
    bool has = v && (v->dtype != EVAL_DT_OPTIONAL || eval_held(v)->n);
    Tensor *t = eval_out(c, 0, DT_BOOL, 0, NULL);
    if (!t)
        return eval_out_failed(c);
    eval_store(DT_BOOL, (uint8_t *)t->data, (EvalNum){.i = has});
    return EVAL_OK;
}

static int opt_get(EvalCtx *c)
{
    const Tensor *v = c->n_in ? c->in[0] : NULL;
    if (!v)
        return eval_decline(c, "OptionalGetElement of an omitted input");
    if (v->dtype == EVAL_DT_OPTIONAL) {
        if (!eval_held(v)->n)
            return eval_decline(c, "OptionalGetElement of an empty optional");
        v = eval_held(v)->items[0];
    }
    c->out[0] = (Tensor *)seq_take(c, v);
    return c->out[0] ? EVAL_OK : EVAL_DECLINE;
}

static const OpKernel kernels[] = {
    {"", "SequenceEmpty", 11, seq_empty},
    {"", "SequenceConstruct", 11, seq_construct},
    {"", "SequenceInsert", 11, seq_insert},
    {"", "SequenceAt", 11, seq_at},
    {"", "SequenceErase", 11, seq_erase},
    {"", "SequenceLength", 11, seq_length},
    {"", "ConcatFromSequence", 11, seq_concat},
    {"", "SplitToSequence", 11, seq_split},
    {"", "SplitToSequence", 24, seq_split},
    {"", "Optional", 15, opt_wrap},
    {"", "OptionalHasElement", 15, opt_has},
    {"", "OptionalHasElement", 18, opt_has},
    {"", "OptionalGetElement", 15, opt_get},
    {"", "OptionalGetElement", 18, opt_get},
};

const OpKernelTable eval_sequence_kernels = {kernels, sizeof kernels / sizeof *kernels, true};

bool eval_takes_held(const char *type)
{
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strcmp(kernels[i].type, type) == 0)
            return true;
    return false;
}
