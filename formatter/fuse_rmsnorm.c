/* fuse_rmsnorm.c - pass "fuse-rmsnorm": the decomposed RMS norm of
 * LLaMA-style models becomes one RMSNormalization (opset 23 or later; the
 * pass does nothing below, where the operator does not exist).
 *
 *   q = Pow(x, 2) or Mul(x, x); m = ReduceMean(q) over the last axis, keeping
 *   dims; a = Add(m, eps); then one of
 *     n = Mul(x, Div(1, Sqrt(a)))  n = Mul(x, Reciprocal(Sqrt(a)))
 *     n = Div(x, Sqrt(a))          n = Mul(x, Pow(a, -0.5))
 *   y = Mul(n, weight)
 *
 * Mul and Add take their operands in either order. torch's float16 and
 * bfloat16 form computes in float32 between x = Cast(in, float) and
 * Cast(n, in's type) before the weight: the fused node then reads in (its
 * stash_type float computes as the chain did). eps must be a constant
 * scalar, weight a constant [D] of x's float type (D x's last dim, known)
 * read by this Mul alone, and every intermediate value read by the pattern
 * alone and no graph output; x itself may have other readers (not in the
 * Cast form, where the Cast goes too). The fused node reads x (or in) and
 * weight with axis -1, epsilon the Add's constant and stash_type its
 * default (float). A double x stays: the decomposed form
 * computes in double, RMSNormalization's stash_type in float. The output
 * keeps its name. onnxruntime's SimplifiedLayerNormalization is no target:
 * onnxruntime knows it only in the ai.onnx domain, which onnx's checker
 * rejects (docs/PASSES.md). */
#include "match.h"
#include "params.h"
#include "passes.h"

typedef struct RmsMatch {
    Chain chain;
    Var *x, *weight;
    Var *in;      /* what the fused node reads: x, or what the Cast to float read */
    Op *cast_in;  /* x = Cast(in, float) when in is float16/bfloat16, else NULL */
    double eps;
    Op *last;
} RmsMatch;

/* The square reduced by r: Pow(x, 2) or Mul(x, x), read by r alone. */
static Op *rms_square(const Op *r)
{
    Var *q = r->n_inputs ? r->inputs[0] : NULL;
    Op *sq = q && match_next(q, "ReduceMean") == r ? q->producer : NULL;
    if (!sq || sq->graph != r->graph || sq->n_inputs != 2)
        return NULL;
    if (op_is(sq, "Pow"))
        return match_near(sq->inputs[1], 2.0) ? sq : NULL;
    return op_is(sq, "Mul") && sq->inputs[0] == sq->inputs[1] ? sq : NULL;
}

/* Mul(x, inv) in either order, inv's only reader. */
static Op *scale_by(const RmsMatch *rm, Var *inv)
{
    Op *mul = match_next(inv, "Mul");
    return mul && match_other(mul, inv) == rm->x ? mul : NULL;
}

/* From a = m + eps to the normalized n: one of the four forms. */
static Op *rms_normalize(RmsMatch *rm, Var *a)
{
    Chain *c = &rm->chain;
    Op *rsqrt = match_next(a, "Pow");
    if (rsqrt)
        return rsqrt->inputs[0] == a && match_near(rsqrt->inputs[1], -0.5) && chain_add(c, rsqrt)
                   ? scale_by(rm, match_out(rsqrt))
                   : NULL;
    Op *root = match_next(a, "Sqrt");
    Var *s = match_out(root);
    if (!s || !chain_add(c, root))
        return NULL;
    Op *inv = match_next(s, "Reciprocal");
    Op *div = inv ? NULL : match_next(s, "Div");
    if (div && (div->n_inputs != 2 || div->inputs[1] != s))
        return NULL;
    if (div && div->inputs[0] == rm->x)
        return div; /* Div(x, s) */
    if (div && match_near(div->inputs[0], 1.0))
        inv = div;
    return inv && chain_add(c, inv) ? scale_by(rm, match_out(inv)) : NULL;
}

/* torch's float16 form: x = Cast(in, float) read by the square and the
 * normalizing op alone, n cast back to in's type before the weight. Sets
 * rm->in and returns the cast back, or NULL (then x is the input). */
static Op *rms_cast_back(RmsMatch *rm, Op *norm)
{
    Op *back = match_next(match_out(norm), "Cast"), *cast = rm->cast_in;
    rm->in = rm->x;
    if (!back || !cast || cast->n_inputs != 1 || rm->x->n_output_lists ||
        op_attr_int(back, "to", 0) != value_dtype(cast->inputs[0]))
        return NULL;
    for (size_t u = 0; u < rm->x->n_uses; u++)
        if (rm->x->uses[u].op != norm && rm->x->uses[u].op != rm->chain.ops[0])
            return NULL;
    rm->in = cast->inputs[0];
    return back;
}

/* The weight Mul after n (after the cast back): a constant [D] of the
 * input's type read there alone. */
static bool rms_weight(RmsMatch *rm, Op *norm)
{
    Op *back = rms_cast_back(rm, norm);
    Var *n = match_out(back ? back : norm);
    Op *mul = match_next(n, "Mul");
    Var *w = match_other(mul, n);
    const Tensor *wt = w ? param_numeric(w) : NULL;
    int rank = value_rank(rm->in);
    int32_t dt = value_dtype(rm->in);
    if (!wt || w->n_uses != 1 || w->n_output_lists || wt->ndims != 1 || rank < 1 ||
        wt->dims[0] != value_dim(rm->in, rank - 1) || wt->dtype != dt ||
        (dt != DT_FLOAT && dt != DT_FLOAT16 && dt != DT_BFLOAT16))
        return false;
    rm->weight = w;
    rm->last = mul;
    return chain_add(&rm->chain, norm) && (!back || chain_add(&rm->chain, back)) &&
           (!back || chain_add(&rm->chain, rm->cast_in)) && chain_add(&rm->chain, mul);
}

/* The whole pattern from its ReduceMean. */
static bool rms_match(Op *r, RmsMatch *rm)
{
    *rm = (RmsMatch){0};
    Op *sq = rms_square(r);
    if (!sq || !chain_add(&rm->chain, sq) || !chain_add(&rm->chain, r))
        return false;
    rm->x = sq->inputs[0];
    Op *cast = match_producer(rm->x, "Cast", r->graph);
    int32_t from = cast && cast->n_inputs == 1 ? value_dtype(cast->inputs[0]) : 0;
    bool half = from == DT_FLOAT16 || from == DT_BFLOAT16;
    if (cast && half && op_attr_int(cast, "to", 0) == DT_FLOAT)
        rm->cast_in = cast;
    if (match_trailing_axes(r, value_rank(rm->x)) != 1)
        return false;
    Op *add = match_next(match_out(r), "Add");
    if (!add || !match_scalar(match_other(add, match_out(r)), &rm->eps) ||
        !chain_add(&rm->chain, add))
        return false;
    Op *norm = rms_normalize(rm, match_out(add));
    return norm && rms_weight(rm, norm);
}

static int rms_replace(RmsMatch *rm)
{
    Op *r = rm->chain.ops[1];
    Op *op = graph_insert_op(r->graph, rm->last, "RMSNormalization", r->name);
    if (!op || op_append_input(op, rm->in) || op_append_input(op, rm->weight) ||
        !op_set_attr_int(op, "axis", -1) || !op_set_attr_float(op, "epsilon", (float)rm->eps) ||
        graph_replace_op(rm->last, op))
        return -1;
    return chain_remove(&rm->chain);
}

static int fuse_rmsnorm_step(PassCtx *pc, Op *r)
{
    Graph *g = pc->g;
    Model *m = g->model;
    RmsMatch rm;
    if (!op_is(r, "ReduceMean") || !rms_match(r, &rm))
        return 0;
    const char *label = op_label(r);
    if (rms_replace(&rm))
        return pass_failed_on(pc, label);
    model_note(m, "fused", label);
    return 0;
}

static int fuse_rmsnorm(PassCtx *pc)
{
    Graph *g = pc->g;
    Model *m = g->model;
    if (model_opset(m) < 23)
        return 0;
    return pass_each_op(pc, fuse_rmsnorm_step);
}

const Pass fuse_rmsnorm_pass = {
    .name = "fuse-rmsnorm",
    .help = "decomposed RMS norm to RMSNormalization (opset >= 23)",
    .on_by_default = true,
    .run = fuse_rmsnorm,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"ReduceMean", NULL},
};
