/* constant.c - pass "constant": Constant nodes become initializers.
 *
 * The value keeps the Constant's output name, so consumers, value_info and a
 * graph output of that name stay valid. Inside a subgraph the initializer
 * belongs to that subgraph. A tensor `value` is reused as it is (its bytes are
 * written unchanged, under the new name); the scalar and list forms become
 * float / int64 / string tensors as the ONNX spec defines them. */
#include <stdio.h>
#include <string.h>

#include "params.h"
#include "passes.h"

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

/* The Constant's value as a tensor, or NULL (with *why) when unsupported. */
static Tensor *constant_value(Arena *a, const Op *op, const char **why)
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

/* Names written by more than one node of g (every write but the last is
 * shadowed) into *names; they stay so when de-inplace did not run. -1 when
 * out of memory. */
static int constant_rewritten_names(const Graph *g, NameMap *names)
{
    for (size_t i = 0; i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (v->shadowed && !v->removed && namemap_put(names, v->name, v))
            return -1;
    }
    return 0;
}

/* A Constant whose output name another node writes too stays a node: an
 * initializer of that name would be written by that node as well, which no
 * model may do (ppqfmt itself refuses it). */
static bool constant_is_rewritten(Model *m, const NameMap *rewritten, const Op *op)
{
    if (!namemap_get(rewritten, op->outputs[0]->name))
        return false;
    model_warn(m, op_label(op), "kept Constant: another node writes '%s' too (not SSA; "
               "pass de-inplace renames such values)", op->outputs[0]->name);
    return true;
}

static int constants_to_params(Graph *g, const NameMap *rewritten, Diag *d)
{
    Model *m = g->model;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (!op_is(op, "Constant") || op->n_outputs != 1 || !op->outputs[0] || op->n_inputs ||
            constant_is_rewritten(m, rewritten, op))
            continue;
        const char *why;
        Tensor *t = constant_value(&m->arena, op, &why);
        if (!t) {
            model_warn(m, op_label(op), "kept Constant: %s", why);
            continue;
        }
        const char *label = op_label(op);
        if (!graph_takes_new_params(g)) {
            model_warn(m, label, "kept Constant: IR version %lld needs initializers to be "
                       "graph inputs, and a subgraph's inputs are fixed", (long long)m->ir_version);
            continue;
        }
        if (op->n_inputs || op->n_outputs != 1 || !op->outputs[0]) {
            model_warn(m, label, "kept Constant: it has inputs, or not one output");
            continue;
        }
        if (op_outputs_to_params(op, &t))
            return diag_set(d, PPQ_EINTERNAL, "out of memory in pass constant");
        model_note(m, "folded", label);
    }
    return 0;
}

static int pass_constant(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    NameMap rewritten = {0};
    int rc = constant_rewritten_names(g, &rewritten)
                 ? diag_set(d, PPQ_EINTERNAL, "out of memory in pass constant")
                 : constants_to_params(g, &rewritten, d);
    namemap_free(&rewritten);
    return rc;
}

const Pass constant_pass = {
    .name = "constant",
    .help = "turn Constant nodes into initializers",
    .on_by_default = true,
    .run = pass_constant,
    .facts = FACTS_NONE,
    .acts_on = (const char *const[]){"Constant", NULL},
};
