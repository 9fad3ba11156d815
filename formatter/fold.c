/* fold.c - pass "fold": a node whose inputs are all constants is evaluated
 * (the op registry's kernels, core/ops/eval.h) and its outputs become
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
 * than twice the size of its inputs and more than --fold-growth-limit (1 MiB):
 * those ops exist to make a large tensor from a small one at run time, and
 * folding a large one would grow the file and the memory a loader needs by
 * that tensor to save a cheap operation; a small one (an attention mask, an
 * anchor grid) lets the chain after it fold. Results of at least one writer chunk
 * are computed while written (core/ir/lazy.h) when their kernel can.
 *
 * Inexact results (core/ops/eval.h, Exactness: exp, softmax, sums in another
 * order...) are held back until the end of the sweep (FoldPending): an op
 * with a step (Floor, a comparison, ArgMax...) that one of them feeds
 * within a few ulps of that step declines, and then the inexact nodes
 * feeding it stay too, so that onnxruntime computes the value and its step
 * from its own roundings, as it would in the input model. Keeping only the
 * stepping op would not do: it would read fold's rounding, stored. The
 * others are folded at the end of the sweep (with every result after the
 * first held back, so that initializers keep the order of their nodes);
 * a stored value is what
 * onnxruntime reads, so a folded result is exact in later runs. */
#include <string.h>

#include "../core/ops/eval.h"
#include "../core/ops/ops_registry.h"
#include "params.h"
#include "passes.h"

enum {
    FOLD_DEFAULT_LIMIT = 64 << 20,
    FOLD_LAZY_FROM = 1 << 20, /* a writer chunk */
    FOLD_MAX_OUT = 64,
    FOLD_GROWTH = 2,      /* see the file comment */
    FOLD_GROWN_LIMIT = 1 << 20, /* results this small fold whatever their growth */
    FOLD_EXTERNAL_FROM = 1 << 10, /* --size-threshold's default */
};

static bool fold_excluded(const Op *op)
{
    static const char *const never[] = {
        "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
        "Multinomial", "Bernoulli", "QuantizeLinear", "DequantizeLinear",
        "DynamicQuantizeLinear", "Constant",
        /* kernels for the reference interpreter only (core/ops/eval_norm.c,
         * eval_resize.c) */
        "LayerNormalization", "InstanceNormalization", "GroupNormalization", "Resize", "Upsample",
        "GridSample", "AffineGrid", "DeformConv", /* core/ops/eval_grid.c */
        "DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix", /* eval_signal.c */
        "LpNormalization", "LRN", "MeanVarianceNormalization", /* eval_localnorm.c */
        "DepthToSpace", "SpaceToDepth", "CenterCropPad", "Col2Im", "MaxUnpool", /* eval_image.c */
        "RoiAlign", /* eval_roi.c */
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

/* A node with inexact results, not yet replaced by them (file comment). */
typedef struct FoldPending {
    Op *op;
    Tensor **outs;
    bool keep; /* an op with a step reads it near that step */
    struct FoldPending *next;
} FoldPending;

/* One sweep over a graph. */
typedef struct FoldRun {
    NameMap rewritten; /* names written by more than one node (fold_outputs_ok) */
    NameMap pending;   /* output name -> its FoldPending */
    FoldPending *first, **last;
    size_t n_pending;
    const PassOptions *opt; /* the limits (--fold-limit and the growth ones) */
} FoldRun;

/* v's held-back result, or NULL. */
static FoldPending *fold_pending_of(const FoldRun *run, const Var *v)
{
    FoldPending *p = v->producer ? namemap_get(&run->pending, v->name) : NULL;
    return p && p->op == v->producer ? p : NULL;
}

/* v's constant value, or NULL (see the file comment). */
static const Tensor *fold_constant(const FoldRun *run, const Var *v)
{
    FoldPending *p = v ? fold_pending_of(run, v) : NULL;
    if (p)
        return p->outs[v->producer_slot];
    if (!v || !v->param || v->param->sparse)
        return NULL;
    if (v->is_input && v->graph->model->ir_version >= 4)
        return NULL;
    return v->param;
}

/* Fills ins[] with op's constant inputs; false unless every present input is one. */
static bool fold_inputs(const FoldRun *run, const Op *op, const Tensor **ins, size_t *bytes)
{
    *bytes = 0;
    for (size_t i = 0; i < op->n_inputs; i++) {
        ins[i] = NULL;
        if (!op->inputs[i])
            continue;
        if (!(ins[i] = fold_constant(run, op->inputs[i])))
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


/* Marks the float results of a kernel inexact as its exactness says
 * (eval.h). Integer and bool results are exact: -1 when a kernel made them
 * from an inexact input without checking its steps (a kernel this policy
 * forgot declines rather than decides a step); else whether a result is
 * inexact. */
static int fold_mark_inexact(EvalCtx *c)
{
    bool from_inexact = eval_any_inexact(c), any = false;
    for (size_t i = 0; i < c->n_out; i++) {
        Tensor *t = c->out[i];
        if (t && !dtype_is_float(t->dtype) && from_inexact && c->exact != EVAL_CHECKED)
            return -1;
        if (t && dtype_is_float(t->dtype)) {
            t->inexact = c->exact == EVAL_ROUNDS || (c->exact == EVAL_KEEPS && from_inexact);
            any |= t->inexact;
        }
    }
    return any;
}

/* Evaluates op, whose inputs are ins (in_bytes in all), into outs:
 * EVAL_OK, EVAL_DECLINE (op stays; *step: an inexact input near a step) or
 * EVAL_OOM. *inexact: a result is inexact. */
static int fold_eval(const FoldRun *run, Op *op, OpEvalFn eval, const Tensor **ins,
                     size_t in_bytes, Tensor **outs, bool *step, bool *inexact)
{
    Model *m = op->graph->model;
    const PassOptions *o = run->opt;
    size_t limit = o->fold_limit ? o->fold_limit : FOLD_DEFAULT_LIMIT;
    size_t growth = o->fold_growth ? o->fold_growth : FOLD_GROWTH;
    size_t grown = in_bytes > SIZE_MAX / growth ? SIZE_MAX : in_bytes * growth;
    size_t small = o->fold_growth_limit ? o->fold_growth_limit : FOLD_GROWN_LIMIT;
    grown = grown > small ? grown : small;
    bool grows = fold_grows(op) && grown < limit;
    EvalCtx c = {op, model_domain_opset(m, ""), ins, op->n_inputs, outs, op->n_outputs,
                 &m->arena, m, grows ? grown : limit, FOLD_LAZY_FROM, NULL, EVAL_KEEPS,
                 EVAL_REFUSED_OTHER, EVAL_FOLD_MACS, true};
    int rc = eval(&c), marked = rc ? 0 : fold_mark_inexact(&c);
    if (marked < 0)
        rc = eval_decline_step(&c);
    *step = rc == EVAL_DECLINE && c.refused == EVAL_REFUSED_NEAR_STEP;
    *inexact = marked > 0;
    bool too_large = rc == EVAL_DECLINE && c.refused == EVAL_REFUSED_TOO_LARGE;
    if (too_large && grows)
        model_warn(m, op_label(op), "not folded: the result would be larger than "
                   "--fold-growth-limit (%zu bytes) and twice the size of its inputs", small);
    else if (too_large)
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
static bool fold_all_constant(const FoldRun *run, const Op *op)
{
    for (size_t i = 0; i < op->n_inputs; i++)
        if (op->inputs[i] && !fold_constant(run, op->inputs[i]))
            return false;
    return true;
}

/* op declined near a step: the held-back nodes its inputs come from, and
 * theirs, stay (file comment). A worklist, not recursion: a chain may be
 * as long as the graph. */
static int fold_keep_chain(FoldRun *run, Arena *a, const Op *op)
{
    const Op **work = arena_array(a, run->n_pending + 1, sizeof *work);
    size_t n = 0;
    if (!work)
        return -1;
    work[n++] = op;
    while (n) {
        const Op *o = work[--n];
        for (size_t i = 0; i < o->n_inputs; i++) {
            const Var *v = o->inputs[i];
            FoldPending *p = v ? fold_pending_of(run, v) : NULL;
            if (p && !p->keep && p->outs[v->producer_slot]->inexact) {
                p->keep = true;
                work[n++] = p->op;
            }
        }
    }
    return 0;
}

/* Holds op's inexact results back until the end of the sweep. */
static int fold_hold(FoldRun *run, Arena *a, Op *op, Tensor **outs)
{
    FoldPending *p = arena_alloc(a, sizeof *p);
    if (!p)
        return -1;
    *p = (FoldPending){op, outs, false, NULL};
    for (size_t i = 0; i < op->n_outputs; i++)
        if (op->outputs[i] && namemap_put(&run->pending, op->outputs[i]->name, p))
            return -1;
    *run->last = p;
    run->last = &p->next;
    run->n_pending++;
    return 0;
}

/* The end of a sweep: held-back results replace their nodes, except those
 * kept for an op with a step. A stored result is what onnxruntime will
 * read: exact from now on. */
static int fold_commit(FoldRun *run, Model *m)
{
    for (FoldPending *p = run->first; p; p = p->next) {
        const char *label = op_label(p->op);
        if (p->keep) {
            model_warn(m, label, "not folded: an op with a step reads its inexact result "
                       "near that step (onnxruntime computes both)");
            continue;
        }
        for (size_t i = 0; i < p->op->n_outputs; i++)
            if (p->outs[i])
                p->outs[i]->inexact = false;
        if (op_outputs_to_params(p->op, p->outs))
            return -1;
        model_note(m, "folded", label);
    }
    return 0;
}

static int fold_op(FoldRun *run, Op *op, Diag *d)
{
    Model *m = op->graph->model;
    if (!fold_outputs_ok(op, &run->rewritten))
        return 0;
    if (fold_excluded(op))
        return 0;
    if (!fold_all_constant(run, op))
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
    fold_inputs(run, op, ins, &in_bytes);
    Tensor **outs = arena_array(&m->arena, op->n_outputs, sizeof *outs);
    if (!outs)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
    memset(outs, 0, op->n_outputs * sizeof *outs);
    bool step, inexact;
    int rc = fold_eval(run, op, eval, ins, in_bytes, outs, &step, &inexact);
    const char *label = op_label(op);
    if (rc == EVAL_DECLINE)
        return step && fold_keep_chain(run, &m->arena, op)
                   ? diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold (node '%s')", label)
                   : 0;
    if (!rc)
        fold_keep_external(op, outs);
    if (!rc && (inexact || run->first)) /* after one, all: initializers stay in node order */
        rc = fold_hold(run, &m->arena, op, outs);
    else if (!rc && !(rc = op_outputs_to_params(op, outs)))
        model_note(m, "folded", label);
    if (rc)
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold (node '%s')", label);
    return 0;
}

/* The branch an If runs when its condition is a one-element bool constant
 * (*then: which one), else NULL. */
static Graph *fold_if_branch(const FoldRun *run, const Op *op, bool *then)
{
    const Tensor *c = op->n_inputs == 1 ? fold_constant(run, op->inputs[0]) : NULL;
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
static int fold_if(const FoldRun *run, Op *op, Diag *d)
{
    bool then = false;
    Graph *branch = fold_if_branch(run, op, &then);
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
static int fold_graph(FoldRun *run, Graph *g, bool params, Diag *d)
{
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (op->removed)
            continue;
        if (op_is(op, "If") ? fold_if(run, op, d) : params && fold_op(run, op, d))
            return d->code;
    }
    if (fold_commit(run, g->model))
        return diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
    return 0;
}

static int pass_fold(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    FoldRun run = {.opt = pc->opt};
    run.last = &run.first;
    int rc = 0;
    for (size_t i = 0; !rc && i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (v->shadowed && !v->removed && namemap_put(&run.rewritten, v->name, v))
            rc = diag_set(d, PPQ_EINTERNAL, "out of memory in pass fold");
    }
    if (!rc)
        rc = fold_graph(&run, g, graph_takes_new_params(g), d);
    namemap_free(&run.rewritten);
    namemap_free(&run.pending);
    return rc;
}

const Pass fold_pass = {
    .name = "fold",
    .help = "evaluate nodes whose inputs are all constants into initializers",
    .on_by_default = true,
    .run = pass_fold,
    .facts = FACTS_SETTLE,
    .acts_on = NULL,
};
