/* ops_sequence.c - rules for sequence and optional operators:
 * SequenceEmpty/Construct/At/Insert/Erase/Length, SplitToSequence,
 * ConcatFromSequence, SequenceMap, Optional, OptionalHasElement,
 * OptionalGetElement.
 * (Identity passes sequences and optionals on: the elementwise family.)
 *
 * A sequence's fact describes every element (facts.h): a dim on which the
 * elements may differ is NULL, and becomes a fresh symbol in a tensor taken
 * out of it, so that two elements are never claimed to be the same size.
 * What a sequence holds is known only as far as every insertion says: an
 * empty sequence (SequenceEmpty) has an element type but no shape. */
#include "ops.h"

enum { SEQ_MAX_RANK = 64, SEQ_MAX_IO = 64 };

/* The fact of the elements of a sequence made of a and b (out's dims in the
 * run's arena): dtype and rank when both agree, each dim where both agree
 * (NULL otherwise). */
static int seq_union(InferCtx *c, const InferFact *a, const InferFact *b, InferFact *out)
{
    InferFact u = {a->dtype == b->dtype ? a->dtype : 0, -1, NULL, NULL, 0, FACT_SEQUENCE};
    if (a->rank >= 0 && a->rank == b->rank) {
        if (!(u.dims = infer_dims_new(c, a->rank)))
            return -1;
        u.rank = a->rank;
        for (int i = 0; i < a->rank; i++)
            u.dims[i] = a->dims[i] == b->dims[i] ? a->dims[i] : NULL;
    }
    *out = u; /* out may be a or b */
    return 0;
}

/* A sequence input's fact (facts_unknown unless it is one). */
static const InferFact *seq_in(const InferCtx *c, size_t i)
{
    const InferFact *f = infer_in_any(c, i);
    return f->kind == FACT_SEQUENCE ? f : &facts_unknown;
}

/* One element of sequence s as a tensor fact (dims in the run's arena),
 * differing dims as fresh symbols. */
static int seq_element(InferCtx *c, const InferFact *s, InferFact *out)
{
    *out = (InferFact){s->dtype, s->rank, NULL, NULL, 0, FACT_TENSOR};
    if (s->rank < 0)
        return 0;
    if (!(out->dims = infer_dims_new(c, s->rank)))
        return -1;
    for (int k = 0; k < s->rank; k++)
        out->dims[k] = s->dims[k] ? s->dims[k] : dim_fresh(c->dt);
    return 0;
}

static int seq_set_element(InferCtx *c, size_t i, const InferFact *s)
{
    InferFact e;
    return seq_element(c, s, &e) ? -1 : infer_set_fact(c, i, &e);
}

static int seq_set(InferCtx *c, size_t i, const InferFact *f, int kind)
{
    InferFact s = *f;
    s.kind = kind;
    return infer_set_fact(c, i, &s);
}

/* SequenceEmpty: the dtype attribute (float by default), no shape. */
static int seq_empty(InferCtx *c)
{
    InferFact s = {(int32_t)op_attr_int(c->op, "dtype", DT_FLOAT), -1, NULL, NULL, 0,
                   FACT_SEQUENCE};
    return infer_set_fact(c, 0, &s);
}

static int seq_construct(InferCtx *c)
{
    InferFact acc = *infer_in(c, 0);
    for (size_t i = 1; i < c->n_in; i++)
        if (seq_union(c, &acc, infer_in(c, i), &acc))
            return -1;
    return seq_set(c, 0, &acc, FACT_SEQUENCE);
}

static int seq_at(InferCtx *c) { return seq_set_element(c, 0, seq_in(c, 0)); }

/* SequenceInsert: the sequence's elements and the new tensor. An unknown
 * sequence says nothing of its elements: only the dtype (which the spec
 * makes the same) carries over. */
static int seq_insert(InferCtx *c)
{
    const InferFact *s = seq_in(c, 0), *t = infer_in(c, 1);
    InferFact acc;
    if (s->rank < 0 && s->dtype) /* an empty or shapeless sequence */
        acc = (InferFact){s->dtype, -1, NULL, NULL, 0, FACT_SEQUENCE};
    else if (seq_union(c, s, t, &acc))
        return -1;
    if (!acc.dtype)
        acc.dtype = s->dtype ? s->dtype : t->dtype;
    return seq_set(c, 0, &acc, FACT_SEQUENCE);
}

static int seq_erase(InferCtx *c)
{
    const InferFact *s = seq_in(c, 0);
    return facts_known(s) ? seq_set(c, 0, s, FACT_SEQUENCE) : 0;
}

static int seq_length(InferCtx *c) { return infer_set(c, 0, DT_INT64, 0, NULL); }

/* The size of SplitToSequence's pieces along the axis of length len: one
 * size when every piece has it, else NULL. */
static Dim split_piece(InferCtx *c, Dim len, bool *keep)
{
    const InferFact *sp = infer_in(c, 1);
    int64_t v[FACTS_MAX_VALUE];
    if (!infer_has_in(c, 1)) { /* pieces of 1, the axis kept or dropped */
        *keep = op_attr_int(c->op, "keepdims", 1) != 0;
        return dim_const(c->dt, 1);
    }
    *keep = true;
    long n = infer_in_ints(c, 1, v, FACTS_MAX_VALUE);
    if (n < 1)
        return NULL;
    if (sp->rank == 0) { /* a chunk size: the last piece may be shorter */
        int64_t total = dim_is_const(len) ? dim_value(len) : -1;
        if (v[0] <= 0 || total < 0)
            return NULL;
        return total % v[0] == 0 ? dim_const(c->dt, v[0])
               : total < v[0]    ? len
                                 : NULL;
    }
    for (long i = 1; i < n; i++)
        if (v[i] != v[0])
            return NULL;
    return dim_const(c->dt, v[0]);
}

static int seq_split(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    InferFact s = {x->dtype, -1, NULL, NULL, 0, FACT_SEQUENCE};
    if (x->rank < 1 || x->rank > SEQ_MAX_RANK)
        return infer_set_fact(c, 0, &s);
    int axis = infer_axis(op_attr_int(c->op, "axis", 0), x->rank);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    bool keep;
    Dim piece = split_piece(c, x->dims[axis], &keep), d[SEQ_MAX_RANK];
    s.rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (i != axis || keep)
            d[s.rank++] = i == axis ? piece : x->dims[i];
    s.dims = d;
    return infer_set_fact(c, 0, &s);
}

/* ConcatFromSequence: the elements joined along axis (its length unknown),
 * or stacked on a new axis (of the sequence's unknown length). */
static int seq_concat(InferCtx *c)
{
    const InferFact *s = seq_in(c, 0);
    bool stack = op_attr_int(c->op, "new_axis", 0) != 0;
    if (s->rank < 0 || s->rank >= SEQ_MAX_RANK)
        return infer_set_dtype(c, 0, s->dtype);
    int rank = s->rank + stack;
    int axis = infer_axis(op_attr_int(c->op, "axis", 0), rank);
    if (axis < 0 || (!stack && rank == 0))
        return infer_bad(c, "axis out of range");
    Dim d[SEQ_MAX_RANK];
    for (int i = 0, k = 0; i < rank; i++) {
        if (i == axis) {
            d[i] = dim_fresh(c->dt);
            k += !stack;
            continue;
        }
        d[i] = s->dims[k] ? s->dims[k] : dim_fresh(c->dt);
        k++;
    }
    return infer_set(c, 0, s->dtype, rank, d);
}

/* Optional: wraps its input (a tensor or a sequence); with no input, the
 * type attribute (not read: the output stays unknown). */
static int opt_wrap(InferCtx *c)
{
    const InferFact *x = infer_in_any(c, 0);
    if (!infer_has_in(c, 0) || !facts_known(x) || x->kind > FACT_SEQUENCE)
        return 0;
    return seq_set(c, 0, x, x->kind == FACT_SEQUENCE ? FACT_OPTIONAL_SEQUENCE : FACT_OPTIONAL);
}

static int opt_has(InferCtx *c) { return infer_set(c, 0, DT_BOOL, 0, NULL); }

/* OptionalGetElement: the optional's content; from opset 18 a plain tensor
 * or sequence passes through. */
static int opt_get(InferCtx *c)
{
    const InferFact *x = infer_in_any(c, 0);
    if (c->opset >= 18 && (x->kind == FACT_TENSOR || x->kind == FACT_SEQUENCE))
        return infer_set_fact(c, 0, x);
    if (x->kind == FACT_OPTIONAL)
        return seq_set(c, 0, x, FACT_TENSOR);
    return x->kind == FACT_OPTIONAL_SEQUENCE ? seq_set(c, 0, x, FACT_SEQUENCE) : 0;
}

/* SequenceMap-17: the body runs once per position, on the elements of the
 * sequence inputs and on the tensor inputs whole; output i is the sequence
 * of what the body's output i is. A dim involving a fresh symbol (an
 * element's differing size, or a size the body finds at run time) may
 * differ between positions: NULL in the output's elements. */
static int seq_map(InferCtx *c)
{
    const Attr *a = op_attr(c->op, "body");
    Graph *body = a && a->type == ATTR_GRAPH && a->graphs ? a->graphs[0] : NULL;
    if (!body || body->n_inputs != c->n_in || body->n_outputs != c->n_out || c->n_in > SEQ_MAX_IO)
        return infer_bad(c, "SequenceMap body does not match the node's inputs and outputs");
    InferFact elems[SEQ_MAX_IO];
    const InferFact *ins[SEQ_MAX_IO];
    for (size_t i = 0; i < c->n_in; i++) {
        const InferFact *x = infer_in_any(c, i);
        ins[i] = x->kind == FACT_TENSOR ? x : &facts_unknown;
        if (x->kind == FACT_SEQUENCE && seq_element(c, x, &elems[i]))
            return -1;
        if (x->kind == FACT_SEQUENCE)
            ins[i] = &elems[i];
    }
    if (infer_subgraph(c, body, ins, c->n_in))
        return -1;
    for (size_t i = 0; i < c->n_out; i++) {
        const InferFact *o = infer_fact_of(c, body->outputs[i].var);
        InferFact s = {o->dtype, o->rank, NULL, NULL, 0, FACT_SEQUENCE};
        if (o->kind != FACT_TENSOR || !facts_known(o))
            continue;
        if (o->rank >= 0 && !(s.dims = infer_dims_new(c, o->rank)))
            return -1;
        for (int k = 0; k < o->rank; k++)
            s.dims[k] = dim_has_fresh(c->dt, o->dims[k]) ? NULL : o->dims[k];
        if (infer_set_fact(c, i, &s))
            return -1;
    }
    return 0;
}

static const OpSchema ops_sequence[] = {
    {"", "SequenceEmpty", 11, 0, 0, 1, 1, seq_empty},
    {"", "SequenceConstruct", 11, 1, OPS_VARIADIC, 1, 1, seq_construct},
    {"", "SequenceAt", 11, 2, 2, 1, 1, seq_at},
    {"", "SequenceInsert", 11, 2, 3, 1, 1, seq_insert},
    {"", "SequenceErase", 11, 1, 2, 1, 1, seq_erase},
    {"", "SequenceLength", 11, 1, 1, 1, 1, seq_length},
    {"", "SplitToSequence", 11, 1, 2, 1, 1, seq_split},
    {"", "ConcatFromSequence", 11, 1, 1, 1, 1, seq_concat},
    {"", "Optional", 15, 0, 1, 1, 1, opt_wrap},
    {"", "OptionalHasElement", 15, 1, 1, 1, 1, opt_has},
    {"", "OptionalGetElement", 15, 1, 1, 1, 1, opt_get},
    {"", "SequenceMap", 17, 1, OPS_VARIADIC, 1, OPS_VARIADIC, seq_map},
};

const OpTable ops_sequence_table = {ops_sequence, sizeof ops_sequence / sizeof ops_sequence[0]};
