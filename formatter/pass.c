/* pass.c - registry and driver. */
#include "pass.h"

#include <string.h>

#include "passes.h"

static const Pass PASSES[] = {
    {"de-inplace", "rename values written by more than one node (restore SSA)", true,
     pass_de_inplace},
    {"constant", "turn Constant nodes into initializers", true, pass_constant},
    {"fold", "evaluate nodes whose inputs are all constants into initializers", true, pass_fold},
    {"split-params", "give every use of a shared initializer its own copy", true,
     pass_split_params},
    {"fuse-bias", "fold Add(constant) after Conv/ConvTranspose/Gemm into the bias", true,
     pass_fuse_bias},
    {"fuse-bn", "fold BatchNormalization into the Conv/ConvTranspose/Gemm before it", true,
     pass_fuse_bn},
    {"bn-to-conv", "turn a remaining BatchNormalization into a depthwise 1x1 Conv", true,
     pass_bn_to_conv},
    {"slice", "Slice-1 (attributes) to the input form; raises the opset to 11", true, pass_slice},
    {"clip", "Clip-6 (attributes) to the input form; raises the opset to 11", true, pass_clip},
    {"pad", "Pad-2 (attributes) to the input form; raises the opset to 11", true, pass_pad},
    {"resize", "Resize-10 and Upsample to Resize-11; raises the opset to 11", true, pass_resize},
    {"identity", "remove Identity nodes, rewiring their consumers", true, pass_identity},
    {"isolated", "remove nodes that reach no output, unused initializers and value_info", true,
     pass_isolated},
};

const Pass *pass_list(size_t *n)
{
    *n = sizeof PASSES / sizeof *PASSES;
    return PASSES;
}

const Pass *pass_find(const char *name)
{
    for (size_t i = 0; i < sizeof PASSES / sizeof *PASSES; i++)
        if (strcmp(PASSES[i].name, name) == 0)
            return &PASSES[i];
    return NULL;
}

typedef struct Run {
    PassFn fn;
    Diag *d;
} Run;

static int run_one(Graph *g, void *ctx)
{
    Run *r = ctx;
    return r->fn(g, r->d);
}

static int compact_one(Graph *g, void *ctx)
{
    (void)ctx;
    graph_compact(g);
    return 0;
}

int pass_run(const Pass *p, Model *m, bool verify, Diag *d)
{
    Run r = {p->run, d};
    m->log.pass = p->name;
    if (!++m->fact_epoch) /* facts of earlier passes are stale (VarFact) */
        m->fact_epoch = 1;
    int rc = graph_walk_post(m->graph, run_one, &r);
    if (m->oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass %s", p->name);
    if (rc)
        return d->code ? d->code : diag_set(d, PPQ_EINTERNAL, "pass %s failed", p->name);
    graph_walk_post(m->graph, compact_one, NULL);
    if (verify && graph_verify(m->graph, d))
        return diag_set(d, PPQ_EINTERNAL, "IR check failed after pass %s", p->name);
    return 0;
}

static int run_round(Model *m, const bool *enabled, bool verify, const PipelineHooks *h,
                     const Pass **failed, Diag *d)
{
    size_t n = sizeof PASSES / sizeof *PASSES;
    for (size_t i = 0; i < n; i++) {
        if (enabled && !enabled[i])
            continue;
        if (h && h->pass_start)
            h->pass_start(h->ctx, &PASSES[i]);
        int rc = pass_run(&PASSES[i], m, verify, d);
        if (h && h->pass_end)
            h->pass_end(h->ctx, i);
        if (rc) {
            if (failed)
                *failed = &PASSES[i];
            return rc;
        }
    }
    return 0;
}

int pass_pipeline(Model *m, const bool *enabled, bool verify, const PipelineHooks *hooks,
                  const Pass **failed, Diag *d)
{
    if (failed)
        *failed = NULL;
    if (verify && graph_verify(m->graph, d))
        return d->code;
    for (int round = 0; round < PIPELINE_MAX_ROUNDS; round++) {
        size_t before = model_change_count(m);
        if (hooks && hooks->round_start)
            hooks->round_start(hooks->ctx);
        int rc = run_round(m, enabled, verify, hooks, failed, d);
        if (rc)
            return rc;
        if (model_change_count(m) == before)
            break;
    }
    return 0;
}
