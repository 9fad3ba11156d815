/* graph_const.c - a Constant node's value as a tensor, from whichever of
 * its attribute forms it uses: the formatter's constant pass turns it into an
 * initializer, the interpreter runs it. The scalar and list forms become
 * float / int64 / string tensors as the ONNX spec defines them. */
#include "graph.h"

#include <stdio.h>
#include <string.h>

static Tensor *scalar_or_list(Arena *a, int32_t dtype, const Attr *at, bool list)
{
    int64_t n = list ? (int64_t)at->n : 1;
    if (dtype == DT_STRING)
        return tensor_new_strings(a, list, &n, list ? at->strings : (Bytes *)&at->s, (size_t)n);
    Tensor *t = tensor_new(a, dtype, list, &n);
    if (!t)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        if (dtype == DT_INT64)
            tensor_set_i64(t, (size_t)i, list ? at->ints[i] : at->i);
        else
            tensor_set_f64(t, (size_t)i, list ? at->floats[i] : at->f);
    }
    return t;
}

/* Why a Constant with several attributes is invalid, naming them. */
static const char *several_attrs(Arena *a, const Op *op)
{
    static const char head[] = "it has %zu attributes (", tail[] = "); a Constant takes "
                               "exactly one of value, value_* or sparse_value";
    size_t n = sizeof head + sizeof tail + 24;
    for (size_t i = 0; i < op->n_attrs; i++)
        n += strlen(op->attrs[i].name) + 2;
    char *s = arena_alloc(a, n);
    if (!s)
        return "it has several attributes; a Constant takes exactly one";
    size_t len = (size_t)snprintf(s, n, head, (size_t)op->n_attrs);
    for (size_t i = 0; i < op->n_attrs; i++)
        len += (size_t)snprintf(s + len, n - len, "%s%s", i ? ", " : "", op->attrs[i].name);
    snprintf(s + len, n - len, "%s", tail);
    return s;
}

Tensor *op_constant_value(Arena *a, const Op *op, const char **why)
{
    static const struct {
        const char *name;
        int32_t dtype;
        bool list;
    } FORMS[] = {
        {"value_float", DT_FLOAT, false},   {"value_floats", DT_FLOAT, true},
        {"value_int", DT_INT64, false},     {"value_ints", DT_INT64, true},
        {"value_string", DT_STRING, false}, {"value_strings", DT_STRING, true},
    };
    *why = op->n_attrs > 1 ? several_attrs(a, op) : "it has no value attribute";
    if (op->n_attrs != 1)
        return NULL;
    const Attr *at = &op->attrs[0];
    if (strcmp(at->name, "value") == 0 && at->type == ATTR_TENSOR && at->n == 1)
        return at->tensors[0];
    if (strcmp(at->name, "sparse_value") == 0) {
        *why = "sparse_value constants are not supported";
        return NULL;
    }
    for (size_t i = 0; i < sizeof FORMS / sizeof *FORMS; i++)
        if (strcmp(at->name, FORMS[i].name) == 0)
            return scalar_or_list(a, FORMS[i].dtype, at, FORMS[i].list);
    return NULL;
}
