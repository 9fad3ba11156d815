/* opset.c - the opset 6..10 -> 11 upgrade: the rule table, the all-or-nothing
 * driver, and the operators adapted on the way that are not a pass's own.
 *
 * Every default-domain operator whose version changes between opset 7 and 11
 * was checked against the ONNX operator changelog. Those not listed here only
 * gained types, negative axes or indices, or new attributes whose defaults
 * keep the old behaviour, so their nodes stay as they are. Opset 6 models are
 * upgraded too (legacy broadcast, is_test); older ones are not. */
#include <stdio.h>
#include <string.h>

#include "params.h"
#include "passes.h"
#include "upgrade.h"

/* --- operators adapted on the way --- */

/* Before opset 7, BatchNormalization and Dropout chose training or test mode
 * with is_test (default 0: training). Only test mode has an inference form. */
static const char *is_test_check(const Op *op, int64_t from)
{
    if (from < 7 && op_attr_int(op, "is_test", 0) != 1)
        return "a training-mode (is_test=0) node from before opset 7";
    return NULL;
}

static void drop_legacy_attrs(Op *op)
{
    op_remove_attr(op, "is_test");
    op_remove_attr(op, "consumed_inputs");
}

/* Before opset 7, binary operators broadcast only with broadcast=1, aligning
 * B to A at `axis`. Numpy-style broadcasting (opset 7) aligns trailing axes, so
 * an explicit axis is rewritten by giving a constant B trailing ones. */
static const char *broadcast_check(const Op *op, int64_t from)
{
    if (from >= 7 || op_attr_int(op, "broadcast", 0) == 0 || !op_attr(op, "axis"))
        return NULL;
    const Var *a = op->inputs[0], *b = op->n_inputs > 1 ? op->inputs[1] : NULL;
    int rank = value_rank(a);
    if (!b || !b->param || b->param->sparse || rank < 0)
        return "a legacy broadcast with axis whose operand is not a dense constant of known "
               "rank";
    int64_t axis = op_attr_int(op, "axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis + (int64_t)b->param->ndims > rank)
        return "a legacy broadcast whose axis does not fit its operands";
    return NULL;
}

static int broadcast_to_numpy(Op *op, int64_t from)
{
    if (from >= 7)
        return 0;
    if (op_attr_int(op, "broadcast", 0) != 0 && op_attr(op, "axis")) {
        int a_rank = value_rank(op->inputs[0]);
        const Tensor *b = op->inputs[1]->param;
        int64_t axis = op_attr_int(op, "axis", 0);
        axis = axis < 0 ? axis + a_rank : axis;
        size_t rank = (size_t)(a_rank - axis);
        Arena *ar = &op->graph->model->arena;
        int64_t *dims = arena_array(ar, rank ? rank : 1, sizeof *dims);
        if (!dims)
            return -1;
        for (size_t i = 0; i < rank; i++)
            dims[i] = i < b->ndims ? b->dims[i] : 1;
        Tensor *t = tensor_reshaped(ar, b, rank, dims);
        if (!t)
            return -1;
        if (op_update_param(op, 1, t, param_base_name(op, "_b")))
            return -1;
    }
    op_remove_attr(op, "broadcast");
    op_remove_attr(op, "axis");
    drop_legacy_attrs(op);
    return 0;
}

static const char *prelu_check(const Op *op, int64_t from)
{
    const Var *slope = op->n_inputs > 1 ? op->inputs[1] : NULL;
    if (from < 7 && !(slope && slope->param && tensor_numel(slope->param) == 1))
        return "PRelu from before opset 7 with a non-scalar slope";
    return NULL;
}

static int gemm_drop_broadcast(Op *op, int64_t from)
{
    (void)from;
    op_remove_attr(op, "broadcast");
    return 0;
}


static int topk_k_to_input(Op *op, int64_t from)
{
    if (from >= 10) /* TopK-10 already takes k as an input */
        return 0;
    int64_t k = op_attr_int(op, "k", 0);
    Var *kv = new_int64_param(op, "_k", &k, 1);
    if (!kv)
        return -1;
    op_remove_attr(op, "k");
    return op_append_input(op, kv);
}

static const char *topk_check(const Op *op, int64_t from)
{
    return from < 10 && !op_attr(op, "k") ? "TopK has no k attribute" : NULL;
}

/* BatchNormalization-9 dropped `spatial` (1 = per channel, the only kind
 * that remains). */
static const char *bn_check(const Op *op, int64_t from)
{
    const char *why = is_test_check(op, from);
    if (why)
        return why;
    return op_attr_int(op, "spatial", 1) != 1 ? "BatchNormalization with spatial=0" : NULL;
}

static int bn_drop_spatial(Op *op, int64_t from)
{
    (void)from;
    op_remove_attr(op, "spatial");
    drop_legacy_attrs(op);
    return 0;
}

/* Dropout-10's mask output became bool; an unused mask can simply go. */
static const char *dropout_check(const Op *op, int64_t from)
{
    if (is_test_check(op, from))
        return is_test_check(op, from);
    const Var *mask = op->n_outputs > 1 ? op->outputs[1] : NULL;
    if (from < 10 && mask && (mask->n_uses || mask->is_output))
        return "Dropout whose mask output is used (its type changes in opset 10)";
    return NULL;
}

static int dropout_drop_mask(Op *op, int64_t from)
{
    drop_legacy_attrs(op);
    return from < 10 ? op_drop_outputs(op, 1) : 0;
}

/* Scatter-9 is deprecated in opset 11; ScatterElements-11 is the same
 * operator under its new name. */
static int scatter_rename(Op *op, int64_t from)
{
    (void)from;
    return op_set_type(op, "ScatterElements");
}

/* Scan-8 has a batch axis and sequence_lens that Scan-9 removed. */
static const char *scan_check(const Op *op, int64_t from)
{
    (void)op;
    return from < 9 ? "Scan-8 (its signature changed in opset 9)" : NULL;
}

static const Upgrade TOPK = {"TopK", topk_check, topk_k_to_input};
static const Upgrade BN = {"BatchNormalization", bn_check, bn_drop_spatial};
static const Upgrade DROPOUT = {"Dropout", dropout_check, dropout_drop_mask};
static const Upgrade SCATTER = {"Scatter", NULL, scatter_rename};
static const Upgrade SCAN = {"Scan", scan_check, NULL};

static const Upgrade GEMM = {"Gemm", NULL, gemm_drop_broadcast};
static const Upgrade PRELU = {"PRelu", prelu_check, NULL};
static const Upgrade BROADCAST = {"(binary)", broadcast_check, broadcast_to_numpy};

static const Upgrade *const RULES[] = {
    &UPGRADE_CLIP, &UPGRADE_PAD, &UPGRADE_SLICE, &UPGRADE_RESIZE, &UPGRADE_UPSAMPLE, &TOPK,
    &BN,           &DROPOUT,     &SCATTER,       &SCAN,           &GEMM,             &PRELU,
};

/* Binary operators whose broadcast/axis attributes went away in opset 7. */
static const char *const BINARY[] = {"Add", "Sub",   "Mul",     "Div",  "And", "Or",
                                     "Xor", "Equal", "Greater", "Less", "Pow"};

static const Upgrade *rule_for(const Op *op)
{
    if (*op->domain && strcmp(op->domain, "ai.onnx") != 0)
        return NULL;
    for (size_t i = 0; i < sizeof RULES / sizeof *RULES; i++)
        if (strcmp(RULES[i]->op, op->type) == 0)
            return RULES[i];
    for (size_t i = 0; i < sizeof BINARY / sizeof *BINARY; i++)
        if (strcmp(BINARY[i], op->type) == 0)
            return &BROADCAST;
    return NULL;
}

/* --- helpers for the rules --- */

/* Does op use the form its pass rewrites (not already the opset-11 form)? */
static bool in_legacy_form(const Op *op, int64_t from)
{
    if (op_is(op, "Clip"))
        return from < 11; /* Clip-6, bounds or not */
    if (op_is(op, "Pad"))
        return op_attr(op, "pads") != NULL;
    if (op_is(op, "Slice"))
        return op_attr(op, "starts") != NULL;
    if (op_is(op, "Resize"))
        return op->n_inputs == 2;
    return op_is(op, "Upsample");
}

/* --- the driver --- */

typedef struct Walk {
    int64_t from;
    const char *type; /* does the model hold this op? */
    bool found;
    const Op *blocker; /* the first node that cannot be adapted */
    const char *why;
    Op **todo;         /* nodes with a rule, gathered before anything changes */
    size_t n, cap;
    bool oom;
} Walk;

static int gather(Graph *g, void *ctx)
{
    Walk *w = ctx;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        const Upgrade *u = op->removed ? NULL : rule_for(op);
        w->found |= op_is(op, w->type) && in_legacy_form(op, w->from);
        if (!u)
            continue;
        const char *why = NULL;
        if (!w->blocker && u->apply && (!op->n_inputs || !op->inputs[0]))
            why = "a node without its first input";
        else if (!w->blocker && u->check)
            why = u->check(op, w->from);
        if (why) {
            w->blocker = op;
            w->why = why;
        }
        if (arena_grow(&g->model->arena, (void **)&w->todo, &w->cap, w->n + 1, sizeof *w->todo))
            w->oom = true;
        else
            w->todo[w->n++] = op;
    }
    return 0;
}

/* Says "raised opset 9 → 11": a change to the whole model, so the action
 * carries the versions and the subject is empty. */
static void raise_versions(Model *m, int64_t from)
{
    char what[64];
    snprintf(what, sizeof what, "raised opset %lld \u2192 %d", (long long)from, OPSET_TARGET);
    model_set_opset(m, "", OPSET_TARGET, IR_FOR_OPSET_TARGET);
    const char *action = arena_strdup(&m->arena, what);
    if (action)
        model_note(m, action, "");
    else
        m->oom = true;
}

/* From a pass on the main graph: when the model is below opset 11 and holds a
 * node of this type, upgrades the whole model (or warns). */
static int opset_upgrade_for(Graph *g, const char *type, Diag *d)
{
    Model *m = g->model;
    int64_t from = model_opset(m);
    if (g->parent || from >= OPSET_TARGET || from == 0)
        return 0;
    Walk w = {.from = from, .type = type};
    graph_walk_post(g, gather, &w);
    if (w.oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory upgrading to opset %d", OPSET_TARGET);
    if (!w.found)
        return 0;
    if (from < 6) {
        model_warn(m, type, "legacy form kept: opset %lld is older than 6, which ppqfmt "
                   "does not upgrade", (long long)from);
        return 0;
    }
    if (w.blocker) {
        model_warn(m, op_label(w.blocker), "legacy forms kept at opset %lld: %s cannot be "
                   "adapted to opset %d", (long long)from, w.why, OPSET_TARGET);
        return 0;
    }
    /* New parameters follow IR >= 4 rules from here on (not graph inputs). */
    raise_versions(m, from);
    for (size_t i = 0; i < w.n; i++) {
        Op *op = w.todo[i];
        const Upgrade *u = rule_for(op);
        const char *label = op_label(op);
        if (!u->apply)
            continue;
        if (u->apply(op, from))
            return diag_set(d, PPQ_EINTERNAL, "out of memory upgrading node '%s'", label);
        if (op->changed || op->removed)
            model_note(m, "upgraded", label);
    }
    return 0;
}

/* The legacy-form passes: each starts the upgrade when the model holds its
 * operator (the rewrite rules are UPGRADE_CLIP & co.). */
int pass_slice(Graph *g, Diag *d)
{
    return opset_upgrade_for(g, "Slice", d);
}

int pass_clip(Graph *g, Diag *d)
{
    return opset_upgrade_for(g, "Clip", d);
}

int pass_pad(Graph *g, Diag *d)
{
    return opset_upgrade_for(g, "Pad", d);
}

int pass_resize(Graph *g, Diag *d)
{
    int rc = opset_upgrade_for(g, "Resize", d);
    return rc ? rc : opset_upgrade_for(g, "Upsample", d);
}
