/* rule.c - what a rule may call (declared in rule.h): reading input
 * facts, constants and integer contents, setting output facts, recording a
 * broken rule, broadcasting, and inferring a subgraph. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rule.h"

const InferFact *infer_in(const InferCtx *c, size_t i)
{
    const InferFact *f = infer_in_any(c, i);
    return f->kind == FACT_TENSOR ? f : &facts_unknown;
}

const InferFact *infer_in_any(const InferCtx *c, size_t i)
{
    return i < c->n_in && c->in[i] ? c->in[i] : &facts_unknown;
}

bool infer_has_in(const InferCtx *c, size_t i) { return i < c->n_in && c->op->inputs[i]; }

int infer_in_rank(const InferCtx *c, size_t i) { return infer_in(c, i)->rank; }

const Tensor *infer_in_const(const InferCtx *c, size_t i)
{
    const Var *v = infer_has_in(c, i) ? c->op->inputs[i] : NULL;
    if (!v)
        return NULL;
    if (v->param)
        return v->is_input && c->run->m->ir_version >= 4 ? NULL : v->param;
    const Op *p = v->producer;
    if (p && !strcmp(p->type, "Constant") && (!p->domain || !*p->domain)) {
        const Attr *a = op_attr(p, "value");
        if (a && a->type == ATTR_TENSOR && a->tensors && a->tensors[0])
            return a->tensors[0];
    }
    return NULL;
}

long infer_in_ints(const InferCtx *c, size_t i, int64_t *vals, size_t cap)
{
    const InferFact *f = infer_in(c, i);
    if (f->value) {
        if (f->n_value > cap)
            return -1;
        for (size_t k = 0; k < f->n_value; k++) {
            if (!f->value[k] || !dim_is_const(f->value[k]))
                return -1;
            vals[k] = dim_value(f->value[k]);
        }
        return (long)f->n_value;
    }
    const Tensor *t = infer_in_const(c, i);
    int64_t n = t ? tensor_numel(t) : -1;
    if (!t || !facts_dtype_is_int(t->dtype) || !t->data || n < 0 || (uint64_t)n > cap ||
        t->nbytes < (size_t)n * dtype_size(t->dtype))
        return -1;
    for (int64_t k = 0; k < n; k++)
        vals[k] = facts_tensor_int(t, (size_t)k);
    return (long)n;
}

Dim *infer_dims_new(InferCtx *c, int rank)
{
    return facts_alloc(c->run, rank > 0 ? (size_t)rank : 1, sizeof(Dim));
}

int infer_set(InferCtx *c, size_t i, int32_t dtype, int rank, const Dim *dims)
{
    if (i >= c->n_out)
        return 0;
    InferFact *f = &c->out[i];
    if (dtype)
        f->dtype = dtype;
    if (rank < 0 || rank > 1024)
        return 0;
    Dim *d = infer_dims_new(c, rank);
    if (!d)
        return -1;
    for (int k = 0; k < rank; k++)
        d[k] = dims ? dims[k] : dim_fresh(c->dt);
    f->rank = rank;
    f->dims = d;
    return 0;
}

int infer_set_own(InferCtx *c, size_t i, int32_t dtype, int rank, Dim *dims)
{
    if (!dims || rank < 0 || rank > 1024)
        return infer_set(c, i, dtype, rank, dims);
    if (i >= c->n_out)
        return 0;
    InferFact *f = &c->out[i];
    if (dtype)
        f->dtype = dtype;
    f->rank = rank;
    f->dims = dims;
    return 0;
}

int infer_set_dtype(InferCtx *c, size_t i, int32_t dtype)
{
    if (i < c->n_out && dtype)
        c->out[i].dtype = dtype;
    return 0;
}

int infer_copy(InferCtx *c, size_t i, size_t j)
{
    const InferFact *f = infer_in(c, j);
    return infer_set(c, i, f->dtype, f->rank, f->dims);
}

int infer_set_fact(InferCtx *c, size_t i, const InferFact *f)
{
    if (i >= c->n_out)
        return 0;
    if (infer_set(c, i, f->dtype, f->rank, f->dims))
        return -1;
    c->out[i].kind = f->kind;
    return 0;
}

int infer_set_tensor(InferCtx *c, size_t i, const Tensor *t)
{
    if (i >= c->n_out)
        return 0;
    facts_from_tensor(c->run, t, &c->out[i]);
    return c->run->oom ? -1 : 0;
}

int infer_set_value(InferCtx *c, size_t i, const Dim *vals, size_t n)
{
    if (i >= c->n_out || n > FACTS_MAX_VALUE)
        return 0;
    Dim *v = facts_alloc(c->run, n, sizeof *v);
    if (!v)
        return -1;
    memcpy(v, vals, n * sizeof *v);
    c->out[i].value = v;
    c->out[i].n_value = n;
    return 0;
}

int infer_bad(InferCtx *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    facts_issue(c->run, op_label(c->op), msg);
    return -1;
}

int infer_axis(int64_t axis, int rank)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

/* The broadcast of dims a (so far) and b: -1 on two static dims that differ. */
static int broadcast_dim(DimTable *dt, Dim *acc, Dim b)
{
    Dim a = *acc;
    bool a1 = dim_is_const(a) && dim_value(a) == 1, b1 = dim_is_const(b) && dim_value(b) == 1;
    if (a == b || b1)
        return 0;
    if (a1) {
        *acc = b;
        return 0;
    }
    if (dim_is_const(a) && dim_is_const(b))
        return -1;
    /* a symbol next to a static d (not 1) is d or 1: the result is d */
    *acc = dim_is_const(a) ? a : dim_is_const(b) ? b : dim_fresh(dt);
    return 0;
}

int infer_broadcast(InferCtx *c, const InferFact *const *ins, size_t n, InferFact *out)
{
    int rank = 0;
    for (size_t k = 0; k < n; k++) {
        if (ins[k]->rank < 0) {
            out->rank = -1;
            return 0;
        }
        rank = ins[k]->rank > rank ? ins[k]->rank : rank;
    }
    Dim *d = infer_dims_new(c, rank);
    if (!d)
        return -1;
    for (int i = 0; i < rank; i++) {
        d[i] = dim_const(c->dt, 1);
        for (size_t k = 0; k < n; k++) {
            int j = i - (rank - ins[k]->rank);
            if (j >= 0 && broadcast_dim(c->dt, &d[i], ins[k]->dims[j]))
                return infer_bad(c, "inputs cannot broadcast (axis %d)", i);
        }
    }
    out->rank = rank;
    out->dims = d;
    return 0;
}

int infer_subgraph(InferCtx *c, Graph *g, const InferFact *const *ins, size_t n)
{
    int rc = c->run->walk(c->run, g, ins, n);
    dim_table_set_origin(c->dt, infer_origin(c->op));
    return rc;
}

const InferFact *infer_fact_of(const InferCtx *c, const Var *v)
{
    const InferFact *f = v ? infer_fact(c->run, v) : NULL;
    return f ? f : &facts_unknown;
}

Dim infer_dims_product(InferCtx *c, const InferFact *f, int from, int to)
{
    Dim p = dim_const(c->dt, 1);
    for (int i = from; i < to; i++)
        p = dim_mul(c->dt, p, f->dims[i]);
    return p;
}

/* No allocation (op_label's would): this runs for every node. */
const char *infer_origin(const Op *op)
{
    if (op->name && *op->name)
        return op->name;
    return op->n_outputs && op->outputs[0] ? op->outputs[0]->name : op->type;
}
