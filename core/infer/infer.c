/* infer.c - the inference walk (infer.h).
 *
 * Graphs are walked in operation order (the loader leaves them
 * topologically sorted). Each node's rule comes from the lookup; a
 * subgraph is walked by the rule of the operation that owns it (If, Loop,
 * Scan bind its inputs, through InferRun.walk), or with its declared input
 * types when the owner has no rule. Declarations are decoded once per graph
 * and compared with what the rules find. */
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule.h"

/* The fact a declared type states. Symbolic dims are symbols named by their
 * dim_param; in value_info (parse_exprs), a dim_param in the form dim_str
 * writes ("2*seq", "unk_conv_0+1") is that expression again, so that what
 * an earlier run wrote means the same on the next one. */
static void fact_from_decl(InferRun *r, const TypeInfo *t, bool parse_exprs, InferFact *f)
{
    *f = facts_unknown;
    f->dtype = t->elem_type;
    if (t->rank < 0 || !(f->dims = facts_alloc(r, (size_t)t->rank, sizeof *f->dims)))
        return;
    f->rank = t->rank;
    for (int i = 0; i < t->rank; i++) {
        const char *name = t->dim_params ? t->dim_params[i] : NULL;
        Dim parsed = name && *name && parse_exprs ? dim_parse(r->dt, name) : NULL;
        f->dims[i] = t->dims[i] >= 0 ? dim_const(r->dt, t->dims[i])
                     : parsed        ? parsed
                     : name && *name ? dim_sym(r->dt, name)
                                     : dim_fresh(r->dt);
    }
}

static void decl_load(InferRun *r, const ValueInfo *vi, bool parse_exprs)
{
    if (!vi->var || vi->removed || facts_map_get(&r->decls, vi->var))
        return;
    dim_table_set_origin(r->dt, vi->var->name);
    InferFact f;
    fact_from_decl(r, &vi->var->type, parse_exprs, &f);
    if (!facts_known(&f))
        return;
    InferFact *n = facts_dup(r, &f);
    if (!n || facts_map_put(&r->decls, vi->var, n))
        r->oom = true;
}

/* A declared sequence or optional type: the kind, and the tensors it
 * holds as the fact's dtype and shape. In a sequence's declared elements only
 * static dims are facts: a dim_param there (seq(float)[H,W,C]) names each
 * element's own size, which differ from element to element. */
static void held_load(InferRun *r, const HeldDecl *h)
{
    if (!h->var || h->var->removed || facts_map_get(&r->decls, h->var))
        return;
    dim_table_set_origin(r->dt, h->var->name);
    InferFact f;
    fact_from_decl(r, &h->type, false, &f);
    f.kind = h->kind;
    bool elements = h->kind == FACT_SEQUENCE || h->kind == FACT_OPTIONAL_SEQUENCE;
    for (int i = 0; elements && i < f.rank; i++)
        if (!dim_is_const(f.dims[i]))
            f.dims[i] = NULL;
    InferFact *n = facts_dup(r, &f);
    if (!n || facts_map_put(&r->decls, h->var, n))
        r->oom = true;
}

static void decls_load(InferRun *r, const Graph *g)
{
    for (size_t i = 0; i < g->n_held; i++)
        held_load(r, &g->held[i]);
    for (size_t i = 0; i < g->n_inputs; i++)
        decl_load(r, &g->inputs[i], false);
    for (size_t i = 0; i < g->n_value_info; i++)
        decl_load(r, &g->value_info[i], true);
    for (size_t i = 0; i < g->n_outputs; i++)
        decl_load(r, &g->outputs[i], false);
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
 * declaration fill in what inference left unknown: a whole type or shape,
 * or a dim that involves a fresh symbol, by a constant (a dim computed from
 * named ones, such as seq or 2*seq, is knowledge a declaration must not
 * overwrite). A declared symbol does not replace a fresh one: the fresh one
 * carries inference's own knowledge of which values share the size, and a
 * second run names it as the first did (fresh names depend on the node
 * only, dim.h), which keeps formatting idempotent. */
static void fact_merge_decl(InferRun *r, const Var *v, InferFact *f, const InferFact *d)
{
    char msg[1024], a[480], b[480];
    if (f->dtype && d->dtype && f->dtype != d->dtype) {
        snprintf(msg, sizeof msg, "declared type %s, inferred %s", dtype_name(d->dtype),
                 dtype_name(f->dtype));
        facts_issue(r, v->name, msg);
    }
    if (shapes_conflict(f, d)) {
        shape_str(r, d->rank, d->dims, a, sizeof a);
        shape_str(r, f->rank, f->dims, b, sizeof b);
        snprintf(msg, sizeof msg, "declared shape %s, inferred %s", a, b);
        facts_issue(r, v->name, msg);
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
        if (dim_has_fresh(r->dt, f->dims[i]) && dim_is_const(d->dims[i]))
            f->dims[i] = d->dims[i];
}

/* A declared sequence or optional type fills in what inference left
 * unknown of a value of that kind (no conflict is checked: the oracles
 * compare tensor types). */
static void fact_merge_held(InferFact *f, const InferFact *d)
{
    if (!facts_known(f)) {
        *f = *d; /* copied when stored */
        return;
    }
    if (f->kind != d->kind)
        return;
    if (!f->dtype)
        f->dtype = d->dtype;
    if (f->rank < 0 && d->rank >= 0) {
        f->rank = d->rank;
        f->dims = d->dims;
    }
}

/* --- the walk --- */

static int walk_graph(InferRun *r, Graph *g, const InferFact *const *ins, size_t n);

static const char *rule_domain(const Op *op)
{
    const char *d = op->domain;
    return !d || !strcmp(d, "ai.onnx") ? "" : d;
}

/* The rule of op's operator, remembered for the next node: nodes come in
 * runs of one type, and the registry's binary search compares strings.
 * Types and domains are interned per model, so equal pointers are equal
 * names (unequal ones are merely looked up). */
static const InferRule *rule_for(InferRun *r, const Op *op, int64_t opset)
{
    if (op->type != r->last_type || op->domain != r->last_domain || opset != r->last_opset) {
        r->last_type = op->type;
        r->last_domain = op->domain;
        r->last_opset = opset;
        r->last_rule = r->lookup(rule_domain(op), op->type, opset);
    }
    return r->last_rule;
}

static void run_rule(InferRun *r, InferCtx *c)
{
    const Op *op = c->op;
    const InferRule *s = c->opset < 0 ? NULL : rule_for(r, op, c->opset);
    if (!s) {
        facts_unknown_op(r, op);
        return;
    }
    if (!infer_rule_counts_ok(s, op->n_inputs, op->n_outputs)) {
        infer_bad(c, "%zu inputs and %zu outputs are outside %s-%d's bounds", (size_t)op->n_inputs,
                  (size_t)op->n_outputs, op->type, s->since);
        return;
    }
    if (s->infer(c) != 0)
        for (size_t i = 0; i < c->n_out; i++)
            c->out[i] = facts_unknown;
}

static void walk_rest_subgraphs(InferRun *r, const Op *op)
{
    Graph *sub;
    for (size_t i = 0; (sub = op_subgraph(op, i)); i++)
        if (!facts_map_get(&r->visited, sub))
            walk_graph(r, sub, NULL, 0);
}

static int infer_node(InferRun *r, Op *op)
{
    /* most nodes have a few inputs and outputs: no allocation for them */
    enum { FEW = 8 };
    const InferFact *in_few[FEW];
    InferFact out_few[FEW];
    bool few = op->n_inputs <= FEW && op->n_outputs <= FEW;
    const InferFact **in = few ? in_few : calloc(op->n_inputs ? op->n_inputs : 1, sizeof *in);
    InferFact *out = few ? out_few : calloc(op->n_outputs ? op->n_outputs : 1, sizeof *out);
    if (!in || !out) {
        if (!few) {
            free(in);
            free(out);
        }
        return r->oom = true, -1;
    }
    for (size_t i = 0; i < op->n_inputs; i++)
        in[i] = op->inputs[i] ? infer_fact(r, op->inputs[i]) : NULL;
    for (size_t i = 0; i < op->n_outputs; i++)
        out[i] = facts_unknown;
    InferCtx c = {r, op, r->dt, model_domain_opset(r->m, op->domain), in, op->n_inputs, out, op->n_outputs};
    dim_table_set_origin(r->dt, infer_origin(op));
    run_rule(r, &c);
    walk_rest_subgraphs(r, op);
    for (size_t i = 0; i < op->n_outputs; i++) {
        Var *v = op->outputs[i];
        const InferFact *d = v ? facts_map_get(&r->decls, v) : NULL;
        if (d && d->kind != FACT_TENSOR)
            fact_merge_held(&out[i], d);
        else if (d && out[i].kind == FACT_TENSOR)
            fact_merge_decl(r, v, &out[i], d);
        facts_store(r, v, &out[i]);
    }
    if (!few) {
        free(in);
        free(out);
    }
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
        if (!v->param || v->removed)
            continue;
        const InferFact *shared = v->is_input ? NULL : facts_of_shape(r, v->param);
        if (shared) {
            facts_set(r, v, shared);
            continue;
        }
        InferFact f;
        facts_from_tensor(r, v->param, &f);
        const InferFact *d = v->is_input ? facts_map_get(&r->decls, v) : NULL;
        if (v->is_input && overridable_inputs) {
            f.value = NULL;
            f.n_value = 0;
        }
        if (d && d->kind == FACT_TENSOR && d->rank >= 0 && !shapes_conflict(&f, d))
            /* keep declared symbols */
            f.dims = d->dims;
        facts_store_shared(r, v, &f);
    }
}

static void seed_inputs(InferRun *r, const Graph *g, const InferFact *const *ins, size_t n)
{
    for (size_t i = 0; i < g->n_inputs; i++) {
        Var *v = g->inputs[i].var;
        if (!v || v->param)
            continue;
        const InferFact *f = i < n && facts_known(ins[i]) ? ins[i] : facts_map_get(&r->decls, v);
        facts_store(r, v, f);
    }
}

static void check_outputs(InferRun *r, const Graph *g)
{
    for (size_t i = 0; i < g->n_outputs; i++) {
        Var *v = g->outputs[i].var;
        const InferFact *f = v ? infer_fact(r, v) : NULL;
        const InferFact *d = v && !v->producer ? facts_map_get(&r->decls, v) : NULL;
        if (f && d && f->kind == FACT_TENSOR && d->kind == FACT_TENSOR) {
            /* produced outputs were checked at their node */
            InferFact tmp = *f;
            fact_merge_decl(r, v, &tmp, d);
        }
    }
}

/* Walks g (again, when a Loop generalises its carried values: later facts
 * replace earlier ones). */
static int walk_graph(InferRun *r, Graph *g, const InferFact *const *ins, size_t n)
{
    if (facts_map_put(&r->visited, g, g))
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

InferRun *infer_model(Model *m, Diag *d, InferLookupFn lookup)
{
    InferRun *r = facts_new(m);
    if (!r) {
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    r->walk = walk_graph;
    r->lookup = lookup;
    if (walk_graph(r, m->graph, NULL, 0) || dim_table_oom(r->dt)) {
        infer_free(r);
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    return r;
}
