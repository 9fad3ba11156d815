/* eval_run.c - the reference interpreter (eval_run.h): each node of the
 * main graph through its registry kernel, values looked up by name; each
 * node's results freed after their last reader (RunLife). If and Loop run
 * their subgraphs, each in a scope of its own that sees the enclosing
 * scopes' values (their results stay until the main graph's run ends). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_held.h"
#include "eval_run.h"
#include "eval_run_nn.h"
#include "eval_flex.h"
#include "eval_scan.h"
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

/* The values one graph's run has computed, and the scope around it (the
 * graph that holds the If or Loop running this one). */
typedef struct Scope {
    NameMap values;
    const struct Scope *outer;
} Scope;

/* The value of v: its initializer, else what a graph input or node gave,
 * here or in an enclosing scope. */
static const Tensor *run_value(const Scope *s, const Var *v)
{
    if (v->param)
        return v->param;
    const Tensor *t = NULL;
    for (; s && !t; s = s->outer)
        t = namemap_get(&s->values, v->name);
    return t;
}

static int run_control(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err);
static int run_body_op(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err);

/* A sequence or optional reaches only the kernels written for them
 * (eval_held.h); Identity passes it on as it is. */
static int run_held_inputs(Scope *s, const Op *op, const Tensor *const *ins, bool *done,
                           EvalRunError *err)
{
    *done = false;
    for (size_t i = 0; i < op->n_inputs; i++) {
        if (!eval_held(ins[i]) || eval_takes_held(op->type))
            continue;
        *done = true;
        if (!op_is(op, "Identity") || op->n_outputs != 1 || !op->outputs[0])
            return run_fail(err, op, "%s: an input is a sequence or an optional, which its "
                            "kernel does not take", op->type);
        return namemap_put(&s->values, op->outputs[0]->name, (void *)ins[i]) ? EVAL_RUN_OOM
                                                                              : EVAL_RUN_OK;
    }
    return EVAL_RUN_OK;
}

static int run_constant(Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    const char *why = "it has no output";
    Tensor *t = op->n_outputs == 1 && op->outputs[0] ? op_constant_value(a, op, &why) : NULL;
    if (!t)
        return run_fail(err, op, "Constant: %s", why);
    return namemap_put(&s->values, op->outputs[0]->name, t) ? EVAL_RUN_OOM : EVAL_RUN_OK;
}

/* Runs op; *ins_out: the input values it read (NULL for a Constant). */
static int run_node(const Model *m, Arena *a, Scope *s, const Op *op,
                    const Tensor ***ins_out, EvalRunError *err)
{
    *ins_out = NULL;
    if (op_is(op, "Constant"))
        return run_constant(a, s, op, err);
    if (op_is(op, "If") || op_is(op, "Loop") || op_is(op, "SequenceMap"))
        return run_control(m, a, s, op, err);
    if (op_is(op, "Scan") || eval_is_flex_attention(op))
        return run_body_op(m, a, s, op, err);
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
        ins[i] = v ? run_value(s, v) : NULL;
        if (v && !ins[i])
            return run_fail(err, op, "input '%s' has no value before this node", v->name);
    }
    bool done;
    int held = run_held_inputs(s, op, ins, &done, err);
    if (done)
        return held;
    /* No size or multiply-add limit and nothing streamed: the fold pass's
     * limits guard the output file, which the interpreter does not write. */
    EvalCtx c = {op, model_domain_opset(m, domain), ins, op->n_inputs, outs, op->n_outputs,
                 a, m, SIZE_MAX, SIZE_MAX, NULL, EVAL_KEEPS, EVAL_REFUSED_OTHER, 0, false};
    int rc = eval(&c);
    if (rc == EVAL_OOM)
        return EVAL_RUN_OOM;
    if (rc != EVAL_OK)
        return run_fail(err, op, "kernel declined: %s", c.why ? c.why : "no reason");
    for (size_t j = 0; j < op->n_outputs; j++)
        if (op->outputs[j] && outs[j] && namemap_put(&s->values, op->outputs[j]->name, outs[j]))
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

/* The graph's live outputs; copied into a when copy (the main graph's,
 * whose node arenas are freed after), else the values themselves. */
static int run_outputs(Arena *a, const Graph *g, const Scope *s, bool copy, Tensor **outputs,
                       EvalRunError *err)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_outputs; i++) {
        const Var *v = g->outputs[i].var;
        if (g->outputs[i].removed || !v)
            continue;
        const Tensor *t = run_value(s, v);
        if (!t)
            return run_fail(err, NULL, "graph output '%s' was not computed", v->name);
        if (!(outputs[k++] = copy ? eval_value_copy(a, t) : (Tensor *)t))
            return run_fail(err, NULL, "graph output '%s' is not a numeric tensor (or a "
                            "sequence or optional of them)", v->name);
    }
    return EVAL_RUN_OK;
}

/* g's value-taking inputs (eval_run_inputs' order) bound in s to inputs[0..n);
 * one without a value (past n, or NULL) stays unbound. */
static int run_bind_inputs(const Graph *g, Scope *s, const Tensor *const *inputs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const Var *v = g->inputs[i].var;
        if (g->inputs[i].removed || !v || v->param)
            continue;
        if (k < n && inputs[k] && namemap_put(&s->values, v->name, (void *)inputs[k]))
            return EVAL_RUN_OOM;
        k++;
    }
    return EVAL_RUN_OK;
}

int eval_run_graph(const Model *m, Arena *a, const Tensor *const *inputs, Tensor **outputs,
                   EvalRunError *err)
{
    const Graph *g = m->graph;
    Scope s = {{0}, NULL};
    RunLife life = {0};
    memset(err, 0, sizeof *err);
    int rc = life_init(g, &life);
    if (!rc)
        rc = run_bind_inputs(g, &s, inputs, eval_run_inputs(g, NULL, 0));
    for (size_t i = 0; i < g->n_ops && !rc; i++) {
        if (g->ops[i]->removed)
            continue;
        const Tensor **ins;
        rc = run_node(m, &life.arenas[i], &s, g->ops[i], &ins, err);
        if (!rc)
            life_after(g, &s.values, ins, &life, i);
    }
    if (!rc)
        rc = run_outputs(a, g, &s, true, outputs, err);
    namemap_free(&s.values);
    life_free(&life);
    return rc;
}

static int run_ops(const Model *m, const Graph *g, Arena *a, Scope *s, EvalRunError *err)
{
    int rc = EVAL_RUN_OK;
    for (size_t i = 0; i < g->n_ops && !rc; i++) {
        const Tensor **ins;
        if (!g->ops[i]->removed)
            rc = run_node(m, a, s, g->ops[i], &ins, err);
    }
    return rc;
}

/* Runs g in a new scope inside outer: its value-taking inputs (in order)
 * from inputs, its live outputs (in order) into outputs. */
static int run_graph_in(const Model *m, const Graph *g, Arena *a, const Scope *outer,
                        const Tensor *const *inputs, size_t n_inputs, Tensor **outputs,
                        EvalRunError *err)
{
    Scope s = {{0}, outer};
    int rc = run_bind_inputs(g, &s, inputs, n_inputs);
    if (!rc)
        rc = run_ops(m, g, a, &s, err);
    if (!rc)
        rc = run_outputs(a, g, &s, false, outputs, err);
    namemap_free(&s.values);
    return rc;
}

/* --- If and Loop --- */

static const Graph *run_branch(const Op *op, const char *name)
{
    const Attr *at = op_attr(op, name);
    return at && at->type == ATTR_GRAPH && at->graphs ? at->graphs[0] : NULL;
}

/* The one element of a bool (or, for a trip count, int64) scalar input. */
static bool run_scalar(const Tensor *t, int32_t dtype, int64_t *v)
{
    if (!t || t->dtype != dtype || tensor_numel(t) != 1 || !t->data)
        return false;
    *v = eval_load(dtype, t->data).i;
    return true;
}

/* Puts op's outputs: vals[0..n), those op names. */
static int run_put_outputs(Scope *s, const Op *op, Tensor *const *vals, size_t n)
{
    for (size_t j = 0; j < op->n_outputs && j < n; j++)
        if (op->outputs[j] && namemap_put(&s->values, op->outputs[j]->name, vals[j]))
            return EVAL_RUN_OOM;
    return EVAL_RUN_OK;
}

static int run_if(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    int64_t cond;
    if (!op->n_inputs || !op->inputs[0] || !run_scalar(run_value(s, op->inputs[0]), DT_BOOL, &cond))
        return run_fail(err, op, "%s: the condition is not one bool", "If");
    const Graph *g = run_branch(op, cond ? "then_branch" : "else_branch");
    Tensor **outs = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *outs);
    if (!g || !outs)
        return g ? EVAL_RUN_OOM : run_fail(err, op, "%s: a branch is missing", "If");
    int rc = run_graph_in(m, g, a, s, NULL, 0, outs, err);
    return rc ? rc : run_put_outputs(s, op, outs, op->n_outputs);
}

enum { RUN_MAX_TRIPS = 1 << 20 }; /* a Loop that runs longer is refused, never a hang */

static Tensor *run_scalar_new(Arena *a, int32_t dtype, int64_t v)
{
    Tensor *t = tensor_new(a, dtype, 0, NULL);
    if (t)
        eval_store(dtype, (uint8_t *)t->data, (EvalNum){.i = v});
    return t;
}

/* The steps' tensors (one per iteration, of one type and shape) stacked
 * along a new first axis; NULL when they differ or out of memory. */
static Tensor *run_stack(Arena *a, Tensor *const *steps, size_t n)
{
    const Tensor *t0 = steps[0];
    int64_t dims[EVAL_MAX_RANK + 1];
    if (t0->ndims >= EVAL_MAX_RANK || eval_held(t0))
        return NULL;
    dims[0] = (int64_t)n;
    memcpy(dims + 1, t0->dims, t0->ndims * sizeof *dims);
    Tensor *out = tensor_new(a, t0->dtype, t0->ndims + 1, dims);
    for (size_t i = 0; out && i < n; i++) {
        const Tensor *t = steps[i];
        if (!t->data || t->dtype != t0->dtype || t->ndims != t0->ndims ||
            memcmp(t->dims, t0->dims, t0->ndims * sizeof *dims) != 0)
            return NULL;
        memcpy((uint8_t *)out->data + i * t0->nbytes, t->data, t0->nbytes);
    }
    return out;
}

/* Loop's M and cond inputs (either may be omitted). */
static int run_loop_bounds(Scope *s, const Op *op, int64_t *trips, int64_t *cond,
                           EvalRunError *err)
{
    const Var *mv = op->n_inputs > 0 ? op->inputs[0] : NULL;
    const Var *cv = op->n_inputs > 1 ? op->inputs[1] : NULL;
    *trips = RUN_MAX_TRIPS + (int64_t)1;
    *cond = 1;
    if (mv && !run_scalar(run_value(s, mv), DT_INT64, trips))
        return run_fail(err, op, "%s: M is not one int64", "Loop");
    if (cv && !run_scalar(run_value(s, cv), DT_BOOL, cond))
        return run_fail(err, op, "%s: cond is not one bool", "Loop");
    return EVAL_RUN_OK;
}

/* One iteration's scan outputs, kept in steps[k * cap + it]. */
typedef struct LoopRun {
    const Tensor **ins; /* iteration number, condition, carried values */
    Tensor **outs;      /* condition, carried values, scan outputs */
    Tensor **steps;
    size_t n_carried, n_scan, cap;
} LoopRun;

static int run_loop_iterations(const Model *m, Arena *a, Scope *s, const Op *op,
                               const Graph *body, LoopRun *r, int64_t trips, int64_t cond,
                               size_t *done, EvalRunError *err)
{
    int64_t it = 0;
    for (; it < trips && cond; it++) {
        if (it == RUN_MAX_TRIPS)
            return run_fail(err, op, "Loop: over %s iterations", "1048576");
        r->ins[0] = run_scalar_new(a, DT_INT64, it);
        r->ins[1] = run_scalar_new(a, DT_BOOL, 1);
        if (!r->ins[0] || !r->ins[1])
            return EVAL_RUN_OOM;
        int rc = run_graph_in(m, body, a, s, r->ins, 2 + r->n_carried, r->outs, err);
        if (rc)
            return rc;
        if (!run_scalar(r->outs[0], DT_BOOL, &cond))
            return run_fail(err, op, "%s: the body's condition is not one bool", "Loop");
        for (size_t i = 0; i < r->n_carried; i++)
            r->ins[2 + i] = r->outs[1 + i];
        if (r->n_scan && (size_t)it == r->cap)
            return run_fail(err, op, "Loop: more iterations than %s M said", "its");
        for (size_t k = 0; k < r->n_scan; k++)
            r->steps[k * r->cap + (size_t)it] = r->outs[1 + r->n_carried + k];
    }
    *done = (size_t)it;
    return EVAL_RUN_OK;
}

static int run_loop(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    const Graph *body = run_branch(op, "body");
    int64_t trips, cond;
    int rc = run_loop_bounds(s, op, &trips, &cond, err);
    if (rc || !body)
        return rc ? rc : run_fail(err, op, "%s: no body", "Loop");
    LoopRun r = {0};
    r.n_carried = op->n_inputs > 2 ? op->n_inputs - 2 : 0;
    size_t n_body_out = body->n_outputs; /* a Loop's body keeps all its outputs */
    if (n_body_out < 1 + r.n_carried || op->n_outputs != n_body_out - 1)
        return run_fail(err, op, "%s: the body's outputs do not match the node's", "Loop");
    r.n_scan = n_body_out - 1 - r.n_carried;
    /* scan outputs need a bound to size their steps: M, or the cap */
    r.cap = r.n_scan ? (size_t)(trips < RUN_MAX_TRIPS ? trips : RUN_MAX_TRIPS) : 0;
    r.ins = arena_array(a, 2 + r.n_carried, sizeof *r.ins);
    r.outs = arena_array(a, n_body_out, sizeof *r.outs);
    r.steps = r.n_scan && r.cap ? arena_array(a, r.n_scan * r.cap, sizeof *r.steps) : NULL;
    if (!r.ins || !r.outs || (r.n_scan && r.cap && !r.steps))
        return EVAL_RUN_OOM;
    for (size_t i = 0; i < r.n_carried; i++)
        if (!(r.ins[2 + i] = op->inputs[2 + i] ? run_value(s, op->inputs[2 + i]) : NULL))
            return run_fail(err, op, "%s: a carried value has no value", "Loop");
    size_t done = 0;
    if ((rc = run_loop_iterations(m, a, s, op, body, &r, trips, cond, &done, err)))
        return rc;
    Tensor **vals = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *vals);
    if (!vals)
        return EVAL_RUN_OOM;
    for (size_t i = 0; i < r.n_carried; i++)
        vals[i] = (Tensor *)r.ins[2 + i];
    for (size_t k = 0; k < r.n_scan; k++) {
        if (!done)
            return run_fail(err, op, "%s: no iteration ran, so its scan outputs have no shape",
                            "Loop");
        if (!(vals[r.n_carried + k] = run_stack(a, r.steps + k * r.cap, done)))
            return run_fail(err, op, "%s: scan outputs differ in type or shape", "Loop");
    }
    return run_put_outputs(s, op, vals, op->n_outputs);
}

/* --- SequenceMap --- */

/* Input i of a SequenceMap at position p: a sequence's element there (the
 * sequence as long as the first), a tensor itself. */
static const Tensor *run_map_input(const Scope *s, const Op *op, size_t i, size_t p, size_t n)
{
    const Tensor *v = op->inputs[i] ? run_value(s, op->inputs[i]) : NULL;
    const EvalHeld *h = v && v->dtype == EVAL_DT_SEQUENCE ? eval_held(v) : NULL;
    if (!v || (!h && eval_held(v)) || (h && h->n != n))
        return NULL;
    return h ? h->items[p] : v;
}

/* The body once per position of the first input's sequence; output j of
 * each run (copied: it may be an element of an input sequence, whose node
 * may be freed first) collected into output sequence j. */
static int run_sequence_map(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    const Graph *body = run_branch(op, "body");
    const Tensor *first = op->n_inputs && op->inputs[0] ? run_value(s, op->inputs[0]) : NULL;
    const EvalHeld *seq = first && first->dtype == EVAL_DT_SEQUENCE ? eval_held(first) : NULL;
    if (!body || !seq)
        return run_fail(err, op, "%s: no body, or the first input is not a sequence",
                        "SequenceMap");
    const Tensor **ins = arena_array(a, op->n_inputs, sizeof *ins);
    Tensor **outs = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *outs);
    Tensor **vals = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *vals);
    if (!ins || !outs || !vals)
        return EVAL_RUN_OOM;
    for (size_t j = 0; j < op->n_outputs; j++)
        if (!(vals[j] = eval_held_new(a, EVAL_DT_SEQUENCE, 0, seq->n)))
            return EVAL_RUN_OOM;
    for (size_t p = 0; p < seq->n; p++) {
        for (size_t i = 0; i < op->n_inputs; i++)
            if (!(ins[i] = run_map_input(s, op, i, p, seq->n)))
                return run_fail(err, op, "%s: an input is absent, an optional, or a sequence "
                                "of another length", "SequenceMap");
        int rc = run_graph_in(m, body, a, s, ins, op->n_inputs, outs, err);
        for (size_t j = 0; !rc && j < op->n_outputs; j++) {
            EvalHeld *h = (EvalHeld *)vals[j]->data;
            if (eval_held(outs[j]))
                return run_fail(err, op, "%s: the body gives a sequence or optional",
                                "SequenceMap");
            if (!(h->items[p] = eval_value_copy(a, outs[j])))
                return run_fail(err, op, "%s: the body's output is not a numeric tensor",
                                "SequenceMap");
            h->elem_type = outs[j]->dtype;
        }
        if (rc)
            return rc;
    }
    return run_put_outputs(s, op, vals, op->n_outputs);
}

static int run_control(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    if (op_is(op, "SequenceMap"))
        return run_sequence_map(m, a, s, op, err);
    return op_is(op, "If") ? run_if(m, a, s, op, err) : run_loop(m, a, s, op, err);
}

/* --- Scan and FlexAttention (eval_scan.h, eval_flex.h), their bodies run
 * in this node's scope --- */

typedef struct RunBodyCtx {
    const Scope *scope;
    EvalRunError *err;
} RunBodyCtx;

static int run_body(const EvalBody *b, const Graph *g, const Tensor *const *inputs, size_t n,
                    Tensor **outputs)
{
    const RunBodyCtx *ctx = b->ctx;
    int rc = run_graph_in(b->model, g, b->arena, ctx->scope, inputs, n, outputs, ctx->err);
    return rc == EVAL_RUN_OOM ? EVAL_OOM : rc ? EVAL_DECLINE : EVAL_OK;
}

static int run_body_op(const Model *m, Arena *a, Scope *s, const Op *op, EvalRunError *err)
{
    const Tensor **ins = arena_array(a, op->n_inputs ? op->n_inputs : 1, sizeof *ins);
    Tensor **outs = arena_array(a, op->n_outputs ? op->n_outputs : 1, sizeof *outs);
    if (!ins || !outs)
        return EVAL_RUN_OOM;
    for (size_t i = 0; i < op->n_inputs; i++)
        ins[i] = op->inputs[i] ? run_value(s, op->inputs[i]) : NULL;
    RunBodyCtx ctx = {s, err};
    EvalBody b = {run_body, m, a, &ctx, NULL};
    int rc = op_is(op, "Scan") ? eval_run_scan(&b, op, ins, outs)
                               : eval_run_flex_attention(&b, op, ins, outs);
    if (rc == EVAL_OOM)
        return EVAL_RUN_OOM;
    if (rc)
        return b.why ? run_fail(err, op, "%s", b.why) : EVAL_RUN_UNSUPPORTED;
    return run_put_outputs(s, op, outs, op->n_outputs);
}
