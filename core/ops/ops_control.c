/* ops_control.c - rules for operators with subgraphs: If, Loop, Scan.
 *
 * Their outputs are typed from the bodies, which are inferred with their
 * inputs bound (the bodies also see every outer fact). If merges its two
 * branches: equal dims stay, different dims become a fresh symbol. A Loop's
 * carried values may change shape from one iteration to the next, so the
 * body is inferred with the initial values first; every dim the body
 * changes is generalised to a fresh symbol and the body inferred again,
 * which makes its facts hold for every iteration. Scan-8 differs from
 * Scan-9 by a batch axis in front of every input and output and an
 * optional sequence_lens input. */
#include <string.h>

#include "ops.h"

enum { CONTROL_MAX = 64 };

static Graph *control_graph(const Op *op, const char *name)
{
    const Attr *a = op_attr(op, name);
    return a && a->type == ATTR_GRAPH && a->graphs ? a->graphs[0] : NULL;
}

static const InferFact *control_out(const InferCtx *c, const Graph *g, size_t i)
{
    return infer_fact_of(c, i < g->n_outputs ? g->outputs[i].var : NULL);
}

/* The fact true of both a and b (into out, dims in the run's arena). A dim
 * that differs is a fresh symbol, or in a sequence's elements (which may
 * differ among themselves) NULL. */
static int control_merge(InferCtx *c, const InferFact *a, const InferFact *b, InferFact *out)
{
    *out = (InferFact){a->dtype ? a->dtype : b->dtype, -1, NULL, NULL, 0,
                       facts_known(a) ? a->kind : b->kind};
    if (facts_known(a) && facts_known(b) && a->kind != b->kind) {
        *out = facts_unknown;
        return 0;
    }
    if (a->dtype && b->dtype && a->dtype != b->dtype)
        out->dtype = 0;
    if (a->rank < 0 || a->rank != b->rank)
        return 0;
    if (!(out->dims = infer_dims_new(c, a->rank)))
        return -1;
    out->rank = a->rank;
    for (int i = 0; i < a->rank; i++)
        out->dims[i] = a->dims[i] == b->dims[i]    ? a->dims[i]
                       : out->kind == FACT_TENSOR ? dim_fresh(c->dt)
                                                  : NULL;
    return 0;
}

static bool control_same(const InferFact *a, const InferFact *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->kind != b->kind)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

static int control_set(InferCtx *c, size_t i, const InferFact *f)
{
    return infer_set_fact(c, i, f);
}

static int control_if(InferCtx *c)
{
    Graph *t = control_graph(c->op, "then_branch"), *e = control_graph(c->op, "else_branch");
    if (!t || !e)
        return infer_bad(c, "If needs then_branch and else_branch");
    if (infer_subgraph(c, t, NULL, 0) || infer_subgraph(c, e, NULL, 0))
        return -1;
    if (t->n_outputs != c->n_out || e->n_outputs != c->n_out)
        return infer_bad(c, "branches have %zu and %zu outputs for %zu", t->n_outputs,
                         e->n_outputs, c->n_out);
    for (size_t i = 0; i < c->n_out; i++) {
        InferFact m;
        if (control_merge(c, control_out(c, t, i), control_out(c, e, i), &m) || control_set(c, i, &m))
            return -1;
    }
    return 0;
}

/* Binds the body's carried inputs (after iter_num and cond) to facts and
 * infers it; returns whether every carried output kept its input's fact. */
static int loop_pass(InferCtx *c, Graph *body, const InferFact **ins, size_t n_carried, bool *stable)
{
    if (infer_subgraph(c, body, ins, 2 + n_carried))
        return -1;
    *stable = true;
    for (size_t k = 0; k < n_carried; k++) {
        const InferFact *o = control_out(c, body, 1 + k);
        if (!control_same(ins[2 + k], o))
            *stable = false;
    }
    return 0;
}

/* Generalises each carried fact to what both the input and the body's
 * output satisfy. */
static int loop_generalise(InferCtx *c, Graph *body, const InferFact **ins, InferFact *store,
                           size_t n_carried)
{
    for (size_t k = 0; k < n_carried; k++) {
        if (control_merge(c, ins[2 + k], control_out(c, body, 1 + k), &store[k]))
            return -1;
        ins[2 + k] = &store[k];
    }
    return 0;
}

/* Scan outputs of a Loop: the body's per-iteration value with the
 * iteration count (unknown) in front. */
static int loop_scan_output(InferCtx *c, size_t i, const InferFact *o)
{
    if (o->kind != FACT_TENSOR)
        return 0;
    if (o->rank < 0 || o->rank >= CONTROL_MAX)
        return infer_set_dtype(c, i, o->dtype);
    Dim d[CONTROL_MAX];
    d[0] = dim_fresh(c->dt);
    memcpy(d + 1, o->dims, (size_t)o->rank * sizeof *d);
    return infer_set(c, i, o->dtype, o->rank + 1, d);
}

static int control_loop(InferCtx *c)
{
    Graph *body = control_graph(c->op, "body");
    size_t n_carried = c->n_in - 2;
    if (!body || n_carried > CONTROL_MAX || body->n_inputs != 2 + n_carried ||
        body->n_outputs < 1 + n_carried || c->n_out != body->n_outputs - 1)
        return infer_bad(c, "Loop body does not match the node's inputs and outputs");
    InferFact iter = {DT_INT64, 0, NULL, NULL, 0, FACT_TENSOR};
    InferFact cond = {DT_BOOL, 0, NULL, NULL, 0, FACT_TENSOR};
    InferFact store[CONTROL_MAX];
    const InferFact *ins[2 + CONTROL_MAX] = {&iter, &cond};
    for (size_t k = 0; k < n_carried; k++)
        ins[2 + k] = infer_in_any(c, 2 + k);
    bool stable;
    if (loop_pass(c, body, ins, n_carried, &stable))
        return -1;
    if (!stable && (loop_generalise(c, body, ins, store, n_carried) ||
                    loop_pass(c, body, ins, n_carried, &stable)))
        return -1;
    for (size_t k = 0; k < n_carried; k++) {
        InferFact m;
        if (control_merge(c, ins[2 + k], control_out(c, body, 1 + k), &m) || control_set(c, k, &m))
            return -1;
    }
    for (size_t j = n_carried; j < c->n_out; j++)
        if (loop_scan_output(c, j, control_out(c, body, 1 + j)))
            return -1;
    return 0;
}

/* One slice of scan input x along axis: x without that axis. */
static int scan_slice(InferCtx *c, const InferFact *x, int64_t axis, InferFact *out)
{
    *out = (InferFact){x->dtype, -1, NULL, NULL, 0, FACT_TENSOR};
    int a = x->rank > 0 ? infer_axis(axis, x->rank) : -1;
    if (x->rank < 0 || a < 0)
        return x->rank < 0 ? 0 : infer_bad(c, "scan axis out of range");
    if (!(out->dims = infer_dims_new(c, x->rank - 1)))
        return -1;
    out->rank = x->rank - 1;
    for (int i = 0, k = 0; i < x->rank; i++)
        if (i != a)
            out->dims[k++] = x->dims[i];
    return 0;
}

static int64_t scan_axis(const Op *op, const char *name, size_t i)
{
    const Attr *a = op_attr(op, name);
    return a && a->type == ATTR_INTS && i < a->n ? a->ints[i] : 0;
}

/* Scan output j: the body's value with the sequence length inserted. */
static int scan_output(InferCtx *c, size_t i, size_t j, const InferFact *o, Dim len)
{
    if (o->kind != FACT_TENSOR)
        return 0;
    if (o->rank < 0 || o->rank >= CONTROL_MAX)
        return infer_set_dtype(c, i, o->dtype);
    int a = infer_axis(scan_axis(c->op, "scan_output_axes", j), o->rank + 1);
    if (a < 0)
        return infer_bad(c, "scan output axis out of range");
    Dim d[CONTROL_MAX];
    for (int k = 0, m = 0; k <= o->rank; k++)
        d[k] = k == a ? len : o->dims[m++];
    return infer_set(c, i, o->dtype, o->rank + 1, d);
}

/* Scan-9 and later: states, then scan inputs sliced along their axes. */
static int control_scan(InferCtx *c)
{
    Graph *body = control_graph(c->op, "body");
    int64_t m = op_attr_int(c->op, "num_scan_inputs", 0);
    if (!body || m <= 0 || (size_t)m > c->n_in || c->n_in > CONTROL_MAX ||
        body->n_inputs != c->n_in || body->n_outputs != c->n_out)
        return infer_bad(c, "Scan body does not match the node's inputs and outputs");
    size_t n_state = c->n_in - (size_t)m;
    InferFact slices[CONTROL_MAX];
    const InferFact *ins[CONTROL_MAX];
    Dim len = NULL;
    for (size_t i = 0; i < c->n_in; i++) {
        ins[i] = infer_in(c, i);
        if (i < n_state)
            continue;
        const InferFact *x = ins[i];
        int64_t ax = scan_axis(c->op, "scan_input_axes", i - n_state);
        if (scan_slice(c, x, ax, &slices[i]))
            return -1;
        int a = x->rank > 0 ? infer_axis(ax, x->rank) : -1;
        len = len ? len : a >= 0 ? x->dims[a] : NULL;
        ins[i] = &slices[i];
    }
    if (infer_subgraph(c, body, ins, c->n_in))
        return -1;
    for (size_t i = 0; i < c->n_out; i++) {
        const InferFact *o = control_out(c, body, i);
        int rc = i < n_state ? control_set(c, i, o)
                             : scan_output(c, i, i - n_state, o, len ? len : dim_fresh(c->dt));
        if (rc)
            return -1;
    }
    return 0;
}

/* x without its leading `drop` axes (Scan-8's batch and sequence axes). */
static int scan8_strip(InferCtx *c, const InferFact *x, int drop, InferFact *out)
{
    *out = (InferFact){x->dtype, -1, NULL, NULL, 0, FACT_TENSOR};
    if (x->rank < 0)
        return 0;
    if (x->rank < drop)
        return infer_bad(c, "Scan-8 inputs need batch%s axes", drop > 1 ? " and sequence" : "");
    out->rank = x->rank - drop;
    out->dims = x->dims + drop; /* copied when bound */
    return 0;
}

/* Output i of Scan-8: the body's value o behind the leading dims lead. */
static int scan8_output(InferCtx *c, size_t i, const InferFact *o, const Dim *lead, int n_lead)
{
    if (o->kind != FACT_TENSOR || o->rank < 0 || o->rank + n_lead > CONTROL_MAX)
        return o->kind == FACT_TENSOR ? infer_set_dtype(c, i, o->dtype) : 0;
    Dim d[CONTROL_MAX];
    memcpy(d, lead, (size_t)n_lead * sizeof *d);
    memcpy(d + n_lead, o->dims, (size_t)o->rank * sizeof *d);
    return infer_set(c, i, o->dtype, o->rank + n_lead, d);
}

/* Scan-8: (sequence_lens?, states..., scan inputs...), every input with a
 * batch axis first, scan inputs a sequence axis next; the body sees both
 * stripped. State outputs get the batch axis back, scan outputs both. */
static int control_scan8(InferCtx *c)
{
    Graph *body = control_graph(c->op, "body");
    int64_t m = op_attr_int(c->op, "num_scan_inputs", 0);
    size_t n_body = c->n_in - 1;
    if (!body || m <= 0 || (size_t)m > n_body || n_body > CONTROL_MAX ||
        body->n_inputs != n_body || body->n_outputs != c->n_out || c->n_out < n_body - (size_t)m)
        return infer_bad(c, "Scan body does not match the node's inputs and outputs");
    size_t n_state = n_body - (size_t)m;
    InferFact bound[CONTROL_MAX];
    const InferFact *ins[CONTROL_MAX];
    Dim lead[2] = {NULL, NULL}; /* batch, sequence length */
    for (size_t i = 0; i < n_body; i++) {
        const InferFact *x = infer_in(c, 1 + i);
        int drop = i < n_state ? 1 : 2;
        if (scan8_strip(c, x, drop, &bound[i]))
            return -1;
        for (int k = 0; k < drop && x->rank >= drop; k++)
            lead[k] = lead[k] ? lead[k] : x->dims[k];
        ins[i] = &bound[i];
    }
    for (int k = 0; k < 2; k++)
        lead[k] = lead[k] ? lead[k] : dim_fresh(c->dt);
    if (infer_subgraph(c, body, ins, n_body))
        return -1;
    for (size_t i = 0; i < c->n_out; i++)
        if (scan8_output(c, i, control_out(c, body, i), lead, i < n_state ? 1 : 2))
            return -1;
    return 0;
}

static const OpSchema ops_control[] = {
    {"", "If", 1, 1, 1, 0, OPS_VARIADIC, control_if},
    {"", "Loop", 1, 2, OPS_VARIADIC, 0, OPS_VARIADIC, control_loop},
    {"", "Scan", 8, 2, OPS_VARIADIC, 1, OPS_VARIADIC, control_scan8},
    {"", "Scan", 9, 1, OPS_VARIADIC, 1, OPS_VARIADIC, control_scan},
};

const OpTable ops_control_table = {ops_control, sizeof ops_control / sizeof ops_control[0]};
