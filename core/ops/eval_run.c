/* eval_run.c - the reference interpreter (eval_run.h): each node of the
 * main graph through its registry kernel, values looked up by name; each
 * node's results freed after their last reader (RunLife). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_run.h"
#include "eval_run_nn.h"
#include "ops_registry.h"
#include "../ir/namemap.h"

size_t eval_run_inputs(const Graph *g, const Var **vars, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || !v || v->param)
            continue;
        if (n < cap)
            vars[n] = v;
        n++;
    }
    return n;
}

static int run_fail(EvalRunError *err, const Op *op, const char *fmt, const char *what)
{
    err->op = op;
    snprintf(err->why, sizeof err->why, fmt, what);
    return EVAL_RUN_UNSUPPORTED;
}

/* The value of v: its initializer, else what a graph input or node gave. */
static const Tensor *run_value(const NameMap *values, const Var *v)
{
    return v->param ? v->param : namemap_get(values, v->name);
}

/* Constant's value attribute; its other forms are run by no kernel. */
static int run_constant(NameMap *values, const Op *op, EvalRunError *err)
{
    const Attr *v = op_attr(op, "value");
    if (!v || v->type != ATTR_TENSOR || !v->tensors || op->n_outputs != 1 || !op->outputs[0])
        return run_fail(err, op, "no kernel for op %s (only its 'value' form)", op->type);
    return namemap_put(values, op->outputs[0]->name, v->tensors[0]) ? EVAL_RUN_OOM : EVAL_RUN_OK;
}

/* Runs op; *ins_out: the input values it read (NULL for a Constant). */
static int run_node(const Model *m, Arena *a, NameMap *values, const Op *op,
                    const Tensor ***ins_out, EvalRunError *err)
{
    *ins_out = NULL;
    if (op_is(op, "Constant"))
        return run_constant(values, op, err);
    const char *domain = op->domain ? op->domain : "";
    OpEvalFn eval = ops_kernel(domain, op->type, model_domain_opset(m, domain), op->n_inputs,
                               op->n_outputs);
    eval = eval ? eval : eval_run_kernel(domain, op->type);
    if (!eval)
        return run_fail(err, op, "no kernel for op %s", op->type);
    const Tensor **ins = arena_array(a, op->n_inputs ? op->n_inputs : 1, sizeof *ins);
    Tensor **outs = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *outs);
    if (!ins || !outs)
        return EVAL_RUN_OOM;
    *ins_out = ins;
    for (size_t i = 0; i < op->n_inputs; i++) {
        const Var *v = op->inputs[i];
        ins[i] = v ? run_value(values, v) : NULL;
        if (v && !ins[i])
            return run_fail(err, op, "input '%s' has no value before this node", v->name);
    }
    /* No size or multiply-add limit and nothing streamed: the fold pass's
     * limits guard the output file, which the interpreter does not write. */
    EvalCtx c = {op, model_domain_opset(m, domain), ins, op->n_inputs, outs, op->n_outputs,
                 a, m, SIZE_MAX, SIZE_MAX, NULL, EVAL_KEEPS, EVAL_REFUSED_OTHER, 0};
    int rc = eval(&c);
    if (rc == EVAL_OOM)
        return EVAL_RUN_OOM;
    if (rc != EVAL_OK)
        return run_fail(err, op, "kernel declined: %s", c.why ? c.why : "no reason");
    for (size_t j = 0; j < op->n_outputs; j++)
        if (op->outputs[j] && outs[j] && namemap_put(values, op->outputs[j]->name, outs[j]))
            return EVAL_RUN_OOM;
    return EVAL_RUN_OK;
}

/* Where each node's results live: an arena of their own, freed once the
 * last node reading them has run, so that a network's peak memory is its
 * widest cut rather than the sum of its activations. */
typedef struct RunLife {
    size_t n;
    Arena *arenas;    /* per node: its results and its kernel's scratch */
    size_t *last;     /* the last node reading node i's results; n: kept to the end */
    size_t *alias;    /* 1 + the node whose results node i's results point into; 0: none */
    size_t *live, n_live; /* nodes whose arena is not freed yet */
    struct LifeNode {
        const Op *op;
        size_t index;
    } *by_address; /* the nodes sorted by address, to find a producer's index */
} RunLife;

static int life_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct LifeNode *)a)->op;
    uintptr_t y = (uintptr_t)((const struct LifeNode *)b)->op;
    return x < y ? -1 : x > y;
}

/* 1 + the index of v's producer in the graph, 0 when it is an input or a
 * parameter. Found by the variable, not its name: a graph may write a name
 * twice. */
static size_t life_producer(const RunLife *l, const Var *v)
{
    if (!v || v->param || !v->producer || !l->n)
        return 0;
    struct LifeNode key = {v->producer, 0};
    const struct LifeNode *at = bsearch(&key, l->by_address, l->n, sizeof key, life_cmp);
    return at ? at->index + 1 : 0;
}

static void life_extend(RunLife *l, size_t p, size_t until)
{
    l->last[p] = l->last[p] > until ? l->last[p] : until;
}

/* Every node reading a result extends its producer's life; graph outputs
 * and graphs with subgraphs (whose bodies read outer names) keep all. */
static int life_init(const Graph *g, RunLife *l)
{
    size_t n = l->n = g->n_ops, size = n ? n : 1;
    bool keep = false;
    l->arenas = calloc(size, sizeof *l->arenas);
    l->last = calloc(size, sizeof *l->last);
    l->alias = calloc(size, sizeof *l->alias);
    l->live = calloc(size, sizeof *l->live);
    l->by_address = calloc(size, sizeof *l->by_address);
    if (!l->arenas || !l->last || !l->alias || !l->live || !l->by_address)
        return EVAL_RUN_OOM;
    for (size_t i = 0; i < n; i++) {
        l->last[i] = i;
        l->by_address[i] = (struct LifeNode){g->ops[i], i};
        keep = keep || op_subgraph(g->ops[i], 0);
    }
    qsort(l->by_address, n, sizeof *l->by_address, life_cmp);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < g->ops[i]->n_inputs; j++) {
            size_t p = life_producer(l, g->ops[i]->inputs[j]);
            if (p)
                life_extend(l, p - 1, i);
        }
    for (size_t i = 0; i < g->n_outputs; i++) {
        size_t p = life_producer(l, g->outputs[i].var);
        if (p)
            life_extend(l, p - 1, n);
    }
    for (size_t i = 0; keep && i < n; i++)
        l->last[i] = n;
    return EVAL_RUN_OK;
}

/* Does result t point into the bytes of (or equal) input tensor in? */
static bool life_points_into(const Tensor *t, const Tensor *in)
{
    uintptr_t p = (uintptr_t)t->data, b = (uintptr_t)in->data;
    return t == in || (t->data && in->data && p >= b && p < b + in->nbytes);
}

/* After node i ran on inputs ins: a result that shares an input's bytes
 * (Reshape, Identity) keeps that input's node, and the nodes it in turn
 * shares, alive as long as itself; then every node past its last reader
 * is freed. */
static void life_after(const Graph *g, const NameMap *values, const Tensor *const *ins,
                       RunLife *l, size_t i)
{
    const Op *op = g->ops[i];
    for (size_t j = 0; ins && j < op->n_outputs; j++) {
        const Tensor *t = op->outputs[j] ? namemap_get(values, op->outputs[j]->name) : NULL;
        for (size_t k = 0; t && k < op->n_inputs; k++) {
            size_t p = life_producer(l, op->inputs[k]);
            if (!p || p - 1 >= i || !ins[k] || !life_points_into(t, ins[k]))
                continue;
            l->alias[i] = p;
            for (size_t q = p; q; q = l->alias[q - 1])
                life_extend(l, q - 1, l->last[i]);
        }
    }
    l->live[l->n_live++] = i;
    size_t kept = 0;
    for (size_t k = 0; k < l->n_live; k++) {
        size_t j = l->live[k];
        if (l->last[j] <= i)
            arena_free(&l->arenas[j]);
        else
            l->live[kept++] = j;
    }
    l->n_live = kept;
}

static void life_free(RunLife *l)
{
    for (size_t i = 0; l->arenas && i < l->n; i++)
        arena_free(&l->arenas[i]);
    free(l->arenas);
    free(l->last);
    free(l->alias);
    free(l->live);
    free(l->by_address);
}

/* A copy of t in a, for a graph output that outlives the node arenas. */
static Tensor *run_copy(Arena *a, const Tensor *t)
{
    if (t->strings || (!t->data && t->nbytes))
        return NULL;
    Tensor *c = tensor_new(a, t->dtype, t->ndims, t->dims);
    if (c && t->nbytes && c->nbytes == t->nbytes)
        memcpy((void *)c->data, t->data, t->nbytes);
    return c && c->nbytes == t->nbytes ? c : NULL;
}

static int run_outputs(Arena *a, const Graph *g, const NameMap *values, Tensor **outputs,
                       EvalRunError *err)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const Var *v = g->outputs[i].var;
        if (g->outputs[i].removed || !v)
            continue;
        const Tensor *t = run_value(values, v);
        if (!t)
            return run_fail(err, NULL, "graph output '%s' was not computed", v->name);
        if (!(outputs[k++] = run_copy(a, t)))
            return run_fail(err, NULL, "graph output '%s' is not a numeric tensor", v->name);
    }
    return EVAL_RUN_OK;
}

int eval_run_graph(const Model *m, Arena *a, const Tensor *const *inputs, Tensor **outputs,
                   EvalRunError *err)
{
    const Graph *g = m->graph;
    NameMap values = {0};
    RunLife life = {0};
    const Var *in[1];
    size_t n_in = eval_run_inputs(g, in, 0), k = 0;
    memset(err, 0, sizeof *err);
    int rc = life_init(g, &life);
    for (size_t i = 0; i < g->n_inputs && !rc; i++) {
        const Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || !v || v->param)
            continue;
        if (k < n_in && namemap_put(&values, v->name, (void *)inputs[k++]))
            rc = EVAL_RUN_OOM;
    }
    for (size_t i = 0; i < g->n_ops && !rc; i++) {
        if (g->ops[i]->removed)
            continue;
        const Tensor **ins;
        rc = run_node(m, &life.arenas[i], &values, g->ops[i], &ins, err);
        if (!rc)
            life_after(g, &values, ins, &life, i);
    }
    if (!rc)
        rc = run_outputs(a, g, &values, outputs, err);
    namemap_free(&values);
    life_free(&life);
    return rc;
}
