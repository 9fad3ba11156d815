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
