/* eliminate_noops.c - pass "eliminate-noops": operations that compute their
 * input unchanged are removed and their readers read that input: Dropout in
 * inference form (its mask unread), Cast/CastLike to the input's own type,
 * Reshape/Flatten/Squeeze/Unsqueeze/Expand/Tile that keep the shape,
 * Transpose with the identity permutation, a Slice covering the whole
 * tensor, a Pad of zeros, x+0, x-(+0), x*1, x/1 (the constant, up to 1 MiB,
 * neither broadcasts x up nor changes its type; -0.0+0 gives +0.0, as
 * onnxruntime's own rewrite does), and a Concat or Split of one piece. Two
 * Transposes in a row compose into one, and a Reshape of a Reshape reads the
 * first one's input, when nothing else reads the intermediate value.
 *
 * Shapes come from shape inference (the round's facts): a dim is compared
 * with another as a number or as the same symbolic expression, never
 * guessed, and an op whose shapes are not known stays. Shape-like inputs
 * (Reshape's shape, Slice's starts...) count when inference knows their
 * contents: constants, outer-scope constants in If/Loop/Scan bodies, or
 * values computed from shapes. Graph output names and types never change:
 * when the removed op writes a graph output, the input's producer writes it
 * instead (as the identity pass does), and where that is impossible the op
 * stays and the report says why. */
#include <math.h>
#include <string.h>

#include "match.h"
#include "params.h"
#include "passes.h"

enum {
    NOOP_MAX_RANK = 64,
    /* Add/Sub/Mul/Div constants up to this size are read to see whether
     * they hold only 0 or 1: no-op constants are scalars and small vectors,
     * and a large one would be read (paged in) for nothing. */
    NOOP_MAX_UNIT_BYTES = 1 << 20,
};

/* Slice ends from here on reach past any dim a tensor can have. */
#define NOOP_END_OF_ANY_DIM ((int64_t)1 << 62)

/* v's bytes when it is a constant: an initializer held in memory that no
 * caller can override (from IR 4 on, one listed as an input is a default). */
static const Tensor *noop_constant(const Var *v)
{
    if (!v || !v->param || v->param->sparse || !v->param->data || !dtype_size(v->param->dtype))
        return NULL;
    if (v->is_input && v->graph->model->ir_version >= 4)
        return NULL;
    return v->param;
}

/* v's dims as inference knows them: its rank, or -1. */
static int noop_dims(const Var *v, const Dim **dims)
{
    const InferFact *f = value_fact(v);
    if (!f || f->rank < 0 || f->rank > NOOP_MAX_RANK)
        return -1;
    *dims = f->dims;
    return f->rank;
}

/* The integer contents of v as inference knows them, every element known
 * (a number or a symbolic dim): their count, or -1. */
static long noop_values(const Var *v, const Dim **out, size_t cap)
{
    const InferFact *f = value_fact(v);
    if (!f || !f->value || f->n_value > cap)
        return -1;
    for (size_t i = 0; i < f->n_value; i++)
        if (!f->value[i])
            return -1;
    *out = f->value;
    return (long)f->n_value;
}

/* The same when every element is a number. */
static long noop_ints(const Var *v, int64_t *out, size_t cap)
{
    const Dim *d = NULL;
    long n = noop_values(v, &d, cap);
    for (long i = 0; i < n; i++) {
        if (!dim_is_const(d[i]))
            return -1;
        out[i] = dim_value(d[i]);
    }
    return n;
}

static bool noop_dim_is(Dim d, int64_t v)
{
    return dim_is_const(d) && dim_value(d) == v;
}

static bool noop_all(const int64_t *v, long n, int64_t want)
{
    for (long i = 0; i < n; i++)
        if (v[i] != want)
            return false;
    return n >= 0;
}

static bool noop_any(const int64_t *v, long n, int64_t want)
{
    for (long i = 0; i < n; i++)
        if (v[i] == want)
            return true;
    return false;
}

/* Is v a one-element constant equal to 0? */
static bool noop_const_zero(const Var *v)
{
    const Tensor *t = noop_constant(v);
    return t && tensor_numel(t) == 1 && tensor_get_f64(t, 0) == 0;
}

/* Dropout whose mask nobody reads, in inference form or dropping nothing.
 * Before opset 7 only an explicit is_test=1 says so; from 12 on a
 * training_mode input must be absent or a constant false, unless the ratio
 * input is a constant 0 (torch exports Dropout(p=0) in training mode: it
 * keeps every element, scaled by 1/(1-0)). */
static bool noop_dropout(const Op *op)
{
    const Var *mask = op->n_outputs > 1 ? op->outputs[1] : NULL;
    int64_t opset = model_domain_opset(op->graph->model, "");
    if (mask && (mask->n_uses || mask->n_output_lists))
        return false;
    if (opset < 7)
        return op_attr_int(op, "is_test", 0) == 1;
    if (op->n_inputs < 3 || !op->inputs[2])
        return true;
    return noop_const_zero(op->inputs[2]) ||
           (opset >= 12 && op->n_inputs >= 2 && op->inputs[1] && noop_const_zero(op->inputs[1]));
}

static bool noop_cast(const Op *op)
{
    int32_t dt = value_dtype(op->inputs[0]);
    if (!dt)
        return false;
    if (op_is(op, "CastLike"))
        return op->n_inputs == 2 && value_dtype(op->inputs[1]) == dt;
    const Attr *to = op_attr(op, "to");
    return to && to->type == ATTR_INT && to->i == dt;
}

/* Reshape-1 to 4 (opset < 5) carries its target as the attribute "shape";
 * from 5 on it is input 1. The attribute's entries are numbers, the
 * input's what inference knows (numbers or symbolic dims): target entry i
 * is read through these two. */
typedef struct NoopTarget {
    const Dim *d; /* the input's entries, or NULL for the attribute's */
    int64_t v[NOOP_MAX_RANK];
    long n;
} NoopTarget;

static void noop_reshape_target(const Op *op, NoopTarget *t)
{
    t->d = NULL;
    if (op->n_inputs == 1)
        t->n = op_attr(op, "shape") ? op_attr_ints(op, "shape", t->v, NOOP_MAX_RANK) : -1;
    else
        t->n = op->n_inputs == 2 ? noop_values(op->inputs[1], &t->d, NOOP_MAX_RANK) : -1;
}

static bool noop_target_is(const NoopTarget *t, int i, int64_t want)
{
    return t->d ? noop_dim_is(t->d[i], want) : t->v[i] == want;
}

static bool noop_target_same(const NoopTarget *t, int i, Dim dim)
{
    return t->d ? t->d[i] == dim : noop_dim_is(dim, t->v[i]);
}

/* Reshape to the input's own shape: every target entry is the input's dim
 * (a number, the same symbolic dim, or 0 copying it), one -1 at most. */
static bool noop_reshape(const Op *op)
{
    const Dim *in = NULL;
    NoopTarget s;
    int rank = noop_dims(op->inputs[0], &in);
    noop_reshape_target(op, &s);
    if (rank < 0 || s.n != rank)
        return false;
    bool allowzero = op_attr_int(op, "allowzero", 0) != 0, inferred = false;
    for (int i = 0; i < rank; i++) {
        if (noop_target_is(&s, i, -1) && !inferred)
            inferred = true;
        else if (!noop_target_same(&s, i, in[i]) && !(noop_target_is(&s, i, 0) && !allowzero))
            return false;
    }
    /* -1 is the input's dim only when the other dims cannot be 0. */
    for (int i = 0; inferred && i < rank; i++)
        if (!noop_target_is(&s, i, -1) && noop_dim_is(in[i], 0))
            return false;
    return true;
}

/* Flatten of a rank-2 input at axis 1, or at an axis whose side is 1. */
static bool noop_flatten(const Op *op)
{
    const Dim *in = NULL;
    if (noop_dims(op->inputs[0], &in) != 2)
        return false;
    int64_t axis = op_attr_int(op, "axis", 1);
    axis = axis < 0 ? axis + 2 : axis;
    return axis == 1 || (axis == 0 && noop_dim_is(in[0], 1)) ||
           (axis == 2 && noop_dim_is(in[1], 1));
}

/* The axes of a Squeeze/Unsqueeze (input from opset 13, attribute before):
 * their count, -1 when unknown, -2 when absent. */
static long noop_axes(const Op *op, int64_t *axes)
{
    if (model_domain_opset(op->graph->model, "") >= 13)
        return op->n_inputs < 2 || !op->inputs[1] ? -2
                                                  : noop_ints(op->inputs[1], axes, NOOP_MAX_RANK);
    return op_attr(op, "axes") ? op_attr_ints(op, "axes", axes, NOOP_MAX_RANK) : -2;
}

/* Squeeze of no axes (every size-1 dim) when no dim is 1; Unsqueeze of none. */
static bool noop_squeeze(const Op *op)
{
    int64_t axes[NOOP_MAX_RANK];
    long n = noop_axes(op, axes);
    if (op_is(op, "Unsqueeze"))
        return n == 0;
    const Dim *in = NULL;
    int rank = noop_dims(op->inputs[0], &in);
    if ((n != 0 && n != -2) || rank < 0)
        return false;
    for (int i = 0; i < rank; i++)
        if (!dim_is_const(in[i]) || dim_value(in[i]) == 1)
            return false;
    return true;
}

/* Expand to a shape that broadcasts to the input's own; Tile by ones. */
static bool noop_expand(const Op *op)
{
    const Dim *in = NULL, *s = NULL;
    int rank = noop_dims(op->inputs[0], &in);
    long n = op->n_inputs == 2 ? noop_values(op->inputs[1], &s, NOOP_MAX_RANK) : -1;
    for (long j = 0; j < n && op_is(op, "Tile"); j++)
        if (!noop_dim_is(s[j], 1))
            return false;
    if (op_is(op, "Tile"))
        return n == rank && n >= 0;
    if (rank < 0 || n < 0 || n > rank)
        return false;
    for (long j = 0; j < n; j++)
        if (!noop_dim_is(s[j], 1) && s[j] != in[rank - n + j])
            return false;
    return true;
}

/* The permutation of a Transpose (default: reversed axes): its rank, or -1. */
static int noop_perm(const Op *op, int64_t *p)
{
    long n = op_attr_ints(op, "perm", p, NOOP_MAX_RANK);
    if (n < 0 && op_attr(op, "perm"))
        return -1;
    if (n < 0) {
        n = value_rank(op->inputs[0]);
        for (long i = 0; i < n && n <= NOOP_MAX_RANK; i++)
            p[i] = n - 1 - i;
    }
    if (n < 0 || n > NOOP_MAX_RANK)
        return -1;
    bool seen[NOOP_MAX_RANK] = {false};
    for (long i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]])
            return -1;
        seen[p[i]] = true;
    }
    return (int)n;
}

static bool noop_transpose(const Op *op)
{
    int64_t p[NOOP_MAX_RANK];
    int n = noop_perm(op, p);
    for (int i = 0; i < n; i++)
        if (p[i] != i)
            return false;
    return n >= 0;
}

/* Does Slice's range [start, end) with step 1 cover a whole dim? */
static bool noop_slice_axis(Dim dim, int64_t start, int64_t end)
{
    bool known = dim_is_const(dim);
    int64_t d = known ? dim_value(dim) : 0;
    bool from_first = start == 0 || (known && start < 0 && start + d <= 0);
    return from_first && (end >= NOOP_END_OF_ANY_DIM || (known && end >= d));
}

/* Slice (input form, opset 10 on) whose every sliced axis is whole. */
static bool noop_slice(const Op *op)
{
    const Dim *in = NULL;
    int64_t st[NOOP_MAX_RANK], en[NOOP_MAX_RANK], ax[NOOP_MAX_RANK], sp[NOOP_MAX_RANK];
    int rank = noop_dims(op->inputs[0], &in);
    if (op->n_inputs < 3 || !op->inputs[1] || !op->inputs[2] || rank < 0)
        return false;
    long n = noop_ints(op->inputs[1], st, NOOP_MAX_RANK);
    if (n < 0 || noop_ints(op->inputs[2], en, NOOP_MAX_RANK) != n)
        return false;
    bool axes = op->n_inputs > 3 && op->inputs[3], steps = op->n_inputs > 4 && op->inputs[4];
    if ((axes && noop_ints(op->inputs[3], ax, NOOP_MAX_RANK) != n) ||
        (steps && (noop_ints(op->inputs[4], sp, NOOP_MAX_RANK) != n || !noop_all(sp, n, 1))))
        return false;
    for (long k = 0; k < n; k++) {
        int64_t a = axes ? ax[k] : k;
        a = a < 0 ? a + rank : a;
        if (a < 0 || a >= rank || !noop_slice_axis(in[a], st[k], en[k]))
            return false;
    }
    return true;
}

/* Pad by zeros on every side (pads input, or Pad-2's attribute). */
static bool noop_pad(const Op *op)
{
    int64_t pads[2 * NOOP_MAX_RANK];
    long n = op->n_inputs >= 2 && op->inputs[1] ? noop_ints(op->inputs[1], pads, 2 * NOOP_MAX_RANK)
                                                : op_attr_ints(op, "pads", pads, 2 * NOOP_MAX_RANK);
    return n > 0 && noop_all(pads, n, 0);
}

/* Is c a constant of x's type, every element `unit`, whose shape
 * broadcasts into x's without raising its rank or any dim? With plus_zero,
 * a zero must be +0: x - (-0) is x + 0, which turns x = -0 into +0. */
static bool noop_unit(const Var *x, const Var *c, double unit, bool plus_zero)
{
    const Tensor *t = noop_constant(c);
    int rank = value_rank(x);
    if (!t || t->dtype != value_dtype(x) || rank < (int)t->ndims ||
        t->nbytes > NOOP_MAX_UNIT_BYTES)
        return false;
    for (size_t j = 0; j < t->ndims; j++)
        if (t->dims[j] != 1 && value_dim(x, rank - (int)t->ndims + (int)j) != t->dims[j])
            return false;
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double e = tensor_get_f64(t, (size_t)i);
        if (e != unit || (plus_zero && signbit(e)))
            return false;
    }
    return n >= 0;
}

/* The slot of x in x+0, 0+x, x-0, x*1, 1*x or x/1, else -1. */
static int noop_arith(const Op *op)
{
    bool add = op_is(op, "Add"), mul = op_is(op, "Mul"), sub = op_is(op, "Sub");
    double unit = add || sub ? 0 : 1;
    if (op->n_inputs != 2 || !op->inputs[0] || !op->inputs[1])
        return -1;
    if (noop_unit(op->inputs[0], op->inputs[1], unit, sub))
        return 0;
    return (add || mul) && noop_unit(op->inputs[1], op->inputs[0], unit, false) ? 1 : -1;
}

/* The input slot whose value op passes on unchanged, or -1. */
static int noop_slot(const Op *op)
{
    if (op->n_inputs < 1 || !op->inputs[0] || op->n_outputs < 1 || !op->outputs[0])
        return -1;
    if (op_is(op, "Add") || op_is(op, "Sub") || op_is(op, "Mul") || op_is(op, "Div"))
        return noop_arith(op);
    if (op_is(op, "Dropout"))
        return noop_dropout(op) ? 0 : -1;
    if (op_is(op, "Concat"))
        return op->n_inputs == 1 ? 0 : -1;
    if (op_is(op, "Split"))
        return op->n_outputs == 1 ? 0 : -1;
    bool same = op->n_outputs == 1 &&
                ((op_is(op, "Cast") || op_is(op, "CastLike")) ? noop_cast(op)
                 : op_is(op, "Reshape")                       ? noop_reshape(op)
                 : op_is(op, "Flatten")                       ? noop_flatten(op)
                 : op_is(op, "Squeeze") || op_is(op, "Unsqueeze") ? noop_squeeze(op)
                 : op_is(op, "Expand") || op_is(op, "Tile")   ? noop_expand(op)
                 : op_is(op, "Transpose")                     ? noop_transpose(op)
                 : op_is(op, "Slice")                         ? noop_slice(op)
                 : op_is(op, "Pad")                           ? noop_pad(op)
                                                              : false);
    return same ? 0 : -1;
}

/* Op.scratch of an operation whose readers were rewired: removed at the end
 * of the pass all at once (graph_remove_ops_where), which sweeps each input's
 * use list once; removing them one by one would scan a widely read input's
 * (x in 100000 x+0 nodes) list once per node. */
enum { NOOP_LIVE = 0, NOOP_DEAD = 1 };

static bool noop_dead(const Op *op, void *ctx)
{
    (void)ctx;
    return op->scratch == NOOP_DEAD;
}

/* Removes op, whose output 0 equals its input x. */
static void noop_remove(Op *op, Var *x)
{
    Model *m = op->graph->model;
    Var *y = op->outputs[0];
    const char *label = op_label(op);
    if (x == y)
        return;
    if (!readers_may_move_to(x)) {
        model_warn(m, label, "kept %s: %s", op->type, REWRITTEN_LATER);
        return;
    }
    /* checked before the mask goes */
    OutputMoveRefusal why = y->n_output_lists ? graph_output_move_refusal(op, x) : MOVE_OK;
    if (why) {
        model_warn(m, label, "kept %s: %s", op->type, kept_output_reason(why));
        return;
    }
    if (op_drop_outputs(op, 1))
        return;
    if (!y->n_output_lists) {
        var_replace_all_uses(y, x);
        op->scratch = NOOP_DEAD;
    } else if (graph_remove_op_into_output(op, x)) {
        model_warn(m, label, "kept %s: %s", op->type, kept_output_reason(MOVE_OK));
        return;
    }
    model_note(m, "removed", label);
}

/* "first+second" for the report. */
static const char *noop_pair_label(Model *m, const Op *first, const Op *second)
{
    const char *a = op_label(first), *b = op_label(second);
    size_t na = strlen(a), nb = strlen(b);
    char *s = arena_alloc(&m->arena, na + nb + 2);
    if (!s)
        return b;
    memcpy(s, a, na);
    s[na] = '+';
    memcpy(s + na + 1, b, nb + 1);
    return s;
}

/* The producer of op's input 0 when it is a `type` op of op's graph read by
 * op alone, else NULL. */
static Op *noop_sole_feeder(const Op *op, const char *type)
{
    Op *p = match_producer(op->inputs[0], type, op->graph);
    return p && p->n_inputs >= 1 && p->inputs[0] && match_next(op->inputs[0], type) == op ? p
                                                                                         : NULL;
}

/* Transpose(Transpose(x, p1), p2) = Transpose(x, p1[p2[i]]). */
static int noop_compose_transposes(Op *second, Diag *d)
{
    Op *first = noop_sole_feeder(second, "Transpose");
    int64_t p1[NOOP_MAX_RANK], p2[NOOP_MAX_RANK], p[NOOP_MAX_RANK];
    int n = first && readers_may_move_to(first->inputs[0]) ? noop_perm(first, p1) : -1;
    if (n < 0 || noop_perm(second, p2) != n)
        return 0;
    for (int i = 0; i < n; i++)
        p[i] = p1[p2[i]];
    Model *m = second->graph->model;
    const char *label = noop_pair_label(m, first, second);
    if (!op_set_attr_ints(second, "perm", p, (size_t)n))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass eliminate-noops");
    op_set_input(second, 0, first->inputs[0]);
    first->scratch = NOOP_DEAD;
    model_note(m, "composed", label);
    return 0;
}

/* Reshape(Reshape(x, s1), s2) = Reshape(x, s2) when s2 is known and has no
 * 0 entry copying a dim of the first Reshape's output (s2 an input, or the
 * attribute of Reshape-1). */
static void noop_merge_reshapes(Op *second)
{
    Op *first = noop_sole_feeder(second, "Reshape");
    NoopTarget s = {.n = -1};
    if (first && readers_may_move_to(first->inputs[0]))
        noop_reshape_target(second, &s);
    for (long i = 0; s.d && i < s.n; i++) {
        if (!dim_is_const(s.d[i]))
            return; /* every entry must be a known number */
        s.v[i] = dim_value(s.d[i]);
    }
    if (s.n < 0 || (op_attr_int(second, "allowzero", 0) == 0 && noop_any(s.v, s.n, 0)))
        return;
    const char *label = noop_pair_label(second->graph->model, first, second);
    op_set_input(second, 0, first->inputs[0]);
    first->scratch = NOOP_DEAD;
    model_note(second->graph->model, "merged", label);
}

/* Removes the operations marked NOOP_DEAD. */
static int noop_sweep(Graph *g, Diag *d)
{
    bool any = false;
    for (size_t i = 0; i < g->n_ops && !any; i++)
        any = !g->ops[i]->removed && g->ops[i]->scratch == NOOP_DEAD;
    if (any && graph_remove_ops_where(g, noop_dead, NULL))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass eliminate-noops");
    return 0;
}

static int pass_eliminate_noops(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->scratch = NOOP_LIVE;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (op->removed || op->n_inputs < 1 || !op->inputs[0])
            continue;
        if (op_is(op, "Transpose") && noop_compose_transposes(op, d))
            return d->code;
        if (op_is(op, "Reshape"))
            noop_merge_reshapes(op);
        int slot = noop_slot(op);
        if (slot >= 0)
            noop_remove(op, op->inputs[slot]);
    }
    return noop_sweep(g, d);
}

const Pass eliminate_noops_pass = {
    .name = "eliminate-noops",
    .help = "remove nodes passing their input on unchanged (Dropout, x*1, ...)",
    .on_by_default = true,
    .run = pass_eliminate_noops,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};
