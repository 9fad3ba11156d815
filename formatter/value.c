/* value.c - what the passes know about a value: the facts shape inference
 * worked out when the pipeline round began (Model.facts, formatter/pass.c),
 * else what the value itself says: a parameter's type and shape or a
 * declared type (a value a pass made during this round has no fact until
 * the next one). No pass walks producer chains to guess. */
#include "params.h"

const InferFact *value_fact(const Var *v)
{
    const InferRun *r = v ? v->graph->model->facts : NULL;
    const InferFact *f = r ? infer_fact(r, v) : NULL;
    return f && facts_known(f) && f->kind == FACT_TENSOR ? f : NULL;
}

int32_t value_dtype(const Var *v)
{
    const InferFact *f = value_fact(v);
    int32_t dt = f && f->dtype ? f->dtype : !v ? 0 : v->param ? v->param->dtype : v->type.elem_type;
    return dtype_is_known(dt) ? dt : 0;
}

int value_rank(const Var *v)
{
    const InferFact *f = value_fact(v);
    if (f && f->rank >= 0)
        return f->rank;
    return !v ? -1 : v->param ? (int)v->param->ndims : v->type.rank;
}

int64_t value_dim(const Var *v, int axis)
{
    const InferFact *f = value_fact(v);
    if (!v || axis < 0)
        return -1;
    if (f && f->rank >= 0)
        return axis < f->rank && dim_is_const(f->dims[axis]) ? dim_value(f->dims[axis]) : -1;
    if (v->param)
        return (size_t)axis < v->param->ndims ? v->param->dims[axis] : -1;
    return axis < v->type.rank ? v->type.dims[axis] : -1;
}

/* The dim_param for a symbolic dim: a model symbol's own name, else the
 * expression as dim_str writes it into buf. */
const char *dim_param_text(const DimTable *dt, Dim d, char *buf, size_t size)
{
    const char *name = dim_sym_name(dt, d);
    return name ? name : dim_str(dt, d, buf, size);
}

/* The same in the arena; NULL when out of memory. */
static const char *dim_param(Arena *a, const DimTable *dt, Dim d)
{
    char buf[256];
    return arena_strdup(a, dim_param_text(dt, d, buf, sizeof buf));
}

bool dim_known(Dim d) { return dim_is_const(d) && dim_value(d) >= 0; }

int value_type_from_fact(Arena *a, const DimTable *dt, const InferFact *f, TypeInfo *t)
{
    *t = (TypeInfo){f->dtype, f->rank, NULL, NULL};
    if (f->rank <= 0)
        return 0;
    size_t n = (size_t)f->rank;
    if (!(t->dims = arena_array(a, n, sizeof *t->dims)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        bool known = dim_known(f->dims[i]);
        t->dims[i] = known ? dim_value(f->dims[i]) : -1;
        if (known)
            continue;
        if (!t->dim_params && !(t->dim_params = arena_array(a, n, sizeof *t->dim_params)))
            return -1;
        if (!(t->dim_params[i] = dim_param(a, dt, f->dims[i])))
            return -1;
    }
    return 0;
}
