/* pass.c - registry and driver. */
#include "pass.h"

#include <string.h>

#include "../core/infer/infer.h"
#include "../core/ops/ops_registry.h"
#include "passes.h"

/* Pass.acts_on lists. SHADOWED stands for values written twice (de-inplace's
 * work, Model.shadowed), which no operator type tells. */
static const char SHADOWED[] = "";
static const char *const ON_SHADOWED[] = {SHADOWED, NULL};
static const char *const ON_CONSTANT[] = {"Constant", NULL};
static const char *const ON_LINEAR[] = {"Conv", "ConvTranspose", "Gemm", NULL};
static const char *const ON_BN[] = {"BatchNormalization", NULL};
static const char *const ON_PAD[] = {"Pad", NULL};
static const char *const ON_MATMUL[] = {"MatMul", NULL};
static const char *const ON_REDUCE_MEAN[] = {"ReduceMean", NULL};
static const char *const ON_IDENTITY[] = {"Identity", NULL};
static const char *const ON_RESHAPE[] = {"Reshape", NULL};

static const Pass PASSES[] = {
    {"de-inplace", "rename values written by more than one node (restore SSA)", true,
     pass_de_inplace, FACTS_NONE, ON_SHADOWED},
    {"constant", "turn Constant nodes into initializers", true, pass_constant, FACTS_NONE,
     ON_CONSTANT},
    {"fold", "evaluate nodes whose inputs are all constants into initializers", true, pass_fold,
     FACTS_SETTLE, NULL},
    {"reshape-target", "a Reshape target known but for one size becomes a constant with -1",
     true, pass_reshape_target, FACTS_ROUND, ON_RESHAPE},
    {"eliminate-noops", "remove nodes passing their input on unchanged (Dropout, x*1, ...)",
     true, pass_eliminate_noops, FACTS_ROUND, NULL},
    {"cse", "merge nodes computing the same operator on the same inputs", true, pass_cse,
     FACTS_NONE, NULL},
    {"split-params", "give every use of a shared initializer its own copy", true,
     pass_split_params, FACTS_NONE, NULL},
    {"dedup-initializers", "merge equal initializers (turns split-params off)", false,
     pass_dedup_initializers, FACTS_NONE, NULL},
    {"fuse-bias", "fold Add(constant) after Conv/ConvTranspose/Gemm into the bias", true,
     pass_fuse_bias, FACTS_NONE, ON_LINEAR},
    {"fuse-bn", "fold BatchNormalization into the Conv/ConvTranspose/Gemm before it", true,
     pass_fuse_bn, FACTS_NONE, ON_BN},
    {"fuse-bn-forward", "fold BatchNormalization into the unpadded Conv after it", true,
     pass_fuse_bn_forward, FACTS_NONE, ON_BN},
    {"bn-to-conv", "turn a remaining BatchNormalization into a depthwise 1x1 Conv", true,
     pass_bn_to_conv, FACTS_ROUND, ON_BN},
    {"slice", "Slice-1 (attributes) to the input form; raises the opset to 10", true, pass_slice,
     FACTS_ROUND, NULL},
    {"clip", "Clip-6 (attributes) to the input form; raises the opset to 11", true, pass_clip,
     FACTS_ROUND, NULL},
    {"pad", "Pad-2 (attributes) to the input form; raises the opset to 11", true, pass_pad,
     FACTS_ROUND, NULL},
    {"resize", "Resize-10 and Upsample to Resize-11; raises the opset to 11", true, pass_resize,
     FACTS_ROUND, NULL},
    {"fuse-pad", "fold a zero (-inf for MaxPool) constant Pad into the Conv/pool reading it", true,
     pass_fuse_pad, FACTS_ROUND, ON_PAD},
    {"fuse-conv-scale", "fold Mul(per-channel constant) after Conv/ConvTranspose/Gemm into it",
     true, pass_fuse_conv_scale, FACTS_ROUND, ON_LINEAR},
    {"fuse-matmul-add", "MatMul(rank-2 x, constant W) + Add(constant b) to Gemm", true,
     pass_fuse_matmul_add, FACTS_ROUND, ON_MATMUL},
    {"fuse-matmul-add-nd", "the same for rank > 2 x: Reshape -> Gemm -> Reshape (static shape)",
     false, pass_fuse_matmul_add_nd, FACTS_ROUND, ON_MATMUL},
    {"fuse-layernorm", "decomposed layer norm to LayerNormalization (opset >= 17)", true,
     pass_fuse_layernorm, FACTS_ROUND, ON_REDUCE_MEAN},
    {"fuse-rmsnorm", "decomposed RMS norm to RMSNormalization (opset >= 23)", true,
     pass_fuse_rmsnorm, FACTS_ROUND, ON_REDUCE_MEAN},
    {"fuse-gelu", "GELU forms to com.microsoft (Bias/Fast/Quick)Gelu (onnxruntime only)", false,
     pass_fuse_gelu, FACTS_ROUND, NULL},
    {"identity", "remove Identity nodes, rewiring their consumers", true, pass_identity,
     FACTS_NONE, ON_IDENTITY},
    {"isolated", "remove nodes that reach no output, unused initializers and value_info", true,
     pass_isolated, FACTS_NONE, NULL},
    {"infer-shapes", "write the element type and shape of every intermediate value (value_info)",
     true, pass_infer_shapes, FACTS_FRESH, NULL},
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

int pass_run(const Pass *p, Model *m, bool verify, Diag *d)
{
    Run r = {p->run, d};
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

/* Whether p may find work in m (Pass.acts_on). */
static bool may_act(const Pass *p, const Model *m)
{
    if (!p->acts_on)
        return true;
    for (const char *const *t = p->acts_on; *t; t++)
        if (*t == SHADOWED ? m->shadowed : model_may_have_op_type(m, *t))
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
            rc = pass_run(p, m, o->verify, d);
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
    size_t n = sizeof PASSES / sizeof *PASSES;
    /* facts nothing has changed since serve the new round as they are */
    if (st->made_at != model_change_count(m))
        facts_drop(m);
    *work = false;
    for (size_t i = 0; i < n; i++) {
        if (o->enabled && !o->enabled[i])
            continue;
        if (h && h->pass_start)
            h->pass_start(h->ctx, &PASSES[i]);
        size_t before = model_change_count(m);
        int rc = run_pass(&PASSES[i], m, o, st, d);
        bool changed = model_change_count(m) != before;
        *work |= PASSES[i].facts != FACTS_FRESH && changed;
        /* a FACTS_FRESH pass only declares what the facts say */
        if (PASSES[i].facts == FACTS_FRESH && changed && m->facts && st->made_at == before)
            st->made_at = model_change_count(m);
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
