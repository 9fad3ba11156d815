/* fold.c - pass "fold": a node whose inputs are all constants is evaluated
 * (the op registry's kernels, core/eval.h) and its outputs become
 * initializers of the same names, so consumers, value_info and graph outputs
 * stay valid. Nodes are visited in graph order, so a chain of constant
 * nodes folds in one run; inside If/Loop/Scan bodies an initializer of an
 * enclosing graph counts as a constant.
 *
 * A constant is an initializer that is not also a graph input: from IR
 * version 4 on, an initializer listed as an input is only a default the
 * caller may override. Under IR < 4 every initializer is an input, and
 * counts as a constant (as onnx-simplifier and onnxruntime treat them).
 * Shape and Size of any value whose shape shape inference knows statically
 * (declared inputs, --input-shape) become constants too; Shape with
 * start/end needs only the dims it reads. So does any other node whose
 * integer outputs inference computed in full from the known part of a
 * shape (Gather or Slice of the static dims of a partly dynamic Shape, the
 * arithmetic on them): what inference proved is as good as a constant.
 * An If whose condition is a constant (one bool element) is replaced by the
 * nodes of the branch it chooses (fold_if).
 *
 * Never folded: random operations (their outputs differ from run to run),
 * QuantizeLinear/DequantizeLinear (quantizers look for them), results over
 * --fold-limit, and an Expand, Tile or ConstantOfShape whose result is more
 * than twice the size of its inputs (and more than 1 KiB): those ops exist
 * to make a large tensor from a small one at run time, and folding them
 * would grow the file and the memory a loader needs by that tensor to save
 * a cheap operation. Results of at least one writer chunk
 * are computed while written (core/lazy.h) when their kernel can. */
#include <string.h>

#include "../core/eval.h"
#include "../core/ops_registry.h"
#include "params.h"
#include "passes.h"

enum {
    FOLD_DEFAULT_LIMIT = 64 << 20,
    FOLD_LAZY_FROM = 1 << 20, /* a writer chunk */
    FOLD_MAX_OUT = 64,
    FOLD_GROWTH = 2,      /* see the file comment */
    FOLD_SMALL = 1 << 10, /* results this small fold whatever their growth */
    FOLD_EXTERNAL_FROM = 1 << 10, /* --size-threshold's default */
};

static bool fold_excluded(const Op *op)
{
    static const char *const never[] = {
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Multinomial", "Bernoulli", "QuantizeLinear", "DequantizeLinear",
        "DynamicQuantizeLinear", "Constant",
    };
    for (size_t i = 0; i < sizeof never / sizeof *never; i++)
        if (op_is(op, never[i]))
            return true;
    return (op->domain && *op->domain) || op->n_outputs > FOLD_MAX_OUT;
}

/* Ops that make a large tensor from a small one. */
static bool fold_grows(const Op *op)
{
    return op_is(op, "Expand") || op_is(op, "Tile") || op_is(op, "ConstantOfShape");
}

/* v's constant value, or NULL (see the file comment). */
static const Tensor *fold_constant(const Var *v)
{
    if (!v || !v->param || v->param->sparse)
        return NULL;
    if (v->is_input && v->graph->model->ir_version >= 4)
        return NULL;
    return v->param;
}

/* Fills ins[] with op's constant inputs; false unless every present input is one. */
static bool fold_inputs(const Op *op, const Tensor **ins, size_t *bytes)
{
    *bytes = 0;
    for (size_t i = 0; i < op->n_inputs; i++) {
        ins[i] = NULL;
        if (!op->inputs[i])
            continue;
        if (!(ins[i] = fold_constant(op->inputs[i])))
            return false;
        *bytes += ins[i]->nbytes;
    }
    return true;
}

/* Outputs that are graph inputs or whose name another node writes stay:
 * rewritten holds the names written by more than one node of the graph (a
 * model that is not SSA, de-inplace off), and an initializer of such a name
 * would be written by the other node too, which no model may do (as in
 * pass constant). */
static bool fold_outputs_ok(const Op *op, const NameMap *rewritten)
{
    for (size_t i = 0; i < op->n_outputs; i++) {
        const Var *v = op->outputs[i];
        if (v && (v->is_input || v->shadowed || v->param ||
                  namemap_get(rewritten, v->name)))
            return false;
    }
    return op->n_outputs > 0;
}

static size_t fold_limit(const Model *m)
{
    return m->fold_limit ? m->fold_limit : FOLD_DEFAULT_LIMIT;
}

/* Evaluates op, whose inputs are ins (in_bytes in all), into outs:
 * EVAL_OK, EVAL_DECLINE (op stays) or EVAL_OOM. */
static int fold_eval(Op *op, OpEvalFn eval, const Tensor **ins, size_t in_bytes, Tensor **outs)
{
    Model *m = op->graph->model;
    size_t limit = fold_limit(m), growth = m->fold_growth ? m->fold_growth : FOLD_GROWTH;
    size_t grown = in_bytes > SIZE_MAX / growth ? SIZE_MAX : in_bytes * growth;
    grown = grown > FOLD_SMALL ? grown : FOLD_SMALL;
    bool grows = fold_grows(op) && grown < limit;
    EvalCtx c = {op, model_domain_opset(m, ""), ins, op->n_inputs, outs, op->n_outputs,
                 &m->arena, m, grows ? grown : limit, FOLD_LAZY_FROM, NULL};
    int rc = eval(&c);
    if (rc == EVAL_DECLINE && grows && c.why && strstr(c.why, "fold limit"))
        model_warn(m, op_label(op), "not folded: the result would be more than twice the "
                   "size of its inputs");
    else if (rc == EVAL_DECLINE && c.why && strstr(c.why, "fold limit"))
        model_warn(m, op_label(op), "not folded: the result is larger than --fold-limit "
                   "(%zu bytes)", limit);
    else if (rc == EVAL_DECLINE)
        model_warn(m, op_label(op), "not folded: %s", c.why ? c.why : "unsupported");
    for (size_t i = 0; !rc && i < op->n_outputs; i++)
        if (op->outputs[i] && !outs[i])
            rc = EVAL_DECLINE; /* a kernel that leaves an output unset declines */
    return rc;
}

/* Results computed from external data stay external, as fuse-bn's weights
 * do: such a model keeps its weights out of the 2 GiB protobuf. Small
 * results (shapes, scalars) go inline. */
static void fold_keep_external(const Op *op, Tensor **outs)
{
    bool external = false;
    for (size_t i = 0; i < op->n_inputs; i++)
        external |= op->inputs[i] && op->inputs[i]->param && op->inputs[i]->param->external;
    for (size_t i = 0; external && i < op->n_outputs; i++)
        if (outs[i] && outs[i]->nbytes >= FOLD_EXTERNAL_FROM)
            outs[i]->external = true;
}

/* v's fact when inference computed its contents in full: every dim and
 * every element a known constant of an integer type; else NULL. */
static const InferFact *fold_known_fact(const Var *v)
{
    const InferFact *f = value_fact(v);
    if (!f || !f->value || !facts_dtype_is_int(f->dtype) || f->rank < 0 || f->rank > 1)
        return NULL;
    if (f->rank && (!dim_is_const(f->dims[0]) || (size_t)dim_value(f->dims[0]) != f->n_value))
        return NULL;
    for (size_t i = 0; i < f->n_value; i++)
        if (!f->value[i] || !dim_is_const(f->value[i]))
            return NULL;
    return f;
}

static Tensor *fold_known_tensor(Arena *a, const InferFact *f)
{
    int64_t n = (int64_t)f->n_value;
    Tensor *t = tensor_new(a, f->dtype, (size_t)f->rank, &n);
    for (size_t i = 0; t && i < f->n_value; i++)
        tensor_set_i64(t, i, dim_value(f->value[i]));
    return t;
}

/* A node that reads a dynamic value but whose every output inference knows
 * element by element (see the file comment): Shape and Size of a static
 * value, and what is computed from the static part of a shape. Nodes with
 * subgraphs stay: a body is not evaluated here. */
static int fold_known(Op *op, Diag *d)
{
    Model *m = op->graph->model;
    if (op_subgraph(op, 0))
        return 0;
    for (size_t i = 0; i < op->n_outputs; i++)
        if (op->outputs[i] && !fold_known_fact(op->outputs[i]))
            return 0;
    Tensor **outs = arena_array(&m->arena, op->n_outputs, sizeof *outs);
    bool oom = !outs;
    for (size_t i = 0; !oom && i < op->n_outputs; i++) {
        const Var *v = op->outputs[i];
        outs[i] = v ? fold_known_tensor(&m->arena, value_fact(v)) : NULL;
        oom = v && !outs[i];
    }
    if (oom || op_outputs_to_params(op, outs))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold (node '%s')", op_label(op));
    model_note(m, "folded static shape", op_label(op));
    return 0;
}

/* True when every present input of op is a constant. */
static bool fold_all_constant(const Op *op)
{
    for (size_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] && !fold_constant(op->inputs[i]))
            return false;
    return true;
}

static int fold_op(Op *op, const NameMap *rewritten, Diag *d)
{
    Model *m = op->graph->model;
    if (!fold_outputs_ok(op, rewritten))
        return 0;
    if (fold_excluded(op))
        return 0;
    if (!fold_all_constant(op))
        return fold_known(op, d);
    OpEvalFn eval = ops_kernel("", op->type, model_domain_opset(m, ""), op->n_inputs,
                               op->n_outputs);
    const Tensor **ins = eval ? arena_array(&m->arena, op->n_inputs ? op->n_inputs : 1,
                                            sizeof *ins) : NULL;
    size_t in_bytes;
    if (!eval)
        return 0;
    if (!ins)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
    fold_inputs(op, ins, &in_bytes);
    Tensor **outs = arena_array(&m->arena, op->n_outputs, sizeof *outs);
    if (!outs)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
    memset(outs, 0, op->n_outputs * sizeof *outs);
    int rc = fold_eval(op, eval, ins, in_bytes, outs);
    if (rc == EVAL_DECLINE)
        return 0;
    const char *label = op_label(op);
    if (!rc)
        fold_keep_external(op, outs);
    if (rc || op_outputs_to_params(op, outs))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold (node '%s')", label);
    model_note(m, "folded", label);
    return 0;
}

/* The branch an If runs when its condition is a one-element bool constant
 * (*then: which one), else NULL. */
static Graph *fold_if_branch(const Op *op, bool *then)
{
    const Tensor *c = op->n_inputs == 1 ? fold_constant(op->inputs[0]) : NULL;
    if (!c || c->dtype != DT_BOOL || tensor_numel(c) != 1 || !tensor_has_bytes(c))
        return NULL;
    *then = tensor_get_f64(c, 0) != 0;
    const Attr *a = op_attr(op, *then ? "then_branch" : "else_branch");
    return a && a->type == ATTR_GRAPH && a->graphs && a->n == 1 ? a->graphs[0] : NULL;
}

/* An If whose condition is constant computes its chosen branch: the
 * branch's nodes take its place (graph_inline_subgraph). The rule is fold's
 * and not eliminate-noops': fold runs again at once, on fresh facts, while
 * it changes anything (FACTS_SETTLE), so the inlined nodes whose inputs are
 * constants, or whose shapes inference now sees without the If between
 * them and their readers, fold in the same round. */
static int fold_if(Op *op, Diag *d)
{
    bool then = false;
    Graph *branch = fold_if_branch(op, &then);
    if (!branch)
        return 0;
    Model *m = op->graph->model;
    const char *label = op_label(op), *why = NULL;
    if (!graph_inline_subgraph(branch, &why))
        model_note(m, then ? "inlined then branch" : "inlined else branch", label);
    else if (m->oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold (node '%s')", label);
    else
        model_warn(m, label, "kept If: %s", why);
    return 0;
}

/* params: whether g takes new parameters (folded results); an If is
 * inlined either way, as long as its branch brings none. */
static int fold_graph(Graph *g, const NameMap *rewritten, bool params, Diag *d)
{
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (op->removed)
            continue;
        if (op_is(op, "If") ? fold_if(op, d) : params && fold_op(op, rewritten, d))
            return d->code;
    }
    return 0;
}

int pass_fold(Graph *g, Diag *d)
{
    NameMap rewritten = {0};
    for (size_t i = 0; i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (v->shadowed && !v->removed && namemap_put(&rewritten, v->name, v)) {
            namemap_free(&rewritten);
            return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
        }
    }
    int rc = fold_graph(g, &rewritten, graph_takes_new_params(g), d);
    namemap_free(&rewritten);
    return rc;
}
