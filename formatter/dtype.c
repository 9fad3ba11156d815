/* dtype.c - the element type of a value, told without type inference: a
 * declared type or a parameter's, else carried through operators whose output
 * type follows an input or an attribute (memoised per pass: var_fact). */
#include "params.h"

/* The element type an operator gives output `slot`, when it does not simply
 * follow its first input: 0 = follows input `*from` (set), -1 = unknown. */
static int32_t fixed_output_dtype(const Op *op, size_t slot, size_t *from)
{
    static const char *const INDEX[] = {"ArgMax", "ArgMin", "NonZero", "Shape", "Size"};
    static const char *const BOOLEAN[] = {"And", "Equal", "Greater", "IsInf", "IsNaN",
                                          "Less", "Not", "Or", "Xor"};
    *from = 0;
    if (op_is(op, "Cast"))
        return (int32_t)op_attr_int(op, "to", -1);
    if (op_is(op, "TopK") && slot == 1)
        return DT_INT64;
    if (op_is(op, "Where"))
        *from = 1;
    for (size_t i = 0; i < sizeof INDEX / sizeof *INDEX; i++)
        if (op_is(op, INDEX[i]))
            return DT_INT64;
    for (size_t i = 0; i < sizeof BOOLEAN / sizeof *BOOLEAN; i++)
        if (op_is(op, BOOLEAN[i]))
            return DT_BOOL;
    return 0;
}

/* Operators whose output type is known from their inputs or attributes. */
static bool keeps_dtype(const Op *op)
{
    static const char *const SAME[] = {
        "Abs", "Add", "AveragePool", "BatchNormalization", "Ceil", "Clip", "Concat", "Conv",
        "ConvTranspose", "DepthToSpace", "Div", "Dropout", "Elu", "Exp", "Expand", "Flatten",
        "Floor", "Gather", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid",
        "Identity", "InstanceNormalization", "LRN", "LeakyRelu", "Log", "LogSoftmax",
        "MatMul", "Max", "MaxPool", "Mean", "Min", "Mul", "Neg", "PRelu", "Pad", "Pow",
        "Reciprocal", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu", "Reshape",
        "Resize", "Scatter", "ScatterElements", "ScatterND", "Selu", "Sigmoid", "Slice",
        "Softmax", "Softplus", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum",
        "Tanh", "Tile", "TopK", "Transpose", "Unsqueeze", "Upsample", "Where", "GatherElements",
        "GatherND", "Compress", "ReverseSequence", "Cast", "ArgMax", "ArgMin", "NonZero",
        "Shape", "Size", "And", "Equal", "Greater", "IsInf", "IsNaN", "Less", "Not", "Or",
        "Xor",
    };
    for (size_t i = 0; i < sizeof SAME / sizeof *SAME; i++)
        if (op_is(op, SAME[i]))
            return true;
    return false;
}

/* One step of value_dtype (see FactStep). */
static int32_t dtype_step(const Var *v, const Var **next)
{
    if (v->type.elem_type || v->param) {
        int32_t dt = v->type.elem_type ? v->type.elem_type : v->param->dtype;
        return dtype_is_known(dt) ? dt : 0;
    }
    const Op *p = v->producer;
    if (!p || !keeps_dtype(p))
        return 0;
    size_t from;
    int32_t fixed = fixed_output_dtype(p, v->producer_slot, &from);
    if (fixed)
        return dtype_is_known(fixed) ? fixed : 0;
    if (from >= p->n_inputs)
        return 0;
    *next = p->inputs[from];
    return 0;
}

int32_t value_dtype(const Var *v)
{
    return var_fact(v, FACT_DTYPE, dtype_step, 0);
}
