/* ops_generate.c - rules for operators that make new tensors from a shape
 * or a size: RandomUniform/Normal(Like), Bernoulli, Multinomial, EyeLike,
 * the window functions (Hann, Hamming, Blackman), OneHot. */
#include "ops.h"

/* The dtype attribute name, else fallback. */
static int32_t gen_dtype(const InferCtx *c, const char *name, int32_t fallback)
{
    return (int32_t)op_attr_int(c->op, name, fallback);
}

/* *Like ops and Bernoulli: input 0's shape, dtype from the attribute or
 * the input. */
static int gen_like(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    return infer_set(c, 0, gen_dtype(c, "dtype", x->dtype), x->rank, x->dims);
}

/* RandomUniform/RandomNormal: shape and dtype (float) from attributes. */
static int gen_random(InferCtx *c)
{
    const Attr *a = op_attr(c->op, "shape");
    int32_t dtype = gen_dtype(c, "dtype", DT_FLOAT);
    if (!a || a->type != ATTR_INTS || a->n > 64)
        return infer_set_dtype(c, 0, dtype);
    Dim d[64];
    for (size_t i = 0; i < a->n; i++)
        d[i] = dim_const(c->dt, a->ints[i]);
    return infer_set(c, 0, dtype, (int)a->n, d);
}

/* Windows: [size], output_datatype (float by default). */
static int gen_window(InferCtx *c)
{
    const InferFact *n = infer_in(c, 0);
    Dim len = n->value && n->n_value == 1 && n->value[0] ? n->value[0] : dim_fresh(c->dt);
    return infer_set(c, 0, gen_dtype(c, "output_datatype", DT_FLOAT), 1, &len);
}

/* OneHot(indices, depth, values): depth inserted at axis, values' type. */
static int gen_onehot(InferCtx *c)
{
    const InferFact *ind = infer_in(c, 0), *depth = infer_in(c, 1);
    int32_t dtype = infer_in(c, 2)->dtype;
    if (ind->rank < 0 || ind->rank >= 64)
        return infer_set_dtype(c, 0, dtype);
    int axis = infer_axis(op_attr_int(c->op, "axis", -1), ind->rank + 1);
    if (axis < 0)
        return infer_bad(c, "axis out of range");
    Dim d[64];
    for (int i = 0, k = 0; i <= ind->rank; i++)
        d[i] = i == axis ? (depth->value && depth->n_value == 1 && depth->value[0] ? depth->value[0]
                                                                             : dim_fresh(c->dt))
                         : ind->dims[k++];
    return infer_set(c, 0, dtype, ind->rank + 1, d);
}

/* Multinomial: [batch_size, sample_size] of dtype (int32 by default) from
 * input [batch_size, class_size]. */
static int gen_multinomial(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    Dim d[2] = {x->rank == 2 ? x->dims[0] : dim_fresh(c->dt),
                dim_const(c->dt, op_attr_int(c->op, "sample_size", 1))};
    return infer_set(c, 0, gen_dtype(c, "dtype", DT_INT32), 2, d);
}

static const OpSchema ops_generate[] = {
    {"", "RandomUniformLike", 1, 1, 1, 1, 1, gen_like},
    {"", "RandomNormalLike", 1, 1, 1, 1, 1, gen_like},
    {"", "Bernoulli", 15, 1, 1, 1, 1, gen_like},
    {"", "EyeLike", 9, 1, 1, 1, 1, gen_like},
    {"", "RandomUniform", 1, 0, 0, 1, 1, gen_random},
    {"", "RandomNormal", 1, 0, 0, 1, 1, gen_random},
    {"", "Multinomial", 7, 1, 1, 1, 1, gen_multinomial},
    {"", "HannWindow", 17, 1, 1, 1, 1, gen_window},
    {"", "HammingWindow", 17, 1, 1, 1, 1, gen_window},
    {"", "BlackmanWindow", 17, 1, 1, 1, 1, gen_window},
    {"", "OneHot", 9, 3, 3, 1, 1, gen_onehot},
};

const OpTable ops_generate_table = {ops_generate, sizeof ops_generate / sizeof ops_generate[0]};
