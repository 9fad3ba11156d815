/* fuse_gelu.c - pass "fuse-gelu" (off by default): the GELU decompositions
 * exporters write become onnxruntime's com.microsoft Gelu and FastGelu.
 *
 *   erf form:  x * 0.5 * (1 + Erf(x / sqrt(2)))            -> Gelu
 *   tanh form: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *                                                           -> FastGelu
 *   quick:     x * Sigmoid(1.702 * x)                       -> QuickGelu
 *
 * When x = Add(h, b) with b a 1-D constant as long as h's last axis and x
 * read by the pattern alone, the bias goes into the fused node: the erf form
 * becomes BiasGelu(h, b), the tanh form FastGelu(h, b) (onnxruntime adds b
 * along the last axis; a b that widens h would not fit).
 *
 * x / sqrt(2) may be Mul(x, 1/sqrt(2)); x^3 Pow(x, 3) or x * x * x; Add and
 * Mul take their operands in either order, and the final product of x, 0.5
 * and (1 + ...) may be grouped as (x * a) * 0.5, x * (a * 0.5) or
 * (x * 0.5) * a. Every constant is checked against its value (within a few
 * float32 rounding steps), not only the node shapes. Every intermediate must
 * be read by the pattern alone and be no graph output; the output keeps its
 * name. x must be float32, the type onnxruntime's CPU kernels take. The
 * com.microsoft opset import (version 1) is added when the model has none:
 * these operators are not standard ONNX, which is why the pass is off by
 * default (the standard Gelu needs opset 20). */
#include <math.h>
#include <string.h>

#include "match.h"
#include "params.h"
#include "passes.h"

static const char MS_DOMAIN[] = "com.microsoft";
static const double SQRT_2_OVER_PI = 0.79788456080286535588; /* sqrt(2/pi) */

/* Is v produced by Mul(x, c) (either order) of this graph, c near want? */
static Op *mul_by(const Var *v, const Var *x, double want, const Graph *g)
{
    Op *mul = match_producer(v, "Mul", g);
    return mul && match_near(match_other(mul, x), want) ? mul : NULL;
}

/* The product of x, 0.5 and a (the 1 + ... value) in one of its groupings,
 * from a's reader on; adds its operations to c and returns the last. */
static Op *gelu_product(Chain *c, Var *x, Var *a)
{
    Op *m1 = match_next(a, "Mul");
    Var *o = match_other(m1, a), *y1 = match_out(m1);
    if (!o || !y1 || !chain_add(c, m1))
        return NULL;
    if (o == x) { /* (x * a) * 0.5 */
        Op *m2 = match_next(y1, "Mul");
        return match_near(match_other(m2, y1), 0.5) && chain_add(c, m2) ? m2 : NULL;
    }
    if (match_near(o, 0.5)) { /* x * (a * 0.5) */
        Op *m2 = match_next(y1, "Mul");
        return match_other(m2, y1) == x && chain_add(c, m2) ? m2 : NULL;
    }
    Op *h = mul_by(o, x, 0.5, m1->graph); /* (x * 0.5) * a */
    return h && sole_consumer(o) == m1 && chain_add(c, h) ? m1 : NULL;
}

/* Erf(x / sqrt 2): x, the Erf's input producer added to c. */
static Var *erf_input(Chain *c, Op *erf)
{
    Var *u = erf->inputs[0];
    Op *p = u ? u->producer : NULL;
    if (!p || p->graph != erf->graph || sole_consumer(u) != erf)
        return NULL;
    if (op_is(p, "Div") && p->n_inputs == 2 && match_near(p->inputs[1], sqrt(2.0)))
        return chain_add(c, p) ? p->inputs[0] : NULL;
    if (!op_is(p, "Mul") || p->n_inputs != 2)
        return NULL;
    for (int i = 0; i < 2; i++)
        if (match_near(p->inputs[1 - i], sqrt(0.5)))
            return chain_add(c, p) ? p->inputs[i] : NULL;
    return NULL;
}

/* Is p = x^3 (Pow(x, 3), or Mul of x and x*x in either order)? Adds to c. */
static bool is_cube(Chain *c, const Var *p, const Var *x, const Graph *g)
{
    Op *pow = match_producer(p, "Pow", g);
    if (pow)
        return pow->inputs[0] == x && match_near(pow->inputs[1], 3.0) && chain_add(c, pow);
    Op *m = match_producer(p, "Mul", g);
    Var *sq = match_other(m, x);
    Op *m2 = match_producer(sq, "Mul", g);
    return m2 && sole_consumer(sq) == m && m2->n_inputs == 2 && m2->inputs[0] == x &&
           m2->inputs[1] == x && chain_add(c, m) && chain_add(c, m2);
}

/* Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)): x, producers added to c. */
static Var *tanh_input(Chain *c, Op *th)
{
    const Graph *g = th->graph;
    Var *t = th->inputs[0];
    Op *m = match_producer(t, "Mul", g);
    if (!m || sole_consumer(t) != th || m->n_inputs != 2 || !chain_add(c, m))
        return NULL;
    Var *s = match_near(m->inputs[1], SQRT_2_OVER_PI) ? m->inputs[0]
             : match_near(m->inputs[0], SQRT_2_OVER_PI) ? m->inputs[1]
                                                           : NULL;
    Op *add = match_producer(s, "Add", g);
    if (!add || sole_consumer(s) != m || add->n_inputs != 2 || !chain_add(c, add))
        return NULL;
    for (int i = 0; i < 2; i++) { /* Add(x, q) or Add(q, x) */
        Var *x = add->inputs[i], *q = add->inputs[1 - i];
        Op *qm = match_producer(q, "Mul", g);
        if (!qm || sole_consumer(q) != add || qm->n_inputs != 2)
            continue;
        for (int j = 0; j < 2; j++) { /* q = 0.044715 * p, either order */
            Var *p = qm->inputs[j];
            if (match_near(qm->inputs[1 - j], 0.044715) && sole_consumer(p) == qm &&
                is_cube(c, p, x, g) && chain_add(c, qm))
                return x;
        }
    }
    return NULL;
}

/* Adds the com.microsoft opset import (version 1) when there is none. */
static int import_ms_domain(Model *m)
{
    return model_domain_opset(m, MS_DOMAIN) ? 0 : model_set_opset(m, MS_DOMAIN, 1, 0);
}

/* x * Sigmoid(1.702 * x), CLIP's quick GELU: the final Mul, or NULL; *alpha
 * the graph's constant. *dt: the constant's type, which ONNX makes x's. */
static Op *quick_gelu_match(Op *sig, Chain *c, Var **x, double *alpha, int32_t *dt)
{
    memset(c, 0, sizeof *c);
    *x = NULL;
    Var *u = sig->n_inputs == 1 ? sig->inputs[0] : NULL, *s = match_out(sig);
    Op *m = match_producer(u, "Mul", sig->graph);
    if (!chain_add(c, sig) || !m || sole_consumer(u) != sig || m->n_inputs != 2)
        return NULL;
    for (int i = 0; i < 2 && !*x; i++)
        if (match_near(m->inputs[1 - i], 1.702) && match_scalar(m->inputs[1 - i], alpha)) {
            *x = m->inputs[i];
            *dt = param_numeric(m->inputs[1 - i])->dtype;
        }
    Op *last = match_next(s, "Mul");
    return *x && last && match_other(last, s) == *x && chain_add(c, m) && chain_add(c, last)
               ? last
               : NULL;
}

/* Is every use of v by an operation of c (v no graph output)? */
static bool read_in_chain(const Var *v, const Chain *c)
{
    if (v->n_output_lists)
        return false;
    for (size_t u = 0; u < v->n_uses; u++) {
        size_t i = 0;
        while (i < c->n && c->ops[i] != v->uses[u].op)
            i++;
        if (i == c->n)
            return false;
    }
    return true;
}

/* x = Add(h, b) of a 1-D float32 constant b as long as h's last axis, read
 * by the pattern alone: onnxruntime's BiasGelu and FastGelu take h and b.
 * The Add is added to c and *b set; h returned, or NULL. */
static Var *bias_of(Var *x, Chain *c, Var **b)
{
    Op *add = match_producer(x, "Add", c->ops[0]->graph);
    if (!add || add->n_inputs != 2 || !read_in_chain(x, c))
        return NULL;
    for (int i = 0; i < 2; i++) {
        Var *h = add->inputs[i];
        const Tensor *t = param_numeric(add->inputs[1 - i]);
        int rank = value_rank(h);
        if (!t || t->dtype != DT_FLOAT || t->ndims != 1 || rank < 1 || h->param ||
            value_dtype(h) != DT_FLOAT || value_dim(h, rank - 1) != t->dims[0])
            continue;
        *b = add->inputs[1 - i];
        return chain_add(c, add) ? h : NULL;
    }
    return NULL;
}

/* The fused operation replacing the chain, reading x (and bias b). */
static Op *gelu_replace(Chain *c, Op *last, Var *x, Var *b, const char *type)
{
    Op *first = c->ops[0];
    Op *gelu = graph_insert_op(last->graph, last, type, first->name);
    if (!gelu)
        return NULL;
    gelu->domain = MS_DOMAIN;
    if (op_append_input(gelu, x) || (b && op_append_input(gelu, b)) ||
        graph_replace_op(last, gelu) || import_ms_domain(last->graph->model) ||
        chain_remove(c))
        return NULL;
    return gelu;
}

/* The pattern around an Erf or Tanh node: the op writing y, or NULL. *dt:
 * the element type of its constant 1, which ONNX makes x's (Erf, Tanh and
 * Add keep one type), when x's own cannot be told. */
static Op *gelu_match(Op *core, Chain *c, Var **x, int32_t *dt)
{
    memset(c, 0, sizeof *c);
    bool erf = op_is(core, "Erf");
    if (!chain_add(c, core) || core->n_inputs != 1 || !core->inputs[0])
        return NULL;
    *x = erf ? erf_input(c, core) : tanh_input(c, core);
    Var *e = match_out(core);
    Op *add = *x ? match_next(e, "Add") : NULL;
    if (!add || !match_near(match_other(add, e), 1.0) || !chain_add(c, add))
        return NULL;
    *dt = param_numeric(match_other(add, e))->dtype;
    return gelu_product(c, *x, match_out(add));
}

/* Fuses the pattern around core (Erf, Tanh or Sigmoid) if there is one: 1
 * when fused, 0 when not, -1 on failure. */
static int gelu_fuse(Op *core)
{
    Chain c;
    Var *x, *b = NULL;
    int32_t dt = 0;
    double alpha = 0;
    bool quick = op_is(core, "Sigmoid");
    Op *last = quick ? quick_gelu_match(core, &c, &x, &alpha, &dt)
                     : gelu_match(core, &c, &x, &dt);
    if (!last)
        return 0;
    const char *label = op_label(core);
    if ((value_dtype(x) ? value_dtype(x) : dt) != DT_FLOAT) {
        model_warn(core->graph->model, label, "GELU pattern kept: its input is not known to be "
                   "float32");
        return 0;
    }
    Var *h = quick ? NULL : bias_of(x, &c, &b);
    const char *type = quick ? "QuickGelu" : op_is(core, "Tanh") ? "FastGelu"
                                           : h                   ? "BiasGelu"
                                                                 : "Gelu";
    if (!h && !strcmp(type, "FastGelu") && value_rank(x) < 1) {
        /* onnxruntime's FastGelu refuses a scalar input (BiasGelu too: bias_of
         * asks for rank 1 or more); Gelu and QuickGelu take one */
        model_warn(core->graph->model, label, "tanh GELU kept: onnxruntime's FastGelu needs "
                   "an input of rank 1 or more, and its input's rank is %s",
                   value_rank(x) ? "not known" : "0");
        return 0;
    }
    Op *gelu = gelu_replace(&c, last, h ? h : x, b, type);
    if (!gelu || (quick && !op_set_attr_float(gelu, "alpha", (float)alpha)))
        return -1;
    model_note(core->graph->model, "fused", label);
    return 1;
}

static int fuse_gelu_step(PassCtx *pc, Op *core)
{
    if (!op_is(core, "Erf") && !op_is(core, "Tanh") && !op_is(core, "Sigmoid"))
        return 0;
    const char *label = op_label(core);
    if (gelu_fuse(core) < 0)
        return pass_failed_on(pc, label);
    return 0;
}

static int pass_fuse_gelu(PassCtx *pc)
{
    return pass_each_op(pc, fuse_gelu_step);
}

const Pass fuse_gelu_pass = {
    .name = "fuse-gelu",
    .help = "GELU forms to com.microsoft (Bias/Fast/Quick)Gelu (onnxruntime only)",
    .on_by_default = false,
    .run = pass_fuse_gelu,
    .facts = FACTS_ROUND,
    .acts_on = NULL,
};
