/* fuse_gelu.c - pass "fuse-gelu" (off by default): the GELU decompositions
 * exporters write become onnxruntime's com.microsoft Gelu and FastGelu.
 *
 *   erf form:  x * 0.5 * (1 + Erf(x / sqrt(2)))            -> Gelu
 *   tanh form: 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *                                                           -> FastGelu
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
    if (model_domain_opset(m, MS_DOMAIN))
        return 0;
    Opset *grown = arena_array(&m->arena, m->n_opsets + 1, sizeof *grown);
    if (!grown)
        return -1;
    if (m->n_opsets)
        memcpy(grown, m->opsets, m->n_opsets * sizeof *grown);
    grown[m->n_opsets++] = (Opset){MS_DOMAIN, 1};
    m->opsets = grown;
    m->changed = true;
    return 0;
}

static int gelu_replace(Chain *c, Op *last, Var *x, const char *type)
{
    Op *first = c->ops[0];
    Op *gelu = graph_insert_op(last->graph, last, type, first->name);
    if (!gelu)
        return -1;
    gelu->domain = MS_DOMAIN;
    if (op_append_input(gelu, x) || graph_replace_op(last, gelu) ||
        import_ms_domain(last->graph->model))
        return -1;
    return chain_remove(c);
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

int pass_fuse_gelu(Graph *g, Diag *d)
{
    Model *m = g->model;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *core = g->ops[i];
        Chain c;
        Var *x;
        int32_t dt;
        if (!op_is(core, "Erf") && !op_is(core, "Tanh"))
            continue;
        Op *last = gelu_match(core, &c, &x, &dt);
        if (!last)
            continue;
        const char *label = op_label(core);
        if ((value_dtype(x) ? value_dtype(x) : dt) != DT_FLOAT) {
            model_warn(m, label, "GELU pattern kept: its input is not known to be float32");
            continue;
        }
        if (gelu_replace(&c, last, x, op_is(core, "Erf") ? "Gelu" : "FastGelu"))
            return diag_set(d, PPQ_EINTERNAL, "pass fuse-gelu failed on node '%s'", label);
        model_note(m, "fused", label);
    }
    return 0;
}
