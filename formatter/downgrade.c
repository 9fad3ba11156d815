/* downgrade.c - lowering the default-domain opset (--target-opset below the
 * model's): all or nothing, never a silently different model.
 *
 * A node whose operator resolves to the same version at the target as at the
 * model's opset stays as it is. One whose operator changed in between stays
 * when every version crossed only grew its types (the node's element types
 * are then checked against the old version's) or only added optional
 * attributes and inputs the node does not use (the registry's signature
 * column, from the pinned onnx's schemas); the changes with an exact old
 * form have a down-adapter below; anything else refuses the whole lowering,
 * naming the node. */
#include "downgrade.h"

#include <stdio.h>
#include <string.h>

#include "../core/ops/ops_registry.h"
#include "../core/ops/ops_signatures.h"
#include "params.h"
#include "upgrade.h"

/* --- element types --- */

/* The first opset whose operators accept each element type newer than
 * opset 7 (TensorProto.DataType -> opset): the versions of Cast that added
 * them in the pinned onnx's schemas (the Cast rows of
 * core/ops/ops_signatures.c; onnx's Changelog.md says the same): bfloat16 at
 * 13, the float8 types at 19, int4/uint4 at 21, float4e2m1 at 23, float8e8m0
 * at 24, int2/uint2 at 25. */
static int64_t dtype_since(int32_t dt)
{
    if (dt == 16)
        return 13;
    if (dt >= 17 && dt <= 20)
        return 19;
    if (dt == 21 || dt == 22)
        return 21;
    if (dt == 23)
        return 23;
    if (dt == 24)
        return 24;
    if (dt == 25 || dt == 26)
        return 25;
    return 0;
}

/* --- down-adapters --- */

typedef struct Downgrade {
    const char *op;
    /* NULL when op has an exact form at `to`, else why not (in buf). */
    const char *(*check)(const Op *op, int64_t from, int64_t to, char *buf, size_t size);
    /* Rewrites op; -1 when out of memory. NULL: nothing to rewrite. */
    int (*apply)(Op *op, int64_t from, int64_t to);
    /* The versions (since) whose change it handles. */
    int16_t at[3];
} Downgrade;

/* Does lowering from `from` to `to` cross the version `at`? */
static bool lower_crosses(int64_t from, int64_t to, int64_t at)
{
    return upgrade_crosses(to, from, at);
}

static bool attr_string_is(const Attr *a, const char *s)
{
    size_t n = strlen(s);
    return a && a->type == ATTR_STRING && a->s.len == n && memcmp(a->s.ptr, s, n) == 0;
}

/* The constant int64 1-D values of op's input `slot` (n set; 0 and an empty
 * list when the input is absent), or NULL and *fed when a caller can set it. */
static const Tensor *const_input(const Op *op, size_t slot, bool *fed)
{
    *fed = false;
    if (slot >= op->n_inputs || !op->inputs[slot])
        return NULL;
    const Tensor *t = param_numeric(op->inputs[slot]);
    *fed = !t || t->ndims > 1;
    return *fed ? NULL : t;
}

static bool any_negative(const Tensor *t)
{
    for (int64_t i = 0; t && i < tensor_numel(t); i++)
        if (tensor_get_f64(t, (size_t)i) < 0)
            return true;
    return false;
}

/* Squeeze/Unsqueeze/ReduceSum at 13 and the other reductions at 18 moved
 * axes from an attribute to an optional input. */
static int64_t axes_step(const Op *op)
{
    return op_is(op, "Squeeze") || op_is(op, "Unsqueeze") || op_is(op, "ReduceSum") ? 13 : 18;
}

static const char *axes_check(const Op *op, int64_t from, int64_t to, char *buf, size_t size)
{
    int64_t at = axes_step(op);
    if (!lower_crosses(from, to, at))
        return NULL;
    bool fed;
    const Tensor *axes = const_input(op, 1, &fed);
    bool empty = !axes || tensor_numel(axes) == 0;
    const char *why = NULL;
    if (fed)
        why = "axes that are not a constant";
    else if (empty && op_attr_int(op, "noop_with_empty_axes", 0) != 0)
        why = "noop_with_empty_axes=1 without axes";
    else if (empty && op_is(op, "Unsqueeze"))
        why = "no axes";
    else if (to < 11 && any_negative(axes))
        why = "negative axes";
    if (!why)
        return NULL;
    snprintf(buf, size, "%s-%lld with %s has no opset-%lld form", op->type, (long long)at, why,
             (long long)to);
    return buf;
}

static int axes_to_attr(Op *op, int64_t from, int64_t to)
{
    if (!lower_crosses(from, to, axes_step(op)))
        return 0;
    bool fed;
    const Tensor *axes = const_input(op, 1, &fed);
    int64_t n = axes ? tensor_numel(axes) : 0;
    if (n) {
        int64_t *v = arena_array(&op->graph->model->arena, (size_t)n, sizeof *v);
        if (!v)
            return -1;
        for (int64_t i = 0; i < n; i++)
            v[i] = (int64_t)tensor_get_f64(axes, (size_t)i);
        if (!op_set_attr_ints(op, "axes", v, (size_t)n))
            return -1;
    }
    op_remove_attr(op, "noop_with_empty_axes");
    op_drop_inputs(op, 1);
    return 0;
}

/* Split-18's num_outputs: equal parts of a known axis length (a remainder
 * would make the last part smaller, which the old forms cannot say). */
static const char *split_check(const Op *op, int64_t from, int64_t to, char *buf, size_t size)
{
    const char *why = NULL;
    bool fed = false;
    if (lower_crosses(from, to, 18) && op_attr(op, "num_outputs")) {
        int rank = value_rank(op->inputs[0]);
        int64_t axis = op_attr_int(op, "axis", 0), parts = op_attr_int(op, "num_outputs", 0);
        axis = axis < 0 ? axis + rank : axis;
        int64_t dim = rank > 0 && axis >= 0 && axis < rank ? value_dim(op->inputs[0], (int)axis)
                                                            : -1;
        if (dim < 0 || parts <= 0 || dim % parts != 0 || parts != (int64_t)op->n_outputs)
            why = "num_outputs over an axis not known to divide evenly";
    }
    const Tensor *sizes = lower_crosses(from, to, 13) ? const_input(op, 1, &fed) : NULL;
    if (!why && lower_crosses(from, to, 13) && fed)
        why = "split sizes that are not a constant";
    else if (!why && sizes && tensor_numel(sizes) != (int64_t)op->n_outputs)
        why = "split sizes that are not one per output";
    if (!why && to < 11 && op_attr_int(op, "axis", 0) < 0)
        why = "a negative axis";
    if (!why)
        return NULL;
    snprintf(buf, size, "Split-%d with %s has no opset-%lld form", from >= 18 ? 18 : 13, why,
             (long long)to);
    return buf;
}

static int split_down(Op *op, int64_t from, int64_t to)
{
    Arena *ar = &op->graph->model->arena;
    size_t n = op->n_outputs;
    int64_t *sizes = arena_array(ar, n ? n : 1, sizeof *sizes);
    if (!sizes)
        return -1;
    bool have = false, fed;
    if (lower_crosses(from, to, 18) && op_attr(op, "num_outputs")) {
        int rank = value_rank(op->inputs[0]);
        int64_t axis = op_attr_int(op, "axis", 0);
        axis = axis < 0 ? axis + rank : axis;
        for (size_t i = 0; i < n; i++)
            sizes[i] = value_dim(op->inputs[0], (int)axis) / (int64_t)n;
        op_remove_attr(op, "num_outputs");
        have = true;
        if (to >= 13) {
            Var *v = new_int64_param(op, "_split", sizes, n);
            if (!v || op_append_input(op, v))
                return -1;
            return 0;
        }
    }
    if (!lower_crosses(from, to, 13))
        return 0;
    const Tensor *t = const_input(op, 1, &fed);
    if (t) {
        n = (size_t)tensor_numel(t);
        for (size_t i = 0; i < n; i++)
            sizes[i] = (int64_t)tensor_get_f64(t, i);
        have = true;
    }
    op_drop_inputs(op, 1);
    return have && n && !op_set_attr_ints(op, "split", sizes, n) ? -1 : 0;
}

/* Pad-18 added the axes input, Pad-19 the wrap mode. */
static const char *pad_check(const Op *op, int64_t from, int64_t to, char *buf, size_t size)
{
    const char *why = NULL;
    if (lower_crosses(from, to, 18) && op->n_inputs > 3 && op->inputs[3])
        why = "Pad-18 with an axes input";
    else if (lower_crosses(from, to, 19) && attr_string_is(op_attr(op, "mode"), "wrap"))
        why = "Pad-19 in wrap mode";
    if (!why)
        return NULL;
    snprintf(buf, size, "%s has no opset-%lld form", why, (long long)to);
    return buf;
}

static int pad_down(Op *op, int64_t from, int64_t to)
{
    if (lower_crosses(from, to, 18) && op->n_inputs > 3)
        op_drop_inputs(op, 3);
    return 0;
}

/* Resize-18's new attributes (antialias, axes, keep_aspect_ratio_policy)
 * are the generic OV_ADDED case; Resize-19 added a coordinate mode. */
static const char *resize_check(const Op *op, int64_t from, int64_t to, char *buf, size_t size)
{
    if (!lower_crosses(from, to, 19) ||
        !attr_string_is(op_attr(op, "coordinate_transformation_mode"), "half_pixel_symmetric"))
        return NULL;
    snprintf(buf, size, "Resize-19's half_pixel_symmetric mode has no opset-%lld form",
             (long long)to);
    return buf;
}

/* ScatterND/ScatterElements-16 added reduction (none, add, mul), -18 max
 * and min. */
static const char *scatter_check(const Op *op, int64_t from, int64_t to, char *buf, size_t size)
{
    const Attr *r = op_attr(op, "reduction");
    int64_t at = 0;
    if (lower_crosses(from, to, 18) && r && !attr_string_is(r, "none") &&
        !attr_string_is(r, "add") && !attr_string_is(r, "mul"))
        at = 18;
    else if (lower_crosses(from, to, 16) && r && !attr_string_is(r, "none"))
        at = 16;
    if (!at)
        return NULL;
    snprintf(buf, size, "%s-%lld's reduction %.*s has no opset-%lld form", op->type,
             (long long)at, (int)r->s.len, r->s.ptr, (long long)to);
    return buf;
}

static int scatter_down(Op *op, int64_t from, int64_t to)
{
    if (lower_crosses(from, to, 16))
        op_remove_attr(op, "reduction"); /* none, the only one left */
    return 0;
}

#define AXES(name, at) {name, axes_check, axes_to_attr, {at}}

static const Downgrade DOWNGRADES[] = {
    AXES("ReduceL1", 18),   AXES("ReduceL2", 18),  AXES("ReduceLogSum", 18),
    AXES("ReduceLogSumExp", 18), AXES("ReduceMax", 18), AXES("ReduceMean", 18),
    AXES("ReduceMin", 18),  AXES("ReduceProd", 18), AXES("ReduceSumSquare", 18),
    AXES("ReduceSum", 13),  AXES("Squeeze", 13),   AXES("Unsqueeze", 13),
    {"Split", split_check, split_down, {13, 18}},
    {"Pad", pad_check, pad_down, {18, 19}},
    {"Resize", resize_check, NULL, {19}},
    {"ScatterND", scatter_check, scatter_down, {16, 18}},
    {"ScatterElements", scatter_check, scatter_down, {16, 18}},
};

static const Downgrade *downgrade_for(const char *type)
{
    for (size_t i = 0; i < sizeof DOWNGRADES / sizeof *DOWNGRADES; i++)
        if (strcmp(DOWNGRADES[i].op, type) == 0)
            return &DOWNGRADES[i];
    return NULL;
}

static bool handles(const Downgrade *g, int64_t since)
{
    for (size_t i = 0; g && i < sizeof g->at / sizeof *g->at && g->at[i]; i++)
        if (g->at[i] == since)
            return true;
    return false;
}

/* Versions whose signature stayed (or only grew) but whose meaning changed
 * for the same node: why, or NULL. (The attribute values other versions
 * added are checked by the adapters above.) */
static const char *meaning_changed(const char *type, int64_t since)
{
    if (strcmp(type, "GroupNormalization") == 0 && since == 21)
        return "GroupNormalization-21 scales and shifts per channel, -18 per group";
    if (strcmp(type, "RoiAlign") == 0 && since == 16)
        return "RoiAlign-16's default coordinate mode (half_pixel) is not RoiAlign-10's";
    return NULL;
}

/* Every input of op with the same known shape. */
static bool inputs_same_shape(const Op *op)
{
    int rank = op->n_inputs && op->inputs[0] ? value_rank(op->inputs[0]) : -1;
    for (size_t i = 0; rank >= 0 && i < op->n_inputs; i++) {
        if (!op->inputs[i] || value_rank(op->inputs[i]) != rank)
            return false;
        for (int a = 0; a < rank; a++) {
            int64_t d = value_dim(op->inputs[i], a);
            if (d < 0 || d != value_dim(op->inputs[0], a))
                return false;
        }
    }
    return rank >= 0;
}

/* Sum, Max, Min and Mean broadcast their inputs from opset 8 (the
 * signature did not change); below, the inputs must have one shape. */
static bool loses_broadcast(const Op *op, int64_t since)
{
    static const char *const VARIADIC[] = {"Sum", "Max", "Min", "Mean"};
    for (size_t i = 0; since == 8 && i < sizeof VARIADIC / sizeof *VARIADIC; i++)
        if (strcmp(op->type, VARIADIC[i]) == 0)
            return !inputs_same_shape(op);
    return false;
}

/* --- per node --- */

static bool attr_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        p += len + (end != NULL);
    }
    return false;
}

/* Does op use an attribute or input that version v added to the one before? */
static bool uses_added(const Op *op, const OpSignature *v, const OpSignature *prev)
{
    for (size_t i = 0; i < op->n_attrs; i++)
        if (attr_listed(v->added, op->attrs[i].name))
            return true;
    for (size_t i = prev->n_in; i < op->n_inputs; i++)
        if (op->inputs[i])
            return true;
    return false;
}

/* The element types of op's first n_in inputs and of its outputs are ones
 * version v accepts. */
static const char *types_check(const Op *op, const OpSignature *v, size_t n_in, int64_t to,
                               char *buf, size_t size)
{
    for (size_t k = 0; k < 2; k++) {
        size_t n = k ? op->n_outputs : n_in < op->n_inputs ? n_in : op->n_inputs;
        size_t formals = k ? v->n_out : v->n_in;
        for (size_t i = 0; i < n && formals; i++) {
            const Var *x = k ? op->outputs[i] : op->inputs[i];
            size_t f = i < formals ? i : formals - 1;
            uint32_t mask = k ? v->out[f] : v->in[f];
            int32_t dt = x ? value_dtype(x) : 0;
            if (!dt || !mask || (dt < 32 && (mask >> dt & 1)))
                continue;
            snprintf(buf, size, "its %s '%s' of element type %s has no opset-%lld form (%s-%d "
                     "does not take it)", k ? "output" : "input", x->name, dtype_name(dt),
                     (long long)to, v->type, v->since);
            return buf;
        }
    }
    return NULL;
}

/* Opset 11 allowed negative axes; before it an axis counts from 0 only. */
static bool negative_axis_attr(const Op *op)
{
    for (size_t i = 0; i < op->n_attrs; i++) {
        const Attr *a = &op->attrs[i];
        if (strcmp(a->name, "axis") && strcmp(a->name, "axes"))
            continue;
        if (a->type == ATTR_INT && a->i < 0)
            return true;
        for (size_t j = 0; a->type == ATTR_INTS && j < a->n; j++)
            if (a->ints[j] < 0)
                return true;
    }
    return false;
}

/* Every version of op's operator crossed from `from` down to `to`: NULL when
 * op has an exact form at `to`, else why not. */
static const char *versions_check(const Op *op, const OpSignature *hi, const OpSignature *lo,
                                  int64_t to, char *buf, size_t size)
{
    const Downgrade *g = downgrade_for(op->type);
    for (const OpSignature *v = lo + 1; v <= hi; v++) {
        bool ok = v->kind == OV_TYPES || handles(g, v->since) ||
                  (v->kind == OV_ADDED && !uses_added(op, v, v - 1));
        if (ok && v->since == 11 && negative_axis_attr(op)) {
            snprintf(buf, size, "%s with a negative axis has no opset-%lld form", op->type,
                     (long long)to);
            return buf;
        }
        const char *meaning = meaning_changed(op->type, v->since);
        if (loses_broadcast(op, v->since)) {
            snprintf(buf, size, "%s-8 broadcasts its inputs, which need one known shape below: "
                     "no opset-%lld form", op->type, (long long)to);
            return buf;
        }
        if (meaning) {
            snprintf(buf, size, "%s: no opset-%lld form", meaning, (long long)to);
            return buf;
        }
        if (!ok) {
            if (v->kind == OV_ADDED)
                snprintf(buf, size, "this node uses what %s-%d added (%s or a later input): "
                         "no opset-%lld form", op->type, v->since, v->added, (long long)to);
            else
                snprintf(buf, size, "%s-%d changed its inputs, outputs or attributes and "
                         "ppqfmt has no exact opset-%lld form for it", op->type, v->since,
                         (long long)to);
            return buf;
        }
    }
    return NULL;
}

/* NULL when op can be lowered from `from` to `to` (it needs nothing, or an
 * adapter: *needs set), else why not, in buf. */
static const char *node_check(const Op *op, int64_t from, int64_t to, bool *needs, char *buf,
                              size_t size)
{
    *needs = false;
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < (k ? op->n_outputs : op->n_inputs); i++) {
            const Var *x = k ? op->outputs[i] : op->inputs[i];
            int32_t dt = x ? value_dtype(x) : 0;
            if (dtype_since(dt) > to) {
                snprintf(buf, size, "element type %s of '%s' exists from opset %lld only",
                         dtype_name(dt), x->name, (long long)dtype_since(dt));
                return buf;
            }
        }
    if (*op->domain && strcmp(op->domain, "ai.onnx") != 0)
        return NULL;
    const OpSignature *hi = ops_signature(op->type, from), *lo = ops_signature(op->type, to);
    if (hi == lo)
        return NULL;
    if (!lo || lo->kind == OV_DEPRECATED) {
        snprintf(buf, size, "%s-%d has no form at opset %lld", op->type, hi ? hi->since : 0,
                 (long long)to);
        return buf;
    }
    if (!hi)
        return NULL; /* not an onnx operator at the model's opset: nothing to compare */
    const char *why = versions_check(op, hi, lo, to, buf, size);
    const Downgrade *g = downgrade_for(op->type);
    if (!why && g && g->check)
        why = g->check(op, from, to, buf, size);
    if (why)
        return why;
    *needs = g != NULL;
    /* An adapter moves inputs after the first to attributes: the types
     * checked are those of the data (input 0) and the outputs. */
    return types_check(op, lo, g ? 1 : op->n_inputs, to, buf, size);
}

/* --- the driver --- */

typedef struct Lower {
    int64_t from, to;
    const Op *blocker;
    char why[256];
    Op **todo; /* nodes with an adapter, gathered before anything changes */
    size_t n, cap;
    bool oom;
} Lower;

static int gather(Graph *g, void *ctx)
{
    Lower *w = ctx;
    for (size_t i = 0; i < g->n_ops && !w->blocker; i++) {
        Op *op = g->ops[i];
        bool needs;
        if (op->removed)
            continue;
        if (node_check(op, w->from, w->to, &needs, w->why, sizeof w->why)) {
            w->blocker = op;
            return 0;
        }
        if (!needs)
            continue;
        if (arena_grow(&g->model->arena, (void **)&w->todo, &w->cap, w->n + 1, sizeof *w->todo))
            w->oom = true;
        else
            w->todo[w->n++] = op;
    }
    return 0;
}

/* A model-local function's nodes stay as they are, so it follows only when
 * none of its operators changed between its opset and `to`. */
static const char *functions_check(const Model *m, int64_t to, char *buf, size_t size)
{
    for (size_t i = 0; i < m->n_functions; i++) {
        const ModelFunction *f = &m->functions[i];
        int64_t from = opsets_version(f->opsets, f->n_opsets, "");
        for (size_t j = 0; from > to && j < f->n_nodes; j++) {
            const char *type = f->nodes[j].type;
            if (ops_signature(type, from) == ops_signature(type, to))
                continue;
            snprintf(buf, size, "model-local function '%s', node '%s' (%s): its operator "
                     "changed in between and ppqfmt does not adapt nodes inside functions",
                     f->name, f->nodes[j].name, type);
            return buf;
        }
    }
    return NULL;
}

static int lower_and_adapt(Model *m, Lower *w, Diag *d)
{
    char what[64];
    snprintf(what, sizeof what, "lowered opset %lld \u2192 %lld", (long long)w->from,
             (long long)w->to);
    const char *action = arena_strdup(&m->arena, what);
    if (!action || model_set_opset(m, "", w->to, 0))
        return diag_set(d, PPQ_EINTERNAL, "out of memory lowering the opset");
    model_note(m, action, "");
    model_functions_follow_opset(m, w->from, w->to, action);
    for (size_t i = 0; i < w->n; i++) {
        Op *op = w->todo[i];
        const Downgrade *g = downgrade_for(op->type);
        size_t edits = model_op_edits(m);
        if (g->apply && g->apply(op, w->from, w->to))
            return diag_set(d, PPQ_EINTERNAL, "out of memory lowering node '%s'", op_label(op));
        if (model_op_edits(m) != edits)
            model_note(m, "lowered", op_label(op));
    }
    return 0;
}

int opset_lower(Model *m, int64_t from, int64_t to, Diag *d)
{
    Lower w = {.from = from, .to = to};
    graph_walk_post(m->graph, gather, &w);
    const char *why = w.blocker ? NULL : functions_check(m, to, w.why, sizeof w.why);
    if (w.oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory lowering to opset %lld", (long long)to);
    if (w.blocker)
        return diag_set(d, PPQ_EINPUT, "cannot lower opset %lld to %lld: node '%s' (%s): %s",
                        (long long)from, (long long)to, op_label(w.blocker), w.blocker->type,
                        w.why);
    if (why)
        return diag_set(d, PPQ_EINPUT, "cannot lower opset %lld to %lld: %s", (long long)from,
                        (long long)to, why);
    return lower_and_adapt(m, &w, d);
}
