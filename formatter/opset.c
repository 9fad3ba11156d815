/* opset.c - raising the default-domain opset: the rule table, the
 * all-or-nothing driver (for --target-opset and for the legacy-form passes),
 * and the adaptations up to opset 11 that are not a pass's own.
 *
 * Every default-domain operator whose version changes between opset 1 and 26
 * was checked against the ONNX operator changelog (and, from 18 on, against
 * the schemas of the pinned onnx: inputs, outputs and attribute defaults).
 * Those without a rule only gained types, negative axes or indices, optional
 * inputs, or new attributes whose defaults keep the old behaviour (Pad-18
 * axes, Resize-18 antialias, LpPool-18 ceil_mode, AveragePool-19 dilations,
 * Cast-19 saturate and -24 round_mode, which only float8 targets read,
 * QuantizeLinear-21 block_size, Attention-24/25's optional input and window
 * sizes), so their nodes stay as they are. */
#include "opset.h"

#include <stdio.h>
#include <string.h>

#include "../core/infer/infer.h"
#include "../core/ops/ops_registry.h"
#include "downgrade.h"
#include "params.h"
#include "passes.h"
#include "upgrade.h"

/* --- operators adapted on the way --- */

/* Before opset 7, BatchNormalization and Dropout chose training or test mode
 * with is_test (default 0: training). Only test mode has an inference form. */
static const char *is_test_check(const Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 7) && op_attr_int(op, "is_test", 0) != 1)
        return "a training-mode (is_test=0) node from before opset 7";
    return NULL;
}

static void drop_legacy_attrs(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 7))
        return;
    op_remove_attr(op, "is_test");
    op_remove_attr(op, "consumed_inputs");
}

/* Before opset 7, binary operators broadcast only with broadcast=1, aligning
 * B to A at `axis`. Numpy-style broadcasting (opset 7) aligns trailing axes, so
 * an explicit axis is rewritten by giving a constant B trailing ones. */
static const char *broadcast_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 7) || op_attr_int(op, "broadcast", 0) == 0 ||
        !op_attr(op, "axis"))
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

static int broadcast_to_numpy(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 7))
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
    drop_legacy_attrs(op, from, to);
    return 0;
}

static const char *prelu_check(const Op *op, int64_t from, int64_t to)
{
    const Var *slope = op->n_inputs > 1 ? op->inputs[1] : NULL;
    if (upgrade_crosses(from, to, 7) && !(slope && slope->param && tensor_numel(slope->param) == 1))
        return "PRelu from before opset 7 with a non-scalar slope";
    return NULL;
}

static int gemm_drop_broadcast(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 7))
        op_remove_attr(op, "broadcast");
    return 0;
}

/* RNN-1, GRU-3 and LSTM-1 had output_sequence (whether Y is written); from
 * opset 7 Y is simply an optional output. */
static const char *rnn_check(const Op *op, int64_t from, int64_t to)
{
    const Var *y = op->n_outputs ? op->outputs[0] : NULL;
    if (upgrade_crosses(from, to, 7) && op_attr_int(op, "output_sequence", 0) == 0 && y &&
        (y->n_uses || y->n_output_lists))
        return "a recurrent node from before opset 7 whose Y output is used with "
               "output_sequence=0";
    return NULL;
}

static int rnn_drop_output_sequence(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 7))
        op_remove_attr(op, "output_sequence");
    return 0;
}

static int topk_k_to_input(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 10)) /* TopK-10 takes k as an input */
        return 0;
    int64_t k = op_attr_int(op, "k", 0);
    Var *kv = new_int64_param(op, "_k", &k, 1);
    if (!kv)
        return -1;
    op_remove_attr(op, "k");
    return op_append_input(op, kv);
}

static const char *topk_check(const Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 10) && !op_attr(op, "k") ? "TopK has no k attribute" : NULL;
}

/* BatchNormalization-9 dropped `spatial` (1 = per channel, the only kind
 * that remains); BatchNormalization-14 the training form by output count. */
static const char *bn_check(const Op *op, int64_t from, int64_t to)
{
    const char *why = is_test_check(op, from, to);
    if (why)
        return why;
    if (upgrade_crosses(from, to, 9) && op_attr_int(op, "spatial", 1) != 1)
        return "BatchNormalization with spatial=0";
    return upgrade_bn_outputs_check(op, from, to);
}

static int bn_adapt(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 9))
        op_remove_attr(op, "spatial");
    drop_legacy_attrs(op, from, to);
    return 0;
}

/* Dropout-10's mask output became bool; an unused mask can simply go. In
 * inference mode the mask is all false up to Dropout-10 and all true from
 * Dropout-12 (onnxruntime), so a used mask cannot cross opset 12 either. */
static const char *dropout_check(const Op *op, int64_t from, int64_t to)
{
    const char *why = is_test_check(op, from, to);
    if (why)
        return why;
    const Var *mask = op->n_outputs > 1 ? op->outputs[1] : NULL;
    bool used = mask && (mask->n_uses || mask->n_output_lists);
    if (upgrade_crosses(from, to, 10) && used)
        return "Dropout whose mask output is used (its type changes in opset 10)";
    if (upgrade_crosses(from, to, 12) && used)
        return "Dropout whose mask output is used (in inference mode it is all false before "
               "opset 12, all true from 12)";
    return NULL;
}

static int dropout_adapt(Op *op, int64_t from, int64_t to)
{
    drop_legacy_attrs(op, from, to);
    if (upgrade_crosses(from, to, 10) && op_drop_outputs(op, 1))
        return -1;
    return upgrade_dropout_ratio(op, from, to);
}

/* Scatter-9 is deprecated in opset 11; ScatterElements-11 is the same
 * operator under its new name. */
static int scatter_rename(Op *op, int64_t from, int64_t to)
{
    return upgrade_crosses(from, to, 11) ? op_set_type(op, "ScatterElements") : 0;
}

/* Scan-8 has a batch axis and sequence_lens that Scan-9 removed. */
static const char *scan_check(const Op *op, int64_t from, int64_t to)
{
    (void)op;
    return upgrade_crosses(from, to, 9) ? "Scan-8 (its signature changed in opset 9)" : NULL;
}

/* The experimental operators of opsets 1..9, gone from opset 10 on. */
static const char *experimental_check(const Op *op, int64_t from, int64_t to)
{
    (void)op;
    return upgrade_crosses(from, to, 10) ? "an experimental operator removed in opset 10" : NULL;
}

static const Upgrade TOPK = {"TopK", topk_check, topk_k_to_input, NULL, {10}};
static const Upgrade BN = {"BatchNormalization", bn_check, bn_adapt, NULL, {7, 9, 14}};
static const Upgrade DROPOUT = {"Dropout", dropout_check, dropout_adapt, NULL, {7, 10, 12}};
static const Upgrade SCATTER = {"Scatter", NULL, scatter_rename, NULL, {11}};
static const Upgrade SCAN = {"Scan", scan_check, NULL, NULL, {9}};
static const Upgrade GEMM = {"Gemm", NULL, gemm_drop_broadcast, NULL, {7}};
static const Upgrade PRELU = {"PRelu", prelu_check, NULL, NULL, {7}};
static const Upgrade RNN = {"RNN", rnn_check, rnn_drop_output_sequence, NULL, {7}};
static const Upgrade GRU = {"GRU", rnn_check, rnn_drop_output_sequence, NULL, {7}};
static const Upgrade LSTM = {"LSTM", rnn_check, rnn_drop_output_sequence, NULL, {7}};
static const Upgrade BROADCAST = {"(binary)", broadcast_check, broadcast_to_numpy, NULL, {7}};
static const Upgrade EXPERIMENTAL = {"(experimental)", experimental_check, NULL, NULL, {10}};

static const Upgrade *const RULES[] = {
    &UPGRADE_CLIP,      &UPGRADE_PAD,     &UPGRADE_SLICE,       &UPGRADE_RESIZE,
    &UPGRADE_UPSAMPLE,  &TOPK,            &BN,                  &DROPOUT,
    &SCATTER,           &SCAN,            &GEMM,                &PRELU,
    &RNN,               &GRU,             &LSTM,                &UPGRADE_SPLIT,
    &UPGRADE_SQUEEZE,   &UPGRADE_UNSQUEEZE, &UPGRADE_REDUCE_SUM, &UPGRADE_SOFTMAX,
    &UPGRADE_LOG_SOFTMAX, &UPGRADE_HARDMAX, &UPGRADE_ROI_ALIGN, &UPGRADE_RESHAPE,
    &UPGRADE_CONCAT,    &UPGRADE_CAST,    &UPGRADE_LP_POOL,     &UPGRADE_GLOBAL_LP_POOL,
    &UPGRADE_TILE,      &UPGRADE_GRID_SAMPLE, &UPGRADE_DFT,     &UPGRADE_GROUP_NORM,
};

/* Binary operators whose broadcast/axis attributes went away in opset 7. */
static const char *const BINARY[] = {"Add", "Sub",   "Mul",     "Div",  "And", "Or",
                                     "Xor", "Equal", "Greater", "Less", "Pow"};

static const char *const EXPERIMENTAL_OPS[] = {
    "ATen", "Affine", "ConstantFill", "Crop", "DynamicSlice", "GRUUnit", "GivenTensorFill",
    "ImageScaler", "ParametricSoftplus", "Scale", "ScaledTanh"};

static bool listed(const char *const *names, size_t n, const char *type)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], type) == 0)
            return true;
    return false;
}

/* The rule of a default-domain operator, or NULL. */
static const Upgrade *rule_for_type(const char *type)
{
    for (size_t i = 0; i < sizeof RULES / sizeof *RULES; i++)
        if (strcmp(RULES[i]->op, type) == 0)
            return RULES[i];
    for (size_t i = 0; i < UPGRADE_REDUCE18_N; i++)
        if (strcmp(UPGRADE_REDUCE18[i].op, type) == 0)
            return &UPGRADE_REDUCE18[i];
    if (listed(BINARY, sizeof BINARY / sizeof *BINARY, type))
        return &BROADCAST;
    if (listed(EXPERIMENTAL_OPS, sizeof EXPERIMENTAL_OPS / sizeof *EXPERIMENTAL_OPS, type))
        return &EXPERIMENTAL;
    return NULL;
}

static const Upgrade *rule_for(const Op *op)
{
    if (*op->domain && strcmp(op->domain, "ai.onnx") != 0)
        return NULL;
    const Upgrade *u = rule_for_type(op->type);
    return u || !op_attr(op, "consumed_inputs") ? u : &UPGRADE_CONSUMED_INPUTS;
}

/* --- model-local functions --- */

static int64_t function_opset(const ModelFunction *f)
{
    return opsets_version(f->opsets, f->n_opsets, "");
}

/* A model-local function imports its own default-domain opset, which the
 * raise takes along. Its nodes stay as they are (the rules add initializers,
 * which a function cannot hold), so it follows only when none of its
 * operators changed between its opset and `to`; else the first node that
 * did is returned. */
static const FunctionNode *function_blocker(const ModelFunction *f, int64_t to)
{
    int64_t from = function_opset(f);
    for (size_t i = 0; from && from < to && i < f->n_nodes; i++) {
        const Upgrade *u = rule_for_type(f->nodes[i].type);
        if (u && upgrade_crosses_any(u, from, to))
            return &f->nodes[i];
    }
    return NULL;
}

/* The first function that cannot follow the raise to `to`, with its node. */
static const ModelFunction *functions_blocker(const Model *m, int64_t to,
                                              const FunctionNode **node)
{
    for (size_t i = 0; i < m->n_functions; i++)
        if ((*node = function_blocker(&m->functions[i], to)))
            return &m->functions[i];
    return NULL;
}

/* --- helpers for the rules --- */

/* Does op use the form its pass rewrites (not already the input form)? */
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

/* The IR version the onnx release that introduced each opset wrote (onnx's
 * VERSION_TABLE), never below 4: from IR 4 on a new parameter is an
 * initializer alone, which is what the rules add (IR 3 would make each a
 * graph input too, impossible inside a subgraph). */
static int64_t ir_for_opset(int64_t opset)
{
    static const int64_t IR[] = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7, 7,
                                 7, 8, 8, 8, 8, 9, 9, 10, 10, 11, 12, 13, 13};
    return opset < (int64_t)(sizeof IR / sizeof *IR) ? IR[opset] : 13;
}

/* --- the driver --- */

typedef struct Walk {
    int64_t from, to;
    const char *type; /* does the model hold this op in its legacy form? */
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
        w->found |= w->type && op_is(op, w->type) && in_legacy_form(op, w->from);
        if (!u)
            continue;
        const char *why = NULL;
        if (!w->blocker && u->apply && (!op->n_inputs || !op->inputs[0]))
            why = "a node without its first input";
        else if (!w->blocker && u->check)
            why = u->check(op, w->from, w->to);
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

static int compact_graph(Graph *g, void *ctx)
{
    (void)ctx;
    graph_compact(g);
    return 0;
}

/* Sets the versions and adapts every gathered node. Says "raised opset 9 →
 * 11": a change to the whole model, so the action carries the versions and
 * the subject is empty. */
static int raise_and_adapt(Model *m, Walk *w, Diag *d)
{
    char what[64];
    snprintf(what, sizeof what, "raised opset %lld \u2192 %lld", (long long)w->from,
             (long long)w->to);
    /* New parameters follow IR >= 4 rules from here on (not graph inputs). */
    if (model_set_opset(m, "", w->to, ir_for_opset(w->to)))
        return diag_set(d, PPQ_EINTERNAL, "out of memory raising the opset");
    const char *action = arena_strdup(&m->arena, what);
    if (!action)
        return diag_set(d, PPQ_EINTERNAL, "out of memory raising the opset");
    model_note(m, action, "");
    model_functions_follow_opset(m, w->from, w->to, action);
    enum { AHEAD = 8 }; /* nodes between a prefetch and its use */
    for (size_t i = 0; i < w->n; i++) {
        Op *op = w->todo[i];
        const Upgrade *u = rule_for(op), *next = i + AHEAD < w->n ? rule_for(w->todo[i + AHEAD]) : NULL;
        if (next && next->prefetch)
            next->prefetch(w->todo[i + AHEAD]);
        const char *label = op_label(op);
        if (!u->apply)
            continue;
        size_t edits = model_op_edits(m);
        if (u->apply(op, w->from, w->to))
            return diag_set(d, PPQ_EINTERNAL, "out of memory upgrading node '%s'", label);
        if (upgrade_crosses(w->from, w->to, 6)) /* whatever the operator's own rule did */
            op_remove_attr(op, "consumed_inputs");
        if (model_op_edits(m) != edits || op->removed)
            model_note(m, "upgraded", label);
    }
    return 0;
}

/* From a legacy-form pass on the main graph: when the model is below opset
 * `to` and holds a node of this type in its legacy form, raises the whole
 * model to `to` (or warns; also when `to` is above --target-opset, which the
 * user chose over the canonical form). The raise adapts every node the new opset needs
 * adapted, so a pass that is off (--no-clip) still sees its operator
 * rewritten when another pass raises the opset past its change: the output
 * never declares an opset its nodes do not satisfy. */
static int opset_upgrade_for(PassCtx *pc, const char *type, int64_t to)
{
    Graph *g = pc->g;
    Model *m = g->model;
    int64_t from = model_opset(m), ceiling = pc->opt->opset_ceiling;
    if (g->parent || from >= to || from == 0)
        return 0;
    Walk w = {.from = from, .to = to, .type = type};
    graph_walk_post(g, gather, &w);
    if (w.oom)
        return diag_set(pc->d, PPQ_EINTERNAL, "out of memory upgrading to opset %lld",
                        (long long)to);
    if (!w.found)
        return 0;
    if (ceiling && to > ceiling) {
        model_warn(m, type, "legacy form kept: its input form needs opset %lld, above "
                   "--target-opset=%lld", (long long)to, (long long)ceiling);
        return 0;
    }
    if (w.blocker) {
        model_warn(m, op_label(w.blocker), "legacy forms kept at opset %lld: %s cannot be "
                   "adapted to opset %lld", (long long)from, w.why, (long long)to);
        return 0;
    }
    const FunctionNode *fn;
    const ModelFunction *f = functions_blocker(m, to, &fn);
    if (f) {
        model_warn(m, f->name, "legacy forms kept at opset %lld: node '%s' (%s) of this "
                   "model-local function would need adapting to opset %lld, which ppqfmt "
                   "does not do inside functions", (long long)from, fn->name, fn->type,
                   (long long)to);
        return 0;
    }
    return raise_and_adapt(m, &w, pc->d);
}

/* The same raise for the whole model, before the passes; anything that
 * stops it is an error, so no output claims an opset it was not raised to. */
static int raise_model(Model *m, int64_t target, Diag *d)
{
    int64_t from = model_opset(m);
    if (from == 0)
        model_warn(m, "opset_import", "the model imports no default-domain opset: nothing "
                   "to raise to %lld", (long long)target);
    if (from == 0 || from == target)
        return 0;
    /* The rules read element types and ranks (a Clip's bounds take its input's
     * type): before the pipeline nothing has inferred them yet. */
    infer_free(m->facts);
    if (!(m->facts = infer_model(m, d, ops_rule)))
        return d->code;
    if (from > target) {
        int rc = opset_lower(m, from, target, d);
        infer_free(m->facts); /* stale now: the pipeline infers again */
        m->facts = NULL;
        graph_walk_post(m->graph, compact_graph, NULL);
        return rc ? rc : m->oom ? diag_set(d, PPQ_EINTERNAL, "out of memory lowering the opset")
                                : 0;
    }
    Walk w = {.from = from, .to = target};
    graph_walk_post(m->graph, gather, &w);
    const FunctionNode *fn;
    const ModelFunction *f = functions_blocker(m, target, &fn);
    int rc;
    if (w.oom)
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory upgrading to opset %lld", (long long)target);
    else if (w.blocker)
        rc = diag_set(d, PPQ_EINPUT, "cannot raise opset %lld to %lld: node '%s' (%s): %s",
                      (long long)from, (long long)target, op_label(w.blocker), w.blocker->type,
                      w.why);
    else if (f)
        rc = diag_set(d, PPQ_EINPUT, "cannot raise opset %lld to %lld: model-local function "
                      "'%s', node '%s' (%s): its operator changed in between and ppqfmt does "
                      "not adapt nodes inside functions", (long long)from, (long long)target,
                      f->name, fn->name, fn->type);
    else
        rc = raise_and_adapt(m, &w, d);
    infer_free(m->facts); /* stale now: the pipeline infers again */
    m->facts = NULL;
    graph_walk_post(m->graph, compact_graph, NULL);
    return rc ? rc : m->oom ? diag_set(d, PPQ_EINTERNAL, "out of memory raising the opset") : 0;
}

int opset_raise_to(Model *m, int64_t target, Diag *d)
{
    m->log.pass = OPSET_STAGE;
    int rc = raise_model(m, target, d);
    m->log.pass = NULL; /* back to the stage outside the passes ("load") */
    return rc;
}

/* The legacy-form passes: each raises the opset to where its operator's
 * input form begins when the model holds its operator (the rewrite rules are
 * UPGRADE_CLIP & co.). Slice-10 already takes inputs, so slice raises to 10
 * only, and a Clip-6 with clip off stays; the others need 11. */
static int pass_slice(PassCtx *pc)
{
    return opset_upgrade_for(pc, "Slice", 10);
}

const Pass slice_pass = {
    .name = "slice",
    .help = "Slice-1 (attributes) to the input form; raises the opset to 10",
    .on_by_default = true,
    .run = pass_slice,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};

static int pass_clip(PassCtx *pc)
{
    return opset_upgrade_for(pc, "Clip", 11);
}

const Pass clip_pass = {
    .name = "clip",
    .help = "Clip-6 (attributes) to the input form; raises the opset to 11",
    .on_by_default = true,
    .run = pass_clip,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};

static int pass_pad(PassCtx *pc)
{
    return opset_upgrade_for(pc, "Pad", 11);
}

const Pass pad_pass = {
    .name = "pad",
    .help = "Pad-2 (attributes) to the input form; raises the opset to 11",
    .on_by_default = true,
    .run = pass_pad,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};

static int pass_resize(PassCtx *pc)
{
    int rc = opset_upgrade_for(pc, "Resize", 11);
    return rc ? rc : opset_upgrade_for(pc, "Upsample", 11);
}

const Pass resize_pass = {
    .name = "resize",
    .help = "Resize-10 and Upsample to Resize-11; raises the opset to 11",
    .on_by_default = true,
    .run = pass_resize,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};
