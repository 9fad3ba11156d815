/* infer_shapes.c - pass "infer-shapes": every value a node computes gets a
 * value_info entry with the element type and shape that inference found.
 * Symbolic dims are written as dim_param: the model's own names (batch),
 * expressions of them (2*seq, (seq+1)/2), or unk_<node>_<i> for a size
 * known only at run time; the next run reads them back as the same dims.
 *
 * An entry that already says the same is left byte for byte, so formatting
 * twice changes nothing; one that says less or is stale is rewritten, its
 * other fields kept. Graph inputs and outputs keep their declared types:
 * they are the model's interface (once --input-shape changed the inputs, an
 * output dim inference proves a number is declared as that number). Values inference knows nothing about
 * (the outputs of an op with no rule) keep whatever entry they have. A
 * declaration inference contradicts, and each op type with no rule, is a
 * warning. Runs last, on facts of the final graph (FACTS_FRESH). */
#include <string.h>

#include "params.h"
#include "passes.h"

static bool same_param(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Does the declared type t say what fact f says? Compared before building
 * f's TypeInfo: a second run over a formatted model finds every entry
 * right, and building each again would only fill the arena. */
static bool type_says(const DimTable *dt, const InferFact *f, const TypeInfo *t)
{
    if (f->dtype != t->elem_type || f->rank != t->rank)
        return false;
    for (int i = 0; i < f->rank; i++) {
        bool known = dim_known(f->dims[i]);
        char buf[256];
        const char *param = known ? NULL : dim_param_text(dt, f->dims[i], buf, sizeof buf);
        if (t->dims[i] != (known ? dim_value(f->dims[i]) : -1) ||
            !same_param(param, t->dim_params ? t->dim_params[i] : NULL))
            return false;
    }
    return true;
}

/* Whether infer-shapes may declare v: a value a node of its graph computes,
 * under a name that means only it (not shadowed: every other live value is
 * what its graph finds by its name, as graph_verify checks), with no entry of
 * a kind other than a tensor type (a sequence, an optional: TypeInfo does
 * not hold those). */
static bool declarable(const Graph *g, const Var *v)
{
    if (!v || v->removed || v->shadowed || v->n_output_lists || v->is_input || v->param ||
        v->graph != g)
        return false;
    bool declared = v->value_info_at || v->value_info_dup;
    return !declared || v->type.elem_type;
}

static int declare_value(Graph *g, Var *v)
{
    const InferFact *f = value_fact(v);
    if (!f || !f->dtype || !declarable(g, v))
        return 0;
    Model *m = g->model;
    const DimTable *dt = infer_dims(m->facts);
    if ((v->value_info_at || v->value_info_dup) && type_says(dt, f, &v->type))
        return 0;
    TypeInfo t;
    if (value_type_from_fact(&m->arena, dt, f, &t) || graph_set_value_type(v, t))
        return -1;
    model_note_var(m, "typed", v);
    return 0;
}

/* Does the declared type t leave open a dim that fact f knows, without
 * contradicting f anywhere? */
static bool fact_refines(const InferFact *f, const TypeInfo *t)
{
    if (f->rank < 0 || t->rank != f->rank || !t->elem_type || t->elem_type != f->dtype)
        return false;
    bool more = false;
    for (int i = 0; i < t->rank; i++) {
        bool known = dim_known(f->dims[i]);
        if (t->dims[i] >= 0 && known && t->dims[i] != dim_value(f->dims[i]))
            return false;
        more |= t->dims[i] < 0 && known;
    }
    return more;
}

/* Graph output k declared with the numbers inference proved for its open
 * dims; its other dims (and their names) as they were. */
static int refine_output(Graph *g, size_t k)
{
    Var *v = g->outputs[k].var;
    const InferFact *f = v && !g->outputs[k].removed ? value_fact(v) : NULL;
    if (!f || !fact_refines(f, &v->type))
        return 0;
    size_t n = (size_t)f->rank;
    TypeInfo t = v->type;
    Arena *a = &g->model->arena;
    if (!(t.dims = arena_array(a, n, sizeof *t.dims)) ||
        (t.dim_params && !(t.dim_params = arena_array(a, n, sizeof *t.dim_params))))
        return -1;
    for (size_t i = 0; i < n; i++) {
        bool fill = v->type.dims[i] < 0 && dim_known(f->dims[i]);
        t.dims[i] = fill ? dim_value(f->dims[i]) : v->type.dims[i];
        if (t.dim_params)
            t.dim_params[i] = fill ? NULL : v->type.dim_params[i];
    }
    graph_retype_output(g, k, t);
    model_note_var(g->model, "typed", v);
    return 0;
}

/* --input-shape changed the model's interface: its outputs then say what
 * inference proves of them (a dim the export named, now a known number);
 * otherwise the outputs are the model's interface and stay as declared. */
static int refine_outputs(Graph *g)
{
    bool inputs_fixed = false;
    for (size_t i = 0; i < g->n_inputs; i++)
        inputs_fixed |= g->inputs[i].retyped;
    for (size_t k = 0; inputs_fixed && k < g->n_outputs; k++)
        if (refine_output(g, k))
            return -1;
    return 0;
}

/* Conflicts and ops with no rule, once for the model (from the main graph,
 * which the driver visits last). */
static void warn_model(Model *m)
{
    size_t n;
    const InferIssue *is = infer_issues(m->facts, &n);
    for (size_t i = 0; i < n; i++)
        model_warn(m, is[i].subject, "shape inference: %s", is[i].detail);
    const char *const *unknown = infer_unknown_ops(m->facts, &n);
    for (size_t i = 0; i < n; i++)
        model_warn(m, unknown[i], "no shape inference rule for this op type: its outputs are left "
                                  "untyped");
}

static int pass_infer_shapes(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    Model *m = g->model;
    if (!m->facts)
        return 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        for (size_t k = 0; !op->removed && k < op->n_outputs; k++)
            if (declare_value(g, op->outputs[k]))
                return diag_set(d, PPQ_EINTERNAL, "out of memory");
    }
    if (!g->parent && refine_outputs(g))
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    if (!g->parent)
        warn_model(m);
    return 0;
}

const Pass infer_shapes_pass = {
    .name = "infer-shapes",
    .help = "write the element type and shape of every intermediate value (value_info)",
    .on_by_default = true,
    .run = pass_infer_shapes,
    .facts = FACTS_FRESH,
    .acts_on = NULL,
};
