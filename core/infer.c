/* infer.c - the inference walk, its fact table, and the helpers rules use.
 *
 * Facts are kept in a hash map keyed by Var pointer, owned by the run, so
 * the IR needs no field for them. Graphs are walked in operation order
 * (the loader leaves them topologically sorted); a subgraph is walked by
 * the rule of the operation that owns it (If, Loop, Scan bind its inputs),
 * or with its declared input types when the owner has no rule. */
#include "infer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* Integer tensors up to this many elements carry their contents. */
enum { INFER_MAX_VALUE = 64 };

typedef struct PtrMap {
    const void **keys;
    void **vals;
    size_t cap, len;
} PtrMap;

struct InferRun {
    Model *m;
    Arena arena;
    DimTable *dt;
    InferOptions opt;
    PtrMap facts;   /* Var -> InferFact */
    PtrMap decls;   /* Var -> declared InferFact */
    PtrMap visited; /* Graph -> itself, once walked */
    InferIssue *issues;
    size_t n_issues, cap_issues;
    const char **unknown;
    size_t n_unknown, cap_unknown;
    NameMap unknown_set;
    bool oom;
};

static const InferFact fact_unknown = {0, -1, NULL, NULL, 0};

/* --- pointer map (open addressing) --- */

static size_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

static void *ptrmap_get(const PtrMap *m, const void *k)
{
    if (!m->cap)
        return NULL;
    for (size_t i = ptr_hash(k) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (m->keys[i] == k)
            return m->vals[i];
    return NULL;
}

static void ptrmap_insert(PtrMap *m, const void *k, void *v)
{
    size_t i = ptr_hash(k) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & (m->cap - 1);
    m->len += !m->keys[i];
    m->keys[i] = k;
    m->vals[i] = v;
}

static int ptrmap_put(PtrMap *m, const void *k, void *v)
{
    if ((m->len + 1) * 2 > m->cap) {
        PtrMap n = {NULL, NULL, m->cap ? m->cap * 2 : 1024, 0};
        n.keys = calloc(n.cap, sizeof *n.keys);
        n.vals = calloc(n.cap, sizeof *n.vals);
        if (!n.keys || !n.vals) {
            free(n.keys);
            free(n.vals);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                ptrmap_insert(&n, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = n;
    }
    ptrmap_insert(m, k, v);
    return 0;
}

static void ptrmap_free(PtrMap *m)
{
    free(m->keys);
    free(m->vals);
}

/* --- run bookkeeping --- */

static void *run_alloc(InferRun *r, size_t n, size_t size)
{
    void *p = arena_array(&r->arena, n ? n : 1, size);
    if (!p)
        r->oom = true;
    return p;
}

static void run_issue(InferRun *r, const char *subject, const char *detail)
{
    if (arena_grow(&r->arena, (void **)&r->issues, &r->cap_issues, r->n_issues + 1,
                   sizeof *r->issues)) {
        r->oom = true;
        return;
    }
    InferIssue *is = &r->issues[r->n_issues];
    is->subject = arena_strdup(&r->arena, subject ? subject : "");
    is->detail = arena_strdup(&r->arena, detail);
    if (!is->subject || !is->detail)
        r->oom = true;
    else
        r->n_issues++;
}

static void run_unknown_op(InferRun *r, const Op *op)
{
    char key[256];
    const char *dom = op->domain ? op->domain : "";
    snprintf(key, sizeof key, "%s%s%s", dom, *dom ? ":" : "", op->type);
    if (namemap_get(&r->unknown_set, key))
        return;
    const char *copy = arena_strdup(&r->arena, key);
    if (!copy || namemap_put(&r->unknown_set, copy, (void *)copy) ||
        arena_grow(&r->arena, (void **)&r->unknown, &r->cap_unknown, r->n_unknown + 1,
                   sizeof *r->unknown)) {
        r->oom = true;
        return;
    }
    r->unknown[r->n_unknown++] = copy;
}

/* A copy of f in the run's arena (dims and value arrays included). */
static InferFact *fact_dup(InferRun *r, const InferFact *f)
{
    InferFact *n = run_alloc(r, 1, sizeof *n);
    if (!n)
        return NULL;
    *n = *f;
    if (f->rank > 0) {
        n->dims = run_alloc(r, (size_t)f->rank, sizeof *n->dims);
        if (!n->dims)
            return NULL;
        memcpy(n->dims, f->dims, (size_t)f->rank * sizeof *n->dims);
    }
    if (f->value) {
        n->value = run_alloc(r, f->n_value, sizeof *n->value);
        if (!n->value)
            return NULL;
        memcpy(n->value, f->value, f->n_value * sizeof *n->value);
    }
    return n;
}

static bool fact_known(const InferFact *f) { return f && (f->dtype || f->rank >= 0); }

static void run_store(InferRun *r, const Var *v, const InferFact *f)
{
    if (!v || !fact_known(f))
        return;
    InferFact *n = fact_dup(r, f);
    if (!n || ptrmap_put(&r->facts, v, n))
        r->oom = true;
}

const InferFact *infer_fact(const InferRun *r, const Var *v) { return ptrmap_get(&r->facts, v); }

DimTable *infer_dims(const InferRun *r) { return r->dt; }

const InferIssue *infer_issues(const InferRun *r, size_t *n)
{
    *n = r->n_issues;
    return r->issues;
}

const char *const *infer_unknown_ops(const InferRun *r, size_t *n)
{
    *n = r->n_unknown;
    return r->unknown;
}

/* --- facts from tensors and declarations --- */

static bool dtype_is_int(int32_t t)
{
    return t == DT_INT64 || t == DT_INT32 || t == DT_INT16 || t == DT_INT8 || t == DT_UINT8 ||
           t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64;
}

static int64_t tensor_get_int(const Tensor *t, size_t i)
{
    const uint8_t *p = (const uint8_t *)t->data + i * dtype_size(t->dtype);
    int64_t v64;
    int32_t v32;
    switch (t->dtype) {
    case DT_INT64:
    case DT_UINT64:
        memcpy(&v64, p, 8);
        return v64;
    case DT_INT32:
        memcpy(&v32, p, 4);
        return v32;
    default:
        return (int64_t)tensor_get_f64(t, i);
    }
}

/* Contents of a small integer tensor as constant dims, or NULL. */
static Dim *tensor_value(InferRun *r, const Tensor *t, size_t *n)
{
    int64_t numel = tensor_numel(t);
    if (!dtype_is_int(t->dtype) || !t->data || numel < 0 || numel > INFER_MAX_VALUE ||
        t->nbytes < (size_t)numel * dtype_size(t->dtype))
        return NULL;
    Dim *v = run_alloc(r, (size_t)numel, sizeof *v);
    for (int64_t i = 0; v && i < numel; i++)
        v[i] = dim_const(r->dt, tensor_get_int(t, (size_t)i));
    *n = (size_t)numel;
    return v;
}

static void fact_from_tensor(InferRun *r, const Tensor *t, InferFact *f)
{
    *f = fact_unknown;
    if (t->ndims > 1024)
        return;
    f->dtype = t->dtype;
    f->rank = (int)t->ndims;
    f->dims = run_alloc(r, t->ndims, sizeof *f->dims);
    for (size_t i = 0; f->dims && i < t->ndims; i++)
        f->dims[i] = dim_const(r->dt, t->dims[i]);
    f->value = tensor_value(r, t, &f->n_value);
}

static void fact_from_decl(InferRun *r, const InferDecl *d, InferFact *f)
{
    *f = fact_unknown;
    f->dtype = d->dtype;
    if (d->rank < 0 || !(f->dims = run_alloc(r, (size_t)d->rank, sizeof *f->dims)))
        return;
    f->rank = d->rank;
    for (int i = 0; i < d->rank; i++) {
        const char *name = d->names ? d->names[i] : NULL;
        f->dims[i] = d->dims[i] >= 0 ? dim_const(r->dt, d->dims[i])
                     : name && *name ? dim_sym(r->dt, name)
                                     : dim_fresh(r->dt);
    }
}

static void decl_load(InferRun *r, const ValueInfo *vi)
{
    if (!vi->var || vi->removed || ptrmap_get(&r->decls, vi->var))
        return;
    InferDecl d = {vi->var->type.elem_type, vi->var->type.rank, vi->var->type.dims, NULL};
    if (r->opt.decl && vi->wire.len && r->opt.decl(r->opt.decl_ctx, &r->arena, vi->wire, &d))
        d = (InferDecl){vi->var->type.elem_type, vi->var->type.rank, vi->var->type.dims, NULL};
    dim_table_set_origin(r->dt, vi->var->name);
    InferFact f;
    fact_from_decl(r, &d, &f);
    if (!fact_known(&f))
        return;
    InferFact *n = fact_dup(r, &f);
    if (!n || ptrmap_put(&r->decls, vi->var, n))
        r->oom = true;
}

static void decls_load(InferRun *r, const Graph *g)
{
    for (size_t i = 0; i < g->n_inputs; i++)
        decl_load(r, &g->inputs[i]);
    for (size_t i = 0; i < g->n_value_info; i++)
        decl_load(r, &g->value_info[i]);
    for (size_t i = 0; i < g->n_outputs; i++)
        decl_load(r, &g->outputs[i]);
}

/* --- declared versus inferred --- */

static void shape_str(const InferRun *r, int rank, const Dim *dims, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < rank && k < size; i++) {
        char d[128];
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? "," : "", dim_str(r->dt, dims[i], d, sizeof d));
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
}

static bool shapes_conflict(const InferFact *f, const InferFact *d)
{
    if (f->rank < 0 || d->rank < 0)
        return false;
    if (f->rank != d->rank)
        return true;
    for (int i = 0; i < f->rank; i++)
        if (dim_is_const(f->dims[i]) && dim_is_const(d->dims[i]) && f->dims[i] != d->dims[i])
            return true;
    return false;
}

/* Reports a declaration the inferred fact contradicts, then lets the
 * declaration fill in what inference left unknown (a whole type or shape,
 * or a dim inference could only name). */
static void fact_merge_decl(InferRun *r, const Var *v, InferFact *f, const InferFact *d)
{
    char msg[1024], a[480], b[480];
    if (f->dtype && d->dtype && f->dtype != d->dtype) {
        snprintf(msg, sizeof msg, "declared type %s, inferred %s", dtype_name(d->dtype),
                 dtype_name(f->dtype));
        run_issue(r, v->name, msg);
    }
    if (shapes_conflict(f, d)) {
        shape_str(r, d->rank, d->dims, a, sizeof a);
        shape_str(r, f->rank, f->dims, b, sizeof b);
        snprintf(msg, sizeof msg, "declared shape %s, inferred %s", a, b);
        run_issue(r, v->name, msg);
        return;
    }
    if (!f->dtype)
        f->dtype = d->dtype;
    if (f->rank < 0 && d->rank >= 0) {
        f->rank = d->rank;
        f->dims = d->dims; /* copied when stored */
        return;
    }
    for (int i = 0; i < f->rank && d->rank == f->rank; i++)
        if (!dim_is_const(f->dims[i]) && dim_is_const(d->dims[i]))
            f->dims[i] = d->dims[i];
}

/* --- the walk --- */

static int walk_graph(InferRun *r, Graph *g, const InferFact *const *ins, size_t n);

static int64_t model_opset(const Model *m, const char *domain)
{
    bool dflt = !domain || !*domain || !strcmp(domain, "ai.onnx");
    for (size_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        bool mine = dflt ? (!d || !*d || !strcmp(d, "ai.onnx")) : (d && !strcmp(d, domain));
        if (mine)
            return m->opsets[i].version;
    }
    return -1;
}

static const char *schema_domain(const Op *op)
{
    const char *d = op->domain;
    return !d || !strcmp(d, "ai.onnx") ? "" : d;
}

static bool counts_ok(const OpSchema *s, const Op *op)
{
    return op->n_inputs >= s->min_in && (s->max_in == OPS_VARIADIC || op->n_inputs <= s->max_in) &&
           op->n_outputs >= s->min_out &&
           (s->max_out == OPS_VARIADIC || op->n_outputs <= s->max_out);
}

static void run_rule(InferRun *r, InferCtx *c)
{
    const Op *op = c->op;
    const char *dom = schema_domain(op);
    const OpSchema *s = c->opset < 0 ? NULL : ops_lookup(dom, op->type, c->opset);
    if (!s) {
        run_unknown_op(r, op);
        return;
    }
    if (!counts_ok(s, op)) {
        infer_bad(c, "%zu inputs and %zu outputs are outside %s-%d's bounds", op->n_inputs,
                  op->n_outputs, op->type, s->since);
        return;
    }
    if (s->infer(c) != 0)
        for (size_t i = 0; i < c->n_out; i++)
            c->out[i] = fact_unknown;
}

static void walk_rest_subgraphs(InferRun *r, const Op *op)
{
    Graph *sub;
    for (size_t i = 0; (sub = op_subgraph(op, i)); i++)
        if (!ptrmap_get(&r->visited, sub))
            walk_graph(r, sub, NULL, 0);
}

/* What fresh symbols of op's outputs are named after: the node's name, else
 * its first output's (no allocation: this runs for every node). */
static const char *node_origin(const Op *op)
{
    if (op->name && *op->name)
        return op->name;
    return op->n_outputs && op->outputs[0] ? op->outputs[0]->name : op->type;
}

static int infer_node(InferRun *r, Op *op)
{
    const InferFact **in = calloc(op->n_inputs ? op->n_inputs : 1, sizeof *in);
    InferFact *out = calloc(op->n_outputs ? op->n_outputs : 1, sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        return r->oom = true, -1;
    }
    for (size_t i = 0; i < op->n_inputs; i++)
        in[i] = op->inputs[i] ? infer_fact(r, op->inputs[i]) : NULL;
    for (size_t i = 0; i < op->n_outputs; i++)
        out[i] = fact_unknown;
    InferCtx c = {r, op, r->dt, model_opset(r->m, op->domain), in, op->n_inputs, out, op->n_outputs};
    dim_table_set_origin(r->dt, node_origin(op));
    run_rule(r, &c);
    walk_rest_subgraphs(r, op);
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *v = op->outputs[i];
        const InferFact *d = v ? ptrmap_get(&r->decls, v) : NULL;
        if (d)
            fact_merge_decl(r, v, &out[i], d);
        run_store(r, v, &out[i]);
    }
    free(in);
    free(out);
    return 0;
}

/* Initializers: type and shape from the tensor, contents when small. An
 * initializer listed as an input (IR >= 4) is a default the caller may
 * replace: its contents are not a fact then. */
static void seed_params(InferRun *r, const Graph *g)
{
    bool overridable_inputs = r->m->ir_version >= 4;
    for (size_t i = 0; i < g->n_params; i++) {
        Var *v = g->params[i];
        if (!v->param || v->dropped)
            continue;
        InferFact f;
        fact_from_tensor(r, v->param, &f);
        const InferFact *d = v->is_input ? ptrmap_get(&r->decls, v) : NULL;
        if (v->is_input && overridable_inputs) {
            f.value = NULL;
            f.n_value = 0;
        }
        if (d && d->rank >= 0 && !shapes_conflict(&f, d)) /* keep declared symbols */
            f.dims = d->dims;
        run_store(r, v, &f);
    }
}

static void seed_inputs(InferRun *r, const Graph *g, const InferFact *const *ins, size_t n)
{
    for (size_t i = 0; i < g->n_inputs; i++) {
        Var *v = g->inputs[i].var;
        if (!v || v->param)
            continue;
        const InferFact *f = i < n && fact_known(ins[i]) ? ins[i] : ptrmap_get(&r->decls, v);
        run_store(r, v, f);
    }
}

static void check_outputs(InferRun *r, const Graph *g)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        Var *v = g->outputs[i].var;
        const InferFact *f = v ? infer_fact(r, v) : NULL;
        const InferFact *d = v && !v->producer ? ptrmap_get(&r->decls, v) : NULL;
        if (f && d) { /* produced outputs were checked at their node */
            InferFact tmp = *f;
            fact_merge_decl(r, v, &tmp, d);
        }
    }
}

/* Walks g (again, when a Loop generalises its carried values: later facts
 * replace earlier ones). */
static int walk_graph(InferRun *r, Graph *g, const InferFact *const *ins, size_t n)
{
    if (ptrmap_put(&r->visited, g, g))
        return r->oom = true, -1;
    decls_load(r, g);
    seed_inputs(r, g, ins, n);
    seed_params(r, g);
    for (size_t i = 0; i < g->n_ops && !r->oom; i++)
        if (!g->ops[i]->removed)
            infer_node(r, g->ops[i]);
    check_outputs(r, g);
    return r->oom ? -1 : 0;
}

InferRun *infer_model(Model *m, const InferOptions *o, Diag *d)
{
    InferRun *r = calloc(1, sizeof *r);
    if (!r || !(r->dt = dim_table_new())) {
        free(r);
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    r->m = m;
    if (o)
        r->opt = *o;
    if (walk_graph(r, m->graph, NULL, 0) || dim_table_oom(r->dt)) {
        infer_free(r);
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    return r;
}

void infer_free(InferRun *r)
{
    if (!r)
        return;
    ptrmap_free(&r->facts);
    ptrmap_free(&r->decls);
    ptrmap_free(&r->visited);
    namemap_free(&r->unknown_set);
    dim_table_free(r->dt);
    arena_free(&r->arena);
    free(r);
}

/* --- helpers for rules (ops.h) --- */

const InferFact *infer_in(const InferCtx *c, size_t i)
{
    return i < c->n_in && c->in[i] ? c->in[i] : &fact_unknown;
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
    if (!t || !dtype_is_int(t->dtype) || !t->data || n < 0 || (uint64_t)n > cap ||
        t->nbytes < (size_t)n * dtype_size(t->dtype))
        return -1;
    for (int64_t k = 0; k < n; k++)
        vals[k] = tensor_get_int(t, (size_t)k);
    return (long)n;
}

Dim *infer_dims_new(InferCtx *c, int rank)
{
    return run_alloc(c->run, rank > 0 ? (size_t)rank : 1, sizeof(Dim));
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

int infer_set_tensor(InferCtx *c, size_t i, const Tensor *t)
{
    if (i >= c->n_out)
        return 0;
    fact_from_tensor(c->run, t, &c->out[i]);
    return c->run->oom ? -1 : 0;
}

int infer_set_value(InferCtx *c, size_t i, const Dim *vals, size_t n)
{
    if (i >= c->n_out || n > INFER_MAX_VALUE)
        return 0;
    Dim *v = run_alloc(c->run, n, sizeof *v);
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
    run_issue(c->run, op_label(c->op), msg);
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
    int rc = walk_graph(c->run, g, ins, n);
    dim_table_set_origin(c->dt, node_origin(c->op));
    return rc;
}

const InferFact *infer_fact_of(const InferCtx *c, const Var *v)
{
    const InferFact *f = v ? infer_fact(c->run, v) : NULL;
    return f ? f : &fact_unknown;
}

Dim infer_dims_product(InferCtx *c, const InferFact *f, int from, int to)
{
    Dim p = dim_const(c->dt, 1);
    for (int i = from; i < to; i++)
        p = dim_mul(c->dt, p, f->dims[i]);
    return p;
}
