/* match.c - pattern matching helpers of the fusion passes (match.h). */
#include "match.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "params.h"

Op *match_next(const Var *v, const char *type)
{
    Op *op = sole_consumer(v);
    return op && op_is(op, type) && op->graph == v->graph ? op : NULL;
}

Op *match_producer(const Var *v, const char *type, const Graph *g)
{
    Op *p = v ? v->producer : NULL;
    return p && op_is(p, type) && p->graph == g ? p : NULL;
}

bool match_scalar(const Var *v, double *out)
{
    const Tensor *t = v ? param_numeric(v) : NULL;
    if (!t || tensor_numel(t) != 1 || t->ndims > 1)
        return false;
    *out = tensor_get_f64(t, 0);
    return true;
}

bool match_near(const Var *v, double want)
{
    double got;
    if (!match_scalar(v, &got))
        return false;
    /* Eight rounding steps of the constant's type: written in that type, or
     * in a decimal with the 7 significant digits exporters print. */
    int32_t dt = param_numeric(v)->dtype;
    double step = dt == DT_FLOAT16 ? 0x1p-10 : dt == DT_BFLOAT16 ? 0x1p-7 : FLT_EPSILON;
    return fabs(got - want) <= 8 * step * fabs(want);
}

bool match_attr_is(const Op *op, const char *name, const char *want, bool dflt)
{
    const Attr *a = op_attr(op, name);
    if (!a)
        return dflt;
    size_t n = strlen(want);
    return a->type == ATTR_STRING && a->s.len == n && memcmp(a->s.ptr, want, n) == 0;
}

Var *match_out(const Op *op)
{
    return op && op->n_outputs == 1 ? op->outputs[0] : NULL;
}

bool chain_add(Chain *c, Op *op)
{
    if (!op || c->n == CHAIN_MAX)
        return false;
    c->ops[c->n++] = op;
    return true;
}

/* Is any output of op still read or a graph output? */
static bool op_outputs_live(const Op *op)
{
    for (size_t i = 0; i < op->n_outputs; i++)
        if (op->outputs[i] && (op->outputs[i]->n_uses || op->outputs[i]->n_output_lists))
            return true;
    return false;
}

int chain_remove(Chain *c)
{
    size_t left = 0;
    for (size_t i = 0; i < c->n; i++)
        left += !c->ops[i]->removed;
    while (left) {
        size_t before = left;
        for (size_t i = c->n; i-- > 0;) {
            Op *op = c->ops[i];
            if (op->removed || op_outputs_live(op))
                continue;
            if (graph_remove_op(op, NULL))
                return -1;
            left--;
        }
        if (left == before)
            return -1;
    }
    return 0;
}
