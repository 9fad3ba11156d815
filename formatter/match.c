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

/* The axes a ReduceMean reduces, read from its attribute or input. */
static bool reduce_axes(const Op *r, int64_t *axes, size_t *n)
{
    const Attr *a = op_attr(r, "axes");
    if (a) {
        if (a->type != ATTR_INTS || a->n > MATCH_MAX_AXES || r->n_inputs != 1)
            return false;
        attr_copy_ints(a, axes);
        *n = a->n;
        return true;
    }
    *n = 0;
    if (r->n_inputs < 2 || !r->inputs[1])
        return r->n_inputs >= 1 && !op_attr_int(r, "noop_with_empty_axes", 0);
    const Tensor *t = param_numeric(r->inputs[1]);
    if (!t || t->dtype != DT_INT64 || t->ndims != 1 || t->dims[0] > MATCH_MAX_AXES || !t->data ||
        t->dims[0] < 1)
        return false;
    *n = (size_t)t->dims[0];
    memcpy(axes, t->data, *n * sizeof *axes); /* raw_data need not be aligned */
    return true;
}

size_t match_trailing_axes(const Op *r, int rank)
{
    int64_t axes[MATCH_MAX_AXES];
    size_t n;
    if (!op_is(r, "ReduceMean") || op_attr_int(r, "keepdims", 1) != 1 || !reduce_axes(r, axes, &n))
        return 0;
    if (!n)
        return rank > 0 && rank <= MATCH_MAX_AXES ? (size_t)rank : 0;
    bool seen[MATCH_MAX_AXES] = {false};
    for (size_t i = 0; i < n; i++) {
        int64_t a = axes[i] >= 0 ? (rank >= 0 ? axes[i] - rank : 0) : axes[i];
        if (a >= 0 || a < -(int64_t)n || seen[-a - 1])
            return 0; /* positive with no rank, not trailing, or repeated */
        seen[-a - 1] = true;
    }
    return n;
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
