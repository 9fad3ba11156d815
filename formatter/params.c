/* params.c - helpers the fusion passes share: reading parameters, giving an
 * operation new parameter values without touching other users, per-channel
 * shapes, and the inference-form BatchNormalization factors. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

bool dtype_holds(int32_t dt, double v)
{
    /* From FLT_MAX plus half its ulp on, (float)v rounds to inf (and converting
     * it would be undefined behaviour): no float type holds it. */
    static const double FLOAT_INF_FROM = (double)FLT_MAX + 0x1p103;
    if (!isfinite(v) || dt == DT_DOUBLE || !dtype_is_float(dt))
        return isfinite(v);
    if (fabs(v) >= FLOAT_INF_FROM)
        return false;
    float f = (float)v; /* the conversion tensor_set_f64 makes */
    switch (dt) {
    case DT_FLOAT16: return (float_to_half(f) & 0x7c00) != 0x7c00;
    case DT_BFLOAT16: return (float_to_bfloat16(f) & 0x7f80) != 0x7f80;
    default: return true;
    }
}

bool factors_finite(const double *k, const double *s, int64_t channels)
{
    for (int64_t c = 0; c < channels; c++)
        if (!isfinite(k[c]) || !isfinite(s[c]))
            return false;
    return true;
}

bool param_overridable(const Var *v)
{
    return v->is_input && v->graph->model->ir_version >= 4;
}

const char *overridable_input(const Op *op, size_t first)
{
    for (size_t i = first; i < op->n_inputs; i++)
        if (op->inputs[i] && param_overridable(op->inputs[i]))
            return op->inputs[i]->name;
    return NULL;
}

const Tensor *param_numeric(const Var *v)
{
    /* Exporters alias parameters through Identity (torch does for equal
     * tensors) and pass identity runs last: look through them. */
    for (int depth = 0; v && !v->param && v->producer && depth < 64; depth++) {
        const Op *p = v->producer;
        if (!op_is(p, "Identity") || p->n_inputs != 1)
            break;
        v = p->inputs[0];
    }
    if (!v || !v->param || !tensor_has_bytes(v->param) || !dtype_size(v->param->dtype) ||
        v->param->dtype == DT_STRING || param_overridable(v))
        return NULL;
    return v->param;
}

bool sparse_input_blocks(Op *op, size_t first, const char *what)
{
    for (size_t s = first; s < op->n_inputs; s++) {
        const Var *v = op->inputs[s];
        if (v && v->param && v->param->sparse) {
            model_warn(op->graph->model, op_label(op), "%s: input '%s' is a sparse initializer "
                       "(kept sparse)", what, v->name);
            return true;
        }
    }
    return false;
}

bool default_input_blocks(Op *op, size_t first, const char *what)
{
    const char *fed = overridable_input(op, first);
    if (fed)
        model_warn(op->graph->model, op_label(op), "%s: '%s' is a graph input with a default, "
                   "which a caller may override", what, fed);
    return fed != NULL;
}

Var *match_other(const Op *op, const Var *x)
{
    if (!op || op->n_inputs != 2 || op->inputs[0] == op->inputs[1])
        return NULL;
    if (op->inputs[0] == x)
        return op->inputs[1];
    return op->inputs[1] == x ? op->inputs[0] : NULL;
}

bool operand_default_blocks(Op *lin, Op *next)
{
    const Var *other = lin->n_outputs == 1 ? match_other(next, lin->outputs[0]) : NULL;
    if (!other || !other->param)
        return false;
    if (overridable_input(lin, 1)) {
        /* the message is made only for the warning: this runs for every
         * candidate of a million-node graph */
        char what[64];
        snprintf(what, sizeof what, "the %s after it not folded in", next->type);
        return default_input_blocks(lin, 1, what);
    }
    return default_input_blocks(next, 0, "not folded");
}

bool op_is_quantized(const Op *op)
{
    static const char *const TYPES[] = {"QuantizeLinear", "DequantizeLinear", "ConvInteger",
                                        "MatMulInteger", "MatMulNBits", "DynamicQuantizeLinear"};
    for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
        if (strcmp(op->type, TYPES[i]) == 0)
            return true;
    return strncmp(op->type, "QLinear", 7) == 0;
}

bool param_read_by_quantized(const Var *v)
{
    for (size_t i = 0; i < v->n_uses; i++)
        if (op_is_quantized(v->uses[i].op))
            return true;
    return false;
}

bool op_is_linear(const Op *op)
{
    return op_is(op, "Conv") || op_is(op, "ConvTranspose") || op_is(op, "Gemm");
}

Op *sole_consumer(const Var *v)
{
    return v && v->n_uses == 1 && !v->n_output_lists ? v->uses[0].op : NULL;
}

int op_update_param(Op *op, size_t slot, Tensor *t, const char *base)
{
    Var *v = slot < op->n_inputs ? op->inputs[slot] : NULL;
    if (v && v->param && v->n_uses == 1 && !v->is_input && !v->n_output_lists) {
        param_set_value(v, t);
        return 0;
    }
    /* Shared, absent or an input: a new parameter leaves other readers alone. */
    Var *p = graph_new_param(op->graph, v ? v->name : base, t);
    if (!p)
        return -1;
    while (op->n_inputs < slot)
        if (op_append_input(op, NULL))
            return -1;
    if (slot == op->n_inputs)
        return op_append_input(op, p);
    op_set_input(op, slot, p);
    return 0;
}

bool bn_inference_form(const Op *bn)
{
    if (bn->n_inputs != 5 || !bn->n_outputs || !bn->outputs[0])
        return false;
    /* Up to opset 13 the number of outputs selects training mode. */
    for (size_t i = 1; i < bn->n_outputs; i++)
        if (bn->outputs[i])
            return false;
    /* Before opset 7, is_test (default 0, training) chose the mode. */
    int64_t is_test = op_attr_int(bn, "is_test", model_opset(bn->graph->model) < 7 ? 0 : 1);
    return op_attr_int(bn, "training_mode", 0) == 0 && is_test != 0 &&
           op_attr_int(bn, "spatial", 1) == 1;
}

int bn_factors(Arena *a, const Op *bn, int64_t channels, double **scale, double **shift)
{
    const Tensor *s = param_numeric(bn->inputs[1]), *b = param_numeric(bn->inputs[2]);
    const Tensor *mean = param_numeric(bn->inputs[3]), *var = param_numeric(bn->inputs[4]);
    if (!s || !b || !mean || !var || channels <= 0)
        return -1;
    const Tensor *all[] = {s, b, mean, var};
    for (size_t i = 0; i < 4; i++)
        if (tensor_numel(all[i]) != channels || !dtype_is_float(all[i]->dtype))
            return -1;
    double eps = op_attr_float(bn, "epsilon", 1e-5f);
    *scale = arena_array(a, (size_t)channels, sizeof **scale);
    *shift = arena_array(a, (size_t)channels, sizeof **shift);
    if (!*scale || !*shift)
        return -1;
    for (int64_t c = 0; c < channels; c++) {
        double k = tensor_get_f64(s, (size_t)c) / sqrt(tensor_get_f64(var, (size_t)c) + eps);
        (*scale)[c] = k;
        (*shift)[c] = tensor_get_f64(b, (size_t)c) - tensor_get_f64(mean, (size_t)c) * k;
    }
    return 0;
}

static const char *base_stem(const Op *op)
{
    return *op->name                          ? op->name
           : op->n_outputs && op->outputs[0] ? op->outputs[0]->name
                                              : op->type;
}

void param_base_name_prefetch(const Op *op, const char *suffix)
{
    /* joined by hand: snprintf's format parsing was most of this hint's
     * cost, paid twice for each of a million converted nodes */
    char buf[128];
    const char *stem = base_stem(op);
    size_t n = strlen(stem), k = strlen(suffix);
    if (n + k >= sizeof buf)
        return;
    memcpy(buf, stem, n);
    memcpy(buf + n, suffix, k + 1);
    graph_prefetch_name(op->graph, buf, true);
}

const char *param_base_name(const Op *op, const char *suffix)
{
    Arena *a = &op->graph->model->arena;
    const char *stem = base_stem(op);
    size_t n = strlen(stem) + strlen(suffix) + 1;
    char *s = arena_alloc(a, n);
    if (s) {
        strcpy(s, stem);
        strcat(s, suffix);
    }
    return s;
}

Var *new_float_param(Op *op, const char *suffix, int32_t dtype, const double *v, size_t n,
                     bool scalar)
{
    int64_t dims[1] = {(int64_t)n};
    Tensor *t = tensor_new(&op->graph->model->arena, dtype, scalar ? 0 : 1, dims);
    if (!t)
        return NULL;
    for (size_t i = 0; i < n; i++)
        tensor_set_f64(t, i, v[i]);
    return graph_new_param(op->graph, param_base_name(op, suffix), t);
}

Var *new_int64_param(Op *op, const char *suffix, const int64_t *v, size_t n)
{
    int64_t dims[1] = {(int64_t)n};
    Tensor *t = tensor_new(&op->graph->model->arena, DT_INT64, 1, dims);
    if (!t)
        return NULL;
    for (size_t i = 0; i < n; i++)
        tensor_set_i64(t, i, v[i]);
    return graph_new_param(op->graph, param_base_name(op, suffix), t);
}

bool readers_may_move_to(const Var *x)
{
    return !x->shadowed;
}

const char *kept_output_reason(OutputMoveRefusal why)
{
    switch (why) {
    case MOVE_X_IS_OUTPUT:
        return "its input is a graph output too";
    case MOVE_X_IS_INPUT:
        return "it copies a graph input to a graph output";
    case MOVE_X_IS_INITIALIZER:
        return "it copies an initializer to a graph output";
    case MOVE_X_OUTER_SCOPE:
    case MOVE_OK: /* (the output a graph input or initializer: refused at load) */
        break;
    }
    return "it copies an outer-scope value to a graph output";
}
