/* fuse_layernorm.c - pass "fuse-layernorm": the decomposed layer norm that
 * torch and TensorFlow exporters write becomes one LayerNormalization
 * (opset 17 or later; the pass does nothing below, where the operator does
 * not exist).
 *
 *   m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2) or Mul(d, d));
 *   s = Sqrt(Add(v, eps)) (or Pow(.., 0.5));
 *   n = Div(d, s) or Mul(d, Reciprocal(s)); y = Add(Mul(n, gamma), beta)
 *
 * d may be one Sub read twice or two Subs of (x, m); Mul and Add take their
 * operands in either order; gamma and beta are optional. TensorFlow's form
 * (ln_match_tf) scales x and the mean by one factor instead:
 *
 *   a = Reciprocal(s) [* gamma]; y = Add(Mul(x, a), Sub(beta, Mul(m, a)))
 *
 * (Neg(Mul(m, a)) without beta), which is (x - m) * a + beta. Both ReduceMeans
 * keep dims and reduce the same trailing axes (negative axes as they are,
 * positive ones when x's rank is declared; attribute or, from opset 18,
 * input): LayerNormalization's axis is -(number of axes), epsilon the Add's
 * constant, stash_type its default (float). Its Scale and B must have the
 * normalized shape: gamma/beta are used as they are when they have it, else
 * broadcast to it (and ones written when there is no gamma), which needs the
 * normalized shape from x's shape (inferred or declared; gamma's dims do not
 * tell it: x's may be 1 there and broadcast). gamma/beta keep their type,
 * which must be x's. Every intermediate value must be read by the pattern
 * alone and be no graph output; the output keeps its name. */
#include <string.h>

#include "match.h"
#include "params.h"
#include "passes.h"

enum { LN_MAX_AXES = MATCH_MAX_AXES };

typedef struct LnMatch {
    Chain chain;
    Var *x;
    int rank;      /* x's declared rank, -1 unknown */
    size_t k;      /* normalized (trailing) axes */
    double eps;
    int32_t eps_dtype; /* x's type too: Add and ReduceMean keep one type */
    Var *gamma, *beta;
    Op *last;
    int64_t nd[LN_MAX_AXES]; /* normalized dims; nd_known when set */
    bool nd_known;
} LnMatch;

/* Every use of the Sub outputs subs[0..ns) is by the square or the
 * normalizing operation: which is which. */
static bool split_uses(Var **subs, size_t ns, Op **square, Op **norm)
{
    *square = *norm = NULL;
    for (size_t i = 0; i < ns; i++) {
        Var *d = subs[i];
        if (d->n_output_lists)
            return false;
        for (size_t u = 0; u < d->n_uses; u++) {
            Op *op = d->uses[u].op;
            bool sq = (op_is(op, "Pow") && op->n_inputs == 2 && op->inputs[0] == d &&
                       match_near(op->inputs[1], 2.0)) ||
                      (op_is(op, "Mul") && op->n_inputs == 2 && op->inputs[1] == d &&
                       op->inputs[0] == d);
            Op **slot = sq ? square : norm;
            if (op->graph != d->graph || (*slot && *slot != op))
                return false;
            *slot = op;
        }
    }
    return *square && *norm && *square != *norm;
}

/* Is v one of the Sub outputs? */
static bool is_sub_out(Var *const *subs, size_t ns, const Var *v)
{
    for (size_t i = 0; i < ns; i++)
        if (subs[i] == v)
            return true;
    return false;
}

/* From the square on: ReduceMean, Add(eps) and Sqrt (or Pow 0.5); the
 * standard deviation s, or NULL. */
static Var *match_deviation(LnMatch *lm, Op *square)
{
    Chain *c = &lm->chain;
    Op *r2 = match_next(match_out(square), "ReduceMean");
    if (!chain_add(c, square) || !chain_add(c, r2) ||
        match_trailing_axes(r2, lm->rank) != lm->k)
        return NULL;
    Op *add = match_next(match_out(r2), "Add");
    Var *eps = match_other(add, match_out(r2));
    if (!chain_add(c, add) || !match_scalar(eps, &lm->eps))
        return NULL;
    lm->eps_dtype = param_numeric(eps)->dtype;
    Var *e = match_out(add);
    Op *sq = match_next(e, "Sqrt");
    if (!sq) {
        sq = match_next(e, "Pow");
        if (!sq || sq->inputs[0] != e || !match_near(sq->inputs[1], 0.5))
            return NULL;
    }
    return chain_add(c, sq) ? match_out(sq) : NULL;
}

/* From the square on: the deviation and the normalizing op. */
static bool match_variance(LnMatch *lm, Op *square, Op *norm, Var *const *subs, size_t ns)
{
    Chain *c = &lm->chain;
    Var *s = match_deviation(lm, square);
    if (!s)
        return false;
    if (op_is(norm, "Div")) /* Div(d, s) */
        return norm->n_inputs == 2 && norm->inputs[1] == s &&
               is_sub_out(subs, ns, norm->inputs[0]) && match_next(s, "Div") == norm &&
               chain_add(c, norm);
    Op *rec = match_next(s, "Reciprocal");
    Var *r = match_out(rec);
    return r && op_is(norm, "Mul") && match_next(r, "Mul") == norm &&
           is_sub_out(subs, ns, match_other(norm, r)) && chain_add(c, rec) && chain_add(c, norm);
}

/* Can parameter p (gamma or beta) broadcast to the normalized shape without
 * raising the rank of y? p's dims never stand for x's: where x's are not
 * known they may be 1, broadcast up by p, and a LayerNormalization over them
 * computes something else (the node then stays: ln_obstacle). */
static bool fits_normalized(LnMatch *lm, const Tensor *p)
{
    size_t max_rank = lm->rank >= 0 ? (size_t)lm->rank : lm->k;
    if (p->ndims > max_rank || !dtype_is_float(p->dtype))
        return false;
    for (size_t i = 0; lm->nd_known && i < p->ndims; i++) {
        size_t from_end = p->ndims - i; /* 1: last axis */
        int64_t dim = p->dims[i];
        if (dim != 1 && (from_end > lm->k || dim != lm->nd[lm->k - from_end]))
            return false;
    }
    return true;
}

/* Optional Mul(gamma) then Add(beta) after the normalizing op. */
static void match_affine(LnMatch *lm, Op *norm)
{
    Var *n = match_out(norm);
    Op *mul = match_next(n, "Mul");
    Var *g = match_other(mul, n);
    const Tensor *gt = g ? param_numeric(g) : NULL;
    lm->last = norm;
    if (gt && fits_normalized(lm, gt) && chain_add(&lm->chain, mul)) {
        lm->gamma = g;
        lm->last = mul;
        n = match_out(mul);
    }
    Op *add = match_next(n, "Add");
    Var *b = match_other(add, n);
    const Tensor *bt = b ? param_numeric(b) : NULL;
    if (bt && fits_normalized(lm, bt) && chain_add(&lm->chain, add)) {
        lm->beta = b;
        lm->last = add;
    }
}

/* The normalized dims from x's shape (inferred or declared), when its last
 * k are known. */
static void declared_normalized(LnMatch *lm)
{
    if (lm->rank < (int)lm->k)
        return;
    for (size_t i = 0; i < lm->k; i++)
        if ((lm->nd[i] = value_dim(lm->x, lm->rank - (int)lm->k + (int)i)) < 0)
            return;
    lm->nd_known = true;
}

/* The first ReduceMean: x, its rank and the normalized axes; its output (one
 * or two uses, no graph output), or NULL. */
static Var *ln_start(Op *r1, LnMatch *lm)
{
    memset(lm, 0, sizeof *lm);
    Var *x = r1->n_inputs ? r1->inputs[0] : NULL, *mean = match_out(r1);
    if (!x || !mean || mean->n_output_lists || !mean->n_uses || mean->n_uses > 2)
        return NULL;
    lm->x = x;
    lm->rank = value_rank(x);
    lm->k = match_trailing_axes(r1, lm->rank);
    if (!lm->k || !chain_add(&lm->chain, r1))
        return NULL;
    declared_normalized(lm);
    return mean;
}

/* The whole pattern from its first ReduceMean. */
static bool ln_match(Op *r1, LnMatch *lm)
{
    Var *x = r1->n_inputs ? r1->inputs[0] : NULL, *mean = ln_start(r1, lm);
    if (!mean)
        return false;
    Var *subs[2];
    size_t ns = mean->n_uses;
    for (size_t i = 0; i < ns; i++) {
        Op *sub = mean->uses[i].op;
        if (!op_is(sub, "Sub") || sub->graph != r1->graph || sub->n_inputs != 2 ||
            sub->inputs[0] != x || sub->inputs[1] != mean || !(subs[i] = match_out(sub)) ||
            !chain_add(&lm->chain, sub))
            return false;
    }
    Op *square, *norm;
    if (!split_uses(subs, ns, &square, &norm) || !match_variance(lm, square, norm, subs, ns))
        return false;
    match_affine(lm, norm);
    return true;
}

/* Is op a two-input op of this type reading a and b, in either order? */
static bool reads_pair(const Op *op, const char *type, const Var *a, const Var *b)
{
    return op && op_is(op, type) && op->n_inputs == 2 &&
           ((op->inputs[0] == a && op->inputs[1] == b) ||
            (op->inputs[0] == b && op->inputs[1] == a));
}

/* The square of d: Mul(d, d) (d's only reader) or Pow(d, 2). */
static Op *square_of(Var *d)
{
    if (!d || d->n_output_lists)
        return NULL;
    if (d->n_uses == 2 && d->uses[0].op == d->uses[1].op &&
        reads_pair(d->uses[0].op, "Mul", d, d) && d->uses[0].op->graph == d->graph)
        return d->uses[0].op;
    Op *pow = match_next(d, "Pow");
    return pow && pow->inputs[0] == d && match_near(pow->inputs[1], 2.0) ? pow : NULL;
}

/* The other reader of v (two uses, no graph output) besides op. */
static Op *other_reader(const Var *v, const Op *op)
{
    if (!v || v->n_output_lists || v->n_uses != 2)
        return NULL;
    Op *o = v->uses[0].op == op ? v->uses[1].op : v->uses[0].op;
    return o != op && o->graph == v->graph ? o : NULL;
}

/* From a = gamma / s (or 1 / s): Mul(x, a) + (beta - mean * a), written
 * Add(Mul(x, a), Sub(beta, Mul(mean, a))), or with Neg(Mul(mean, a)) and no
 * beta. */
static bool match_tf_affine(LnMatch *lm, Var *a, Op *mean_mul, Var *mean)
{
    Chain *c = &lm->chain;
    Op *x_mul = other_reader(a, mean_mul);
    Var *ma = match_out(mean_mul), *xa = match_out(x_mul);
    if (!reads_pair(mean_mul, "Mul", mean, a) || !reads_pair(x_mul, "Mul", lm->x, a) ||
        !chain_add(c, mean_mul) || !chain_add(c, x_mul) || !ma || !xa)
        return false;
    Op *shift = match_next(ma, "Sub");
    if (shift && shift->n_inputs == 2 && shift->inputs[1] == ma) {
        const Tensor *bt = param_numeric(shift->inputs[0]);
        if (!bt || !fits_normalized(lm, bt))
            return false;
        lm->beta = shift->inputs[0];
    } else if (!(shift = match_next(ma, "Neg"))) {
        return false;
    }
    Var *sh = match_out(shift);
    Op *add = match_next(sh, "Add");
    lm->last = add;
    return chain_add(c, shift) && add && match_next(xa, "Add") == add &&
           reads_pair(add, "Add", xa, sh) && chain_add(c, add);
}

/* TensorFlow's form (tf.nn.batch_normalization of keras LayerNormalization,
 * as tf2onnx writes it): m = ReduceMean(x); v = ReduceMean(Mul(d, d)) with d
 * = Sub(x, m) read by nothing else; a = Reciprocal(Sqrt(v + eps)), times
 * gamma when there is one; y = x * a + (beta - m * a). */
static bool ln_match_tf(Op *r1, LnMatch *lm)
{
    Var *x = r1->n_inputs ? r1->inputs[0] : NULL, *mean = ln_start(r1, lm);
    if (!mean || mean->n_uses != 2)
        return false;
    Op *sub = mean->uses[0].op, *mean_mul = mean->uses[1].op;
    if (!op_is(sub, "Sub")) {
        sub = mean_mul;
        mean_mul = mean->uses[0].op;
    }
    if (!op_is(sub, "Sub") || sub->graph != r1->graph || sub->n_inputs != 2 ||
        sub->inputs[0] != x || sub->inputs[1] != mean || !chain_add(&lm->chain, sub))
        return false;
    Var *s = match_deviation(lm, square_of(match_out(sub)));
    Op *rec = match_next(s, "Reciprocal");
    Var *a = match_out(rec);
    if (!chain_add(&lm->chain, rec) || !a)
        return false;
    Op *gmul = a->n_uses == 1 ? match_next(a, "Mul") : NULL;
    Var *g = match_other(gmul, a);
    const Tensor *gt = g ? param_numeric(g) : NULL;
    if (gt && fits_normalized(lm, gt) && chain_add(&lm->chain, gmul)) {
        lm->gamma = g;
        a = match_out(gmul);
    }
    return match_tf_affine(lm, a, mean_mul, mean);
}

/* A [nd] parameter: from (its broadcast) or ones when from is NULL. */
static Var *normalized_param(const LnMatch *lm, const Tensor *from, int32_t dt, const char *sfx)
{
    Graph *g = lm->last->graph;
    Tensor *t = tensor_new(&g->model->arena, dt, lm->k, lm->nd);
    if (!t)
        return NULL;
    int64_t n = tensor_numel(t);
    for (int64_t j = 0; j < n; j++) {
        size_t src = 0, stride = 1;
        int64_t rest = j;
        for (size_t i = lm->k; from && i-- > 0;) { /* axis i of nd, from the last */
            int64_t at = rest % lm->nd[i];
            rest /= lm->nd[i];
            size_t from_end = lm->k - i, fi = from->ndims - from_end;
            if (from_end > from->ndims)
                break;
            src += from->dims[fi] == 1 ? 0 : (size_t)at * stride;
            stride *= (size_t)from->dims[fi];
        }
        tensor_set_f64(t, (size_t)j, from ? tensor_get_f64(from, src) : 1.0);
    }
    return graph_new_param(g, param_base_name(lm->last, sfx), t);
}

/* Does parameter v hold exactly the normalized shape? */
static bool has_normalized_shape(const LnMatch *lm, const Var *v)
{
    const Tensor *t = param_numeric(v);
    return t->ndims == lm->k && memcmp(t->dims, lm->nd, lm->k * sizeof *lm->nd) == 0;
}

/* Why the match cannot become a LayerNormalization, or NULL. Sets *dt. */
static const char *ln_obstacle(const LnMatch *lm, int32_t *dt)
{
    int32_t gdt = lm->gamma ? param_numeric(lm->gamma)->dtype : 0;
    int32_t bdt = lm->beta ? param_numeric(lm->beta)->dtype : 0;
    *dt = value_dtype(lm->x);
    *dt = *dt ? *dt : lm->eps_dtype;
    if (*dt != DT_FLOAT && *dt != DT_DOUBLE && *dt != DT_FLOAT16 && *dt != DT_BFLOAT16)
        return "the element type of its input is unknown or not a float type";
    if ((gdt && gdt != *dt) || (bdt && bdt != *dt))
        return "gamma or beta is not of its input's type";
    if (!lm->nd_known)
        return "the normalized shape is not known (x's trailing dims are not static)";
    bool fresh = !lm->gamma || !has_normalized_shape(lm, lm->gamma) ||
                 (lm->beta && !has_normalized_shape(lm, lm->beta));
    if (fresh && !graph_takes_new_params(lm->last->graph))
        return NO_NEW_PARAMS;
    return NULL;
}

static int ln_replace(LnMatch *lm, int32_t dt)
{
    Var *scale = lm->gamma, *bias = lm->beta;
    if (!scale || !has_normalized_shape(lm, scale))
        scale = normalized_param(lm, scale ? param_numeric(scale) : NULL, dt, "_scale");
    if (bias && !has_normalized_shape(lm, bias))
        bias = normalized_param(lm, param_numeric(bias), dt, "_bias");
    Op *r1 = lm->chain.ops[0];
    Op *ln = scale ? graph_insert_op(r1->graph, lm->last, "LayerNormalization", r1->name) : NULL;
    if (!ln || op_append_input(ln, lm->x) || op_append_input(ln, scale) ||
        (bias && op_append_input(ln, bias)) || !op_set_attr_int(ln, "axis", -(int64_t)lm->k) ||
        !op_set_attr_float(ln, "epsilon", (float)lm->eps) || graph_replace_op(lm->last, ln))
        return -1;
    return chain_remove(&lm->chain);
}

static int fuse_layernorm_step(PassCtx *pc, Op *r1)
{
    Graph *g = pc->g;
    Model *m = g->model;
    LnMatch lm;
    int32_t dt;
    if (!op_is(r1, "ReduceMean") || (!ln_match(r1, &lm) && !ln_match_tf(r1, &lm)))
        return 0;
    const char *why = ln_obstacle(&lm, &dt), *label = op_label(r1);
    if (why) {
        model_warn(m, label, "layer norm pattern kept: %s", why);
        return 0;
    }
    if (ln_replace(&lm, dt))
        return pass_failed_on(pc, label);
    model_note(m, "fused", label);
    return 0;
}

static int pass_fuse_layernorm(PassCtx *pc)
{
    Graph *g = pc->g;
    Model *m = g->model;
    if (model_opset(m) < 17)
        return 0;
    return pass_each_op(pc, fuse_layernorm_step);
}

const Pass fuse_layernorm_pass = {
    .name = "fuse-layernorm",
    .help = "decomposed layer norm to LayerNormalization (opset >= 17)",
    .on_by_default = true,
    .run = pass_fuse_layernorm,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"ReduceMean", NULL},
};
