/* ops_elementwise.c - rules for elementwise operators: unary ones keep
 * their input's type and shape, binary and variadic ones broadcast
 * multidirectionally (numpy rules, opset 7 on; before it the output has the
 * first input's shape), comparisons and logic give bool, Cast gives `to`.
 * Integer contents are propagated through Add/Sub/Mul/Div/Mod/Cast/Identity
 * so shape arithmetic (Shape -> Mul -> Reshape) keeps its values, and bool
 * ones (0/1) through the comparisons, Not/And/Or/Xor and Where, so a
 * condition on shapes (an Attention function's head counts) picks its
 * branch's value. */
#include <string.h>
#include <strings.h>

#include "ops.h"

/* Same type and shape as input 0 (every output); Identity-like ops also
 * pass integer contents on. */
static int ew_unary(InferCtx *c)
{
    for (size_t i = 0; i < c->n_out; i++)
        if (infer_copy(c, i, 0))
            return -1;
    return 0;
}

/* Identity: also of a sequence or an optional (opsets 14 and 16). */
static int ew_identity(InferCtx *c)
{
    const InferFact *x = infer_in_any(c, 0);
    if (infer_set_fact(c, 0, x))
        return -1;
    return x->value ? infer_set_value(c, 0, x->value, x->n_value) : 0;
}

static int ew_to_bool(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    return infer_set(c, 0, DT_BOOL, x->rank, x->dims);
}

/* Dropout: output 0 like the input, the optional mask bool of its shape. */
/* Dropout's mask is bool from opset 10; before, it has the data's type. */
static int ew_dropout(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_copy(c, 0, 0))
        return -1;
    return c->n_out > 1 ? infer_set(c, 1, DT_BOOL, x->rank, x->dims) : 0;
}

static int ew_dropout_legacy(InferCtx *c)
{
    if (infer_copy(c, 0, 0))
        return -1;
    return c->n_out > 1 ? infer_copy(c, 1, 0) : 0;
}

/* Before opset 7 binary ops broadcast only B into A: the output is A. */
static int ew_legacy_binary(InferCtx *c)
{
    return infer_copy(c, 0, 0);
}

/* The broadcast of every present input; dtype from input `typed`. */
static int ew_broadcast(InferCtx *c, size_t first, size_t typed, int32_t dtype)
{
    const InferFact *ins[16];
    size_t n = 0;
    for (size_t i = first; i < c->n_in; i++) {
        if (!infer_has_in(c, i))
            continue;
        if (n == 16)
            return 0; /* more inputs than the rule holds: leave unknown */
        ins[n++] = infer_in(c, i);
    }
    InferFact shape = {0, -1, NULL, NULL, 0, FACT_TENSOR};
    if (infer_broadcast(c, ins, n, &shape))
        return -1;
    return infer_set_own(c, 0, dtype ? dtype : infer_in(c, typed)->dtype, shape.rank,
                         shape.dims);
}

/* Element k of a value broadcast to n elements (length 1 or n). */
static Dim ew_value_at(const InferFact *f, size_t k)
{
    return f->n_value == 1 ? f->value[0] : f->value[k];
}

/* An integer division with a provable result: both operands constant (ONNX
 * integer Div truncates, like C), or a non-negative size over a positive
 * constant whose floor division is exact (a symbolic remainder in
 * [0, b) proves it). */
static Dim ew_div_value(DimTable *dt, Dim a, Dim b)
{
    if (!dim_is_const(b) || dim_value(b) == 0)
        return NULL;
    int64_t k = dim_value(b);
    if (dim_is_const(a))
        return dim_value(a) == INT64_MIN && k == -1 ? NULL : dim_const(dt, dim_value(a) / k);
    if (k < 0 || !dim_nonneg(a))
        return NULL;
    Dim q = dim_floordiv(dt, a, k);
    Dim rem = dim_sub(dt, a, dim_mul(dt, q, b));
    return dim_is_const(rem) && dim_value(rem) >= 0 && dim_value(rem) < k ? q : NULL;
}

/* Integer Mod: the remainder takes the divisor's sign (fmod=0, Python's
 * rule) or the dividend's (fmod=1, C's). Constant operands, or a
 * non-negative size over a positive constant whose remainder is provable
 * (swin's window padding computes (7 - W % 7) % 7 from a shape). */
static Dim ew_mod_value(InferCtx *c, Dim a, Dim b)
{
    if (!dim_is_const(b) || dim_value(b) == 0)
        return NULL;
    int64_t k = dim_value(b);
    if (!dim_is_const(a)) {
        if (k < 0 || !dim_nonneg(a))
            return NULL;
        Dim rem = dim_sub(c->dt, a, dim_mul(c->dt, dim_floordiv(c->dt, a, k), b));
        return dim_is_const(rem) && dim_value(rem) >= 0 && dim_value(rem) < k ? rem : NULL;
    }
    if (dim_value(a) == INT64_MIN && k == -1)
        return dim_const(c->dt, 0);
    int64_t r = dim_value(a) % k;
    if (!op_attr_int(c->op, "fmod", 0) && r != 0 && (r < 0) != (k < 0))
        r += k;
    return dim_const(c->dt, r);
}

/* A binary op's contents, element by element (broadcasting a single
 * value), when its inputs carry contents: what shape arithmetic and the
 * conditions on it (an Attention function's head counts) compute. */
typedef Dim (*EwValueFn)(InferCtx *c, Dim a, Dim b);

static bool ew_int_type(int32_t t) { return t == DT_INT64 || t == DT_INT32; }
static bool ew_value_type(int32_t t) { return ew_int_type(t) || t == DT_BOOL; }

/* How many elements the contents of inputs 0..n_in-1 broadcast to (each
 * carries that many or one); 0 when one carries none or they disagree. */
static size_t ew_values_count(InferCtx *c, size_t n_in)
{
    size_t n = 0;
    for (size_t i = 0; i < n_in; i++) {
        const InferFact *f = infer_in(c, i);
        if (!f->value)
            return 0;
        n = f->n_value > n ? f->n_value : n;
    }
    for (size_t i = 0; i < n_in; i++) {
        size_t k = infer_in(c, i)->n_value;
        if (k != n && k != 1)
            return 0;
    }
    return n <= FACTS_MAX_VALUE ? n : 0;
}

static int ew_binary_value(InferCtx *c, EwValueFn fn)
{
    const InferFact *a = infer_in(c, 0), *b = infer_in(c, 1);
    size_t n = ew_values_count(c, 2);
    if (!n || !ew_value_type(c->out[0].dtype) || c->out[0].rank < 0)
        return 0;
    Dim v[FACTS_MAX_VALUE];
    for (size_t k = 0; k < n; k++)
        v[k] = fn(c, ew_value_at(a, k), ew_value_at(b, k));
    return infer_set_value(c, 0, v, n);
}

static Dim ew_add_value(InferCtx *c, Dim a, Dim b) { return a && b ? dim_add(c->dt, a, b) : NULL; }
static Dim ew_sub_value(InferCtx *c, Dim a, Dim b) { return a && b ? dim_sub(c->dt, a, b) : NULL; }
static Dim ew_mul_value(InferCtx *c, Dim a, Dim b) { return a && b ? dim_mul(c->dt, a, b) : NULL; }
static Dim ew_div_dims(InferCtx *c, Dim a, Dim b) { return a && b ? ew_div_value(c->dt, a, b) : NULL; }
static Dim ew_mod_dims(InferCtx *c, Dim a, Dim b) { return a && b ? ew_mod_value(c, a, b) : NULL; }

static Dim ew_bool(InferCtx *c, bool v) { return dim_const(c->dt, v); }
static bool ew_both_const(Dim a, Dim b) { return a && b && dim_is_const(a) && dim_is_const(b); }

/* Equal: two equal constants, or one expression (dims are interned). */
static Dim ew_equal_value(InferCtx *c, Dim a, Dim b)
{
    return a && a == b ? ew_bool(c, true) : ew_both_const(a, b) ? ew_bool(c, false) : NULL;
}

static Dim ew_less_value(InferCtx *c, Dim a, Dim b)
{
    return ew_both_const(a, b) ? ew_bool(c, dim_value(a) < dim_value(b)) : NULL;
}

static Dim ew_greater_value(InferCtx *c, Dim a, Dim b) { return ew_less_value(c, b, a); }

static Dim ew_not_dim(InferCtx *c, Dim a)
{
    return a && dim_is_const(a) ? ew_bool(c, !dim_value(a)) : NULL;
}

static Dim ew_less_equal_value(InferCtx *c, Dim a, Dim b)
{
    return ew_not_dim(c, ew_greater_value(c, a, b));
}

static Dim ew_greater_equal_value(InferCtx *c, Dim a, Dim b)
{
    return ew_not_dim(c, ew_less_value(c, a, b));
}

/* And/Or decide with one operand known when it is false/true. */
static Dim ew_and_value(InferCtx *c, Dim a, Dim b)
{
    if ((a && dim_is_const(a) && !dim_value(a)) || (b && dim_is_const(b) && !dim_value(b)))
        return ew_bool(c, false);
    return ew_both_const(a, b) ? ew_bool(c, true) : NULL;
}

static Dim ew_or_value(InferCtx *c, Dim a, Dim b)
{
    if ((a && dim_is_const(a) && dim_value(a)) || (b && dim_is_const(b) && dim_value(b)))
        return ew_bool(c, true);
    return ew_both_const(a, b) ? ew_bool(c, false) : NULL;
}

static Dim ew_xor_value(InferCtx *c, Dim a, Dim b)
{
    return ew_both_const(a, b) ? ew_bool(c, !dim_value(a) != !dim_value(b)) : NULL;
}

static int ew_binary(InferCtx *c) { return ew_broadcast(c, 0, 0, 0); }

static int ew_arith(InferCtx *c, EwValueFn fn)
{
    return ew_broadcast(c, 0, 0, 0) ? -1 : ew_binary_value(c, fn);
}

static int ew_add(InferCtx *c) { return ew_arith(c, ew_add_value); }
static int ew_sub(InferCtx *c) { return ew_arith(c, ew_sub_value); }
static int ew_mul(InferCtx *c) { return ew_arith(c, ew_mul_value); }
static int ew_div(InferCtx *c) { return ew_arith(c, ew_div_dims); }
static int ew_mod(InferCtx *c) { return ew_arith(c, ew_mod_dims); }

static int ew_logic(InferCtx *c, EwValueFn fn)
{
    return ew_broadcast(c, 0, 0, DT_BOOL) ? -1 : ew_binary_value(c, fn);
}

static int ew_equal(InferCtx *c) { return ew_logic(c, ew_equal_value); }
static int ew_less(InferCtx *c) { return ew_logic(c, ew_less_value); }
static int ew_greater(InferCtx *c) { return ew_logic(c, ew_greater_value); }
static int ew_less_equal(InferCtx *c) { return ew_logic(c, ew_less_equal_value); }
static int ew_greater_equal(InferCtx *c) { return ew_logic(c, ew_greater_equal_value); }
static int ew_and(InferCtx *c) { return ew_logic(c, ew_and_value); }
static int ew_or(InferCtx *c) { return ew_logic(c, ew_or_value); }
static int ew_xor(InferCtx *c) { return ew_logic(c, ew_xor_value); }

static int ew_not(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_copy(c, 0, 0))
        return -1;
    if (!x->value || x->dtype != DT_BOOL)
        return 0;
    Dim v[FACTS_MAX_VALUE];
    for (size_t k = 0; k < x->n_value; k++)
        v[k] = ew_not_dim(c, x->value[k]);
    return infer_set_value(c, 0, v, x->n_value);
}

/* Where picks x's or y's element where the condition is known. */
static int ew_where(InferCtx *c)
{
    if (ew_broadcast(c, 0, 1, 0))
        return -1;
    const InferFact *k = infer_in(c, 0), *x = infer_in(c, 1), *y = infer_in(c, 2);
    size_t n = ew_values_count(c, 3);
    if (!n || !ew_int_type(c->out[0].dtype) || c->out[0].rank < 0)
        return 0;
    Dim v[FACTS_MAX_VALUE];
    for (size_t i = 0; i < n; i++) {
        Dim cond = ew_value_at(k, i);
        v[i] = !cond || !dim_is_const(cond) ? NULL
               : dim_value(cond)           ? ew_value_at(x, i)
                                           : ew_value_at(y, i);
    }
    return infer_set_value(c, 0, v, n);
}

static int ew_cast_to(InferCtx *c, int32_t to)
{
    const InferFact *x = infer_in(c, 0);
    if (infer_set(c, 0, to, x->rank, x->dims))
        return -1;
    if (!x->value || !ew_value_type(to) || !ew_value_type(x->dtype) ||
        x->n_value > FACTS_MAX_VALUE)
        return 0;
    if (to != DT_BOOL || x->dtype == DT_BOOL)
        return infer_set_value(c, 0, x->value, x->n_value);
    Dim v[FACTS_MAX_VALUE]; /* to bool: known where the integer is */
    for (size_t k = 0; k < x->n_value; k++)
        v[k] = x->value[k] && dim_is_const(x->value[k]) ? ew_bool(c, dim_value(x->value[k]))
                                                        : NULL;
    return infer_set_value(c, 0, v, x->n_value);
}

static int ew_cast(InferCtx *c)
{
    int64_t to = op_attr_int(c->op, "to", 0);
    if (!dtype_is_known((int32_t)to) || to == 0)
        return infer_bad(c, "Cast to unknown element type %lld", (long long)to);
    return ew_cast_to(c, (int32_t)to);
}

/* Cast-1..5 spelled `to` as a string ("FLOAT"); dtype_name() matches the
 * lower-case spelling. */
static int ew_cast_legacy(InferCtx *c)
{
    const Attr *a = op_attr(c->op, "to");
    if (a && a->type == ATTR_INT)
        return ew_cast(c);
    if (!a || a->type != ATTR_STRING)
        return 0;
    for (int32_t t = 1; t <= DT_LAST; t++) {
        const char *n = dtype_name(t);
        if (strlen(n) == a->s.len && !strncasecmp(n, (const char *)a->s.ptr, a->s.len))
            return ew_cast_to(c, t);
    }
    return 0;
}

static int ew_castlike(InferCtx *c) { return ew_cast_to(c, infer_in(c, 1)->dtype); }

/* BitCast-26: the same shape, the bits read as `to` (of the same width);
 * no contents carried, unlike Cast. */
static int ew_bitcast(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    return infer_set(c, 0, (int32_t)op_attr_int(c->op, "to", 0), x->rank, x->dims);
}

#define UNARY(name, v) {"", name, v, 1, 1, 1, 1, ew_unary}
/* The output is shaped like input 0, whatever the other inputs are. */
#define LIKE_INPUT0(name, v, min_in, max_in) {"", name, v, min_in, max_in, 1, 1, ew_unary}
#define BINARY(name, v, fn) {"", name, v, 2, 2, 1, 1, fn}

static const OpSchema ops_elementwise[] = {
    UNARY("Relu", 1), UNARY("Sigmoid", 1), UNARY("Tanh", 1), UNARY("Erf", 9),
    UNARY("Sqrt", 1), UNARY("Exp", 1), UNARY("Log", 1), UNARY("Neg", 1), UNARY("Abs", 1),
    UNARY("LeakyRelu", 1), UNARY("HardSigmoid", 1), UNARY("HardSwish", 14), UNARY("Elu", 1),
    UNARY("Selu", 1), UNARY("Celu", 12), UNARY("Softplus", 1), UNARY("Softsign", 1),
    UNARY("ThresholdedRelu", 10), UNARY("Mish", 18), UNARY("Gelu", 20), UNARY("Shrink", 9),
    UNARY("Ceil", 1), UNARY("Floor", 1), UNARY("Round", 11), UNARY("Reciprocal", 1),
    /* opset 6 dropped consumed_inputs: the version the fold kernels start at */
    UNARY("Relu", 6), UNARY("Sigmoid", 6), UNARY("Tanh", 6), UNARY("Sqrt", 6), UNARY("Exp", 6),
    UNARY("Log", 6), UNARY("Neg", 6), UNARY("Abs", 6), UNARY("Ceil", 6), UNARY("Floor", 6),
    UNARY("Reciprocal", 6),
    UNARY("Sign", 9), UNARY("Sin", 7), UNARY("Cos", 7), UNARY("Tan", 7), UNARY("Asin", 7),
    UNARY("Acos", 7), UNARY("Atan", 7), UNARY("Sinh", 9), UNARY("Cosh", 9), UNARY("Asinh", 9),
    UNARY("Acosh", 9), UNARY("Atanh", 9), UNARY("BitwiseNot", 18), {"", "Not", 1, 1, 1, 1, 1, ew_not},
    UNARY("Softmax", 1), UNARY("LogSoftmax", 1), UNARY("Hardmax", 1), UNARY("LRN", 1),
    LIKE_INPUT0("InstanceNormalization", 1, 3, 3), UNARY("MeanVarianceNormalization", 9),
    UNARY("LpNormalization", 1), LIKE_INPUT0("CumSum", 11, 2, 2), LIKE_INPUT0("Trilu", 14, 1, 2),
    LIKE_INPUT0("ReverseSequence", 10, 2, 2), LIKE_INPUT0("ScatterElements", 11, 3, 3),
    LIKE_INPUT0("Scatter", 9, 3, 3), LIKE_INPUT0("ScatterND", 11, 3, 3),
    /* opset 18 on: the output like X (Y of RMSNormalization-23 and
     * RotaryEmbedding-23, the updated cache of TensorScatter-24, SwiGLU-28's
     * gate-shaped product) */
    UNARY("Swish", 24), LIKE_INPUT0("CumProd", 26, 2, 2), LIKE_INPUT0("RMSNormalization", 23, 2, 2),
    LIKE_INPUT0("RotaryEmbedding", 23, 3, 4), LIKE_INPUT0("TensorScatter", 24, 2, 3),
    LIKE_INPUT0("SwiGLU", 28, 2, 2), {"", "BitCast", 26, 1, 1, 1, 1, ew_bitcast},
    {"", "RegexFullMatch", 20, 1, 1, 1, 1, ew_to_bool}, BINARY("StringConcat", 20, ew_binary),
    /* onnxruntime's contrib ops that fusions (fuse-gelu) and exporters emit */
    {"com.microsoft", "Gelu", 1, 1, 1, 1, 1, ew_unary},
    {"com.microsoft", "FastGelu", 1, 1, 2, 1, 1, ew_unary},
    {"com.microsoft", "BiasGelu", 1, 2, 2, 1, 1, ew_unary},
    {"com.microsoft", "QuickGelu", 1, 1, 1, 1, 1, ew_unary},
    {"", "Clip", 1, 1, 3, 1, 1, ew_unary},
    {"", "PRelu", 1, 2, 2, 1, 1, ew_unary},
    {"", "Identity", 1, 1, 1, 1, 1, ew_identity},
    {"", "Dropout", 1, 1, 1, 1, 2, ew_dropout_legacy},
    {"", "Dropout", 10, 1, 3, 1, 2, ew_dropout},
    {"", "IsNaN", 9, 1, 1, 1, 1, ew_to_bool},
    {"", "IsInf", 10, 1, 1, 1, 1, ew_to_bool},
    BINARY("Add", 1, ew_legacy_binary), BINARY("Add", 7, ew_add),
    BINARY("Sub", 1, ew_legacy_binary), BINARY("Sub", 7, ew_sub),
    BINARY("Mul", 1, ew_legacy_binary), BINARY("Mul", 7, ew_mul),
    BINARY("Div", 1, ew_legacy_binary), BINARY("Div", 7, ew_div),
    BINARY("Pow", 1, ew_legacy_binary), BINARY("Pow", 7, ew_binary),
    BINARY("Mod", 10, ew_mod), BINARY("BitShift", 11, ew_binary),
    BINARY("BitwiseAnd", 18, ew_binary), BINARY("BitwiseOr", 18, ew_binary),
    BINARY("BitwiseXor", 18, ew_binary),
    BINARY("And", 1, ew_legacy_binary), BINARY("And", 7, ew_and),
    BINARY("Or", 1, ew_legacy_binary), BINARY("Or", 7, ew_or),
    BINARY("Xor", 1, ew_legacy_binary), BINARY("Xor", 7, ew_xor),
    BINARY("Equal", 1, ew_to_bool), BINARY("Equal", 7, ew_equal),
    BINARY("Less", 1, ew_to_bool), BINARY("Less", 7, ew_less),
    BINARY("Greater", 1, ew_to_bool), BINARY("Greater", 7, ew_greater),
    BINARY("LessOrEqual", 12, ew_less_equal),
    BINARY("GreaterOrEqual", 12, ew_greater_equal),
    {"", "Max", 1, 1, OPS_VARIADIC, 1, 1, ew_legacy_binary},
    {"", "Max", 8, 1, OPS_VARIADIC, 1, 1, ew_binary},
    {"", "Min", 1, 1, OPS_VARIADIC, 1, 1, ew_legacy_binary},
    {"", "Min", 8, 1, OPS_VARIADIC, 1, 1, ew_binary},
    {"", "Sum", 1, 1, OPS_VARIADIC, 1, 1, ew_legacy_binary},
    {"", "Sum", 8, 1, OPS_VARIADIC, 1, 1, ew_binary},
    {"", "Mean", 1, 1, OPS_VARIADIC, 1, 1, ew_legacy_binary},
    {"", "Mean", 8, 1, OPS_VARIADIC, 1, 1, ew_binary},
    {"", "Where", 9, 3, 3, 1, 1, ew_where},
    {"", "Cast", 1, 1, 1, 1, 1, ew_cast_legacy},
    {"", "Cast", 6, 1, 1, 1, 1, ew_cast},
    {"", "CastLike", 15, 2, 2, 1, 1, ew_castlike},
};

const OpTable ops_elementwise_table = {ops_elementwise,
                                       sizeof ops_elementwise / sizeof ops_elementwise[0]};
