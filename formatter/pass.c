/* pass.c - registry and driver. */
#include "pass.h"

#include <pthread.h>
#include <string.h>

#include "../core/infer/infer.h"
#include "../core/ops/ops_registry.h"
#include "passes.h"

/* The pipeline, in order: each name N is the row `N_pass` that N's file
 * exports (passes.h). Adding a pass adds its name here. */
#define PIPELINE(X) \
    X(de_inplace) X(constant) X(fold) X(reshape_target) X(eliminate_noops) X(cse) \
    X(split_params) X(dedup_initializers) X(fuse_bias) X(fuse_bn) X(fuse_bn_forward) \
    X(bn_to_conv) X(slice) X(clip) X(pad) X(resize) X(fuse_pad) X(fuse_conv_scale) \
    X(fuse_matmul_add) X(fuse_matmul_add_nd) X(fuse_layernorm) X(fuse_rmsnorm) X(fuse_gelu) \
    X(identity) X(isolated) X(infer_shapes)

#define DECLARE_ROW(n) extern const Pass n##_pass;
PIPELINE(DECLARE_ROW)
#define ROW_ADDRESS(n) &n##_pass,
static const Pass *const ROWS[] = {PIPELINE(ROW_ADDRESS)};

enum { N_PASSES = sizeof ROWS / sizeof *ROWS };
static Pass PASSES[N_PASSES]; /* the rows in one array: pass_list's indices */
static pthread_once_t passes_once = PTHREAD_ONCE_INIT;

static void passes_gather(void)
{
    for (size_t i = 0; i < N_PASSES; i++)
        PASSES[i] = *ROWS[i];
}

static const Pass *passes(void)
{
    pthread_once(&passes_once, passes_gather);
    return PASSES;
}

const Pass *pass_list(size_t *n)
{
    *n = N_PASSES;
    return passes();
}

const Pass *pass_find(const char *name)
{
    const Pass *p = passes();
    for (size_t i = 0; i < N_PASSES; i++)
        if (strcmp(p[i].name, name) == 0)
            return &p[i];
    return NULL;
}

typedef struct Run {
    PassFn fn;
    PassCtx pc;
} Run;

static int run_one(Graph *g, void *ctx)
{
    Run *r = ctx;
    r->pc.g = g;
    return r->fn(&r->pc);
}

int pass_run(const Pass *p, Model *m, const PassOptions *opt, bool verify, Diag *d)
{
    static const PassOptions defaults;
    Run r = {p->run, {NULL, opt ? opt : &defaults, d, p->name}};
    m->log.pass = p->name;
    int rc = graph_walk_post(m->graph, run_one, &r);
    if (m->oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass %s", p->name);
    if (rc)
        return d->code ? d->code : diag_set(d, PPQ_EINTERNAL, "pass %s failed", p->name);
    model_compact(m);
    if (verify && graph_verify(m->graph, d))
        return diag_set(d, PPQ_EINTERNAL, "IR check failed after pass %s", p->name);
    return 0;
}

/* When Model.facts was made: the change count then. */
typedef struct FactsState {
    size_t made_at;
} FactsState;

static void facts_drop(Model *m)
{
    infer_free(m->facts);
    m->facts = NULL;
}

/* Makes Model.facts what pass p needs (see PassFacts). */
static int facts_for(const Pass *p, Model *m, FactsState *st, Diag *d)
{
    if (p->facts == FACTS_NONE ||
        (m->facts && (p->facts == FACTS_ROUND || st->made_at == model_change_count(m))))
        return 0;
    facts_drop(m);
    if (!(m->facts = infer_model(m, d, ops_rule)))
        return d->code;
    st->made_at = model_change_count(m);
    return 0;
}

/* Whether p may find work in m (Pass.acts_on, Pass.on_shadowed). */
static bool may_act(const Pass *p, const Model *m)
{
    if (p->on_shadowed)
        return m->shadowed;
    if (!p->acts_on)
        return true;
    for (const char *const *t = p->acts_on; *t; t++)
        if (model_may_have_op_type(m, *t))
            return true;
    return false;
}

/* Runs p on the facts it needs; a FACTS_SETTLE pass again while it changes
 * the model (bounded like the rounds). */
static int run_pass(const Pass *p, Model *m, const PipelineOptions *o, FactsState *st, Diag *d)
{
    for (int run = 0; run < PIPELINE_MAX_ROUNDS; run++) {
        size_t before = model_change_count(m);
        int rc = facts_for(p, m, st, d);
        if (!rc && may_act(p, m))
            rc = pass_run(p, m, &o->pass, o->verify, d);
        if (rc || p->facts != FACTS_SETTLE || model_change_count(m) == before)
            return rc;
    }
    return 0;
}

/* Runs one round; *work: whether it changed something that may give an
 * earlier pass work (see FACTS_FRESH). */
static int run_round(Model *m, const PipelineOptions *o, FactsState *st, bool *work,
                     const Pass **failed, Diag *d)
{
    const PipelineHooks *h = o->hooks;
    const Pass *all = passes();
    /* facts nothing has changed since serve the new round as they are */
    if (st->made_at != model_change_count(m))
        facts_drop(m);
    *work = false;
    for (size_t i = 0; i < N_PASSES; i++) {
        if (o->enabled && !o->enabled[i])
            continue;
        if (h && h->pass_start)
            h->pass_start(h->ctx, &all[i]);
        size_t before = model_change_count(m);
        int rc = run_pass(&all[i], m, o, st, d);
        bool changed = model_change_count(m) != before;
        *work |= all[i].facts != FACTS_FRESH && changed;
        /* a FACTS_FRESH pass only declares what the facts say */
        if (all[i].facts == FACTS_FRESH && changed && m->facts && st->made_at == before)
            st->made_at = model_change_count(m);
        if (h && h->pass_end)
            h->pass_end(h->ctx, i);
        if (rc) {
            if (failed)
                *failed = &all[i];
            return rc;
        }
    }
    return 0;
}

/* The loader refuses a Conv or ConvTranspose reading an integer (or
 * undefined) type, so a model whose Conv reads one only once the passes
 * removed what stood between them (an Identity, a BatchNormalization, a
 * Pad on an integer input) or once shape inference declared it (a Loop
 * body declaring its float output as an integer) is refused here: it was
 * not valid either, and written out it could not be read back. */
static int check_conv_types(Graph *g, void *ctx)
{
    return graph_check_conv_types(g, " (seen once the nodes between them are removed, or "
                                     "from shape inference)", ctx);
}

int pass_pipeline(Model *m, const PipelineOptions *o, const Pass **failed, Diag *d)
{
    if (failed)
        *failed = NULL;
    if (o->verify && graph_verify(m->graph, d))
        return d->code;
    FactsState st = {0};
    int rc = 0;
    bool work = true;
    for (int round = 0; round < PIPELINE_MAX_ROUNDS && !rc && work; round++) {
        if (o->hooks && o->hooks->round_start)
            o->hooks->round_start(o->hooks->ctx);
        rc = run_round(m, o, &st, &work, failed, d);
    }
    facts_drop(m);
    return rc ? rc : graph_walk_post(m->graph, check_conv_types, d) ? d->code : 0;
}
