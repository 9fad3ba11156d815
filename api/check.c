/* check.c - ppqfmt --check (check.h). Inputs are drawn from a seeded
 * generator so that a reported mismatch can be run again: floats uniform in
 * [-1, 1), integers in [0, 4) (small enough to be valid indices and
 * counts), bools either way; a dimension the graph leaves dynamic (and
 * --input-shape did not fix) is CHECK_DEFAULT_DIM. The tolerance is the
 * project's: |out - ref| <= 1e-5 + 1e-3 * max|ref| per output, NaN equal
 * to NaN, same type and shape. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/ops/eval.h"
#include "../core/ops/eval_held.h"
#include "../core/ops/eval_run.h"
#include "../onnx/load.h"
#include "../onnx/path.h"
#include "check.h"
#include "check_inputs.h"

enum { CHECK_DEFAULT_DIM = 1 };

/* splitmix64: one state word, every seed a good one. */
static uint64_t check_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* The random draws of one check: the generator's state, and the run
 * (alternate runs give a one-element bool input true, then false, so that
 * with --check=2 or more an If on a graph input's flag runs both branches). */
typedef struct CheckDraw {
    uint64_t state;
    int run;
} CheckDraw;

/* What v is declared to hold: TYPE_TENSOR, or a sequence or optional kind. */
static const HeldDecl *check_held_decl(const Var *v)
{
    for (size_t i = 0; v->graph && i < v->graph->n_held; i++)
        if (v->graph->held[i].var == v)
            return &v->graph->held[i];
    return NULL;
}

static int check_kind(const Var *v)
{
    const HeldDecl *h = check_held_decl(v);
    return h ? h->kind : TYPE_TENSOR;
}

/* A random tensor of v's declared type; NULL when it has none the
 * interpreter handles (d says which) or out of memory. Sequences and
 * optionals are not drawn: their lengths and presence are the model's
 * business, so they must come from --check-inputs. */
static Tensor *check_random_input(Arena *a, const Var *v, CheckDraw *draw, Diag *d)
{
    int32_t dt = v->type.elem_type;
    if (check_kind(v) != TYPE_TENSOR) {
        diag_set(d, PPQ_ECHECK, "--check: graph input '%s' is a sequence or an optional: "
                 "--check draws no values for those (give them with --check-inputs)", v->name);
        return NULL;
    }
    if (dt == DT_STRING) {
        diag_set(d, PPQ_ECHECK, "--check: graph input '%s' holds strings: --check draws no "
                 "random strings (give them with --check-inputs)", v->name);
        return NULL;
    }
    bool typed = dt && (eval_dtype_ok(dt) || eval_lowp_type(dt));
    if (!typed || v->type.rank < 0 || v->type.rank > EVAL_MAX_RANK) {
        diag_set(d, PPQ_ECHECK, "--check: graph input '%s' has no tensor type and rank "
                 "--check can draw values for", v->name);
        return NULL;
    }
    int64_t dims[EVAL_MAX_RANK];
    for (int i = 0; i < v->type.rank; i++)
        dims[i] = v->type.dims[i] < 0 ? CHECK_DEFAULT_DIM : v->type.dims[i];
    Tensor *t = tensor_new_packed(a, dt, (size_t)v->type.rank, dims);
    if (!t) {
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    size_t size = dtype_size(dt), n = (size_t)tensor_numel(t);
    for (size_t k = 0; k < n; k++) {
        uint64_t r = check_next(&draw->state);
        EvalNum x;
        if (eval_elem_float(dt))
            x.f = (double)(r >> 11) * 0x1.0p-52 - 1.0;
        else if (dt == DT_BOOL)
            x.i = n == 1 ? draw->run % 2 == 0 : (int64_t)(r >> 62) & 1;
        else
            x.i = (int64_t)(r >> 62) & 3;
        if (eval_lowp_float(dt)) /* rounded to the type (a power of two for E8M0) */
            eval_lowp_put_float(dt, (uint8_t *)t->data, k, x.f, true, 2);
        else if (eval_lowp_type(dt))
            eval_lowp_put_int(dt, (uint8_t *)t->data, k, x.i);
        else
            eval_store(dt, (uint8_t *)t->data + k * size, x);
    }
    return t;
}

static void check_compare(const Tensor *ref, const Tensor *out, CheckError *e);

/* Sequences and optionals: the same kind and length (an empty optional
 * differs from a present one), then element by element. */
static void check_compare_held(const Tensor *ref, const Tensor *out, CheckError *e)
{
    const EvalHeld *r = eval_held(ref), *o = eval_held(out);
    if (ref->dtype != out->dtype || !r || !o || r->n != o->n) {
        e->differs = true;
        e->why = ref->dtype != out->dtype ? "one is a tensor, sequence or optional, the other not"
                 : ref->dtype == EVAL_DT_OPTIONAL ? "one optional is empty, the other not"
                                                  : "sequence lengths differ";
        return;
    }
    for (size_t i = 0; i < r->n; i++)
        check_compare(r->items[i], o->items[i], e);
}

/* String outputs agree only when every element is byte for byte the same. */
static bool check_strings_equal(const Tensor *ref, const Tensor *out)
{
    if (ref->n_strings != out->n_strings)
        return false;
    for (size_t k = 0; k < ref->n_strings; k++)
        if (ref->strings[k].len != out->strings[k].len ||
            (ref->strings[k].len &&
             memcmp(ref->strings[k].ptr, out->strings[k].ptr, ref->strings[k].len)))
            return false;
    return true;
}

static void check_compare(const Tensor *ref, const Tensor *out, CheckError *e)
{
    if (eval_held(ref) || eval_held(out)) {
        check_compare_held(ref, out, e);
        return;
    }
    if (ref->dtype != out->dtype || ref->ndims != out->ndims ||
        (ref->ndims && memcmp(ref->dims, out->dims, ref->ndims * sizeof *ref->dims))) {
        e->differs = true;
        e->why = ref->dtype != out->dtype ? "element type differs" : "shape differs";
        return;
    }
    if (ref->dtype == DT_STRING) {
        if (!check_strings_equal(ref, out)) {
            e->differs = true;
            e->why = "strings differ";
        }
        return;
    }
    if (!ref->data || !out->data || !(eval_dtype_ok(ref->dtype) || eval_lowp_type(ref->dtype))) {
        e->differs = true;
        e->why = "values not in memory or of a type --check does not compare";
        return;
    }
    size_t n = (size_t)tensor_numel(ref);
    bool fl = eval_elem_float(ref->dtype);
    double worst = 0, top = 0;
    for (size_t k = 0; k < n; k++) {
        EvalNum a = eval_elem(ref->dtype, ref->data, k), b = eval_elem(out->dtype, out->data, k);
        double x = fl ? a.f : (double)a.i, y = fl ? b.f : (double)b.i;
        if (isnan(x) || isnan(y)) {
            worst = isnan(x) && isnan(y) ? worst : INFINITY;
            continue;
        }
        double diff = x == y ? 0 : fabs(x - y); /* equal infinities differ by nothing */
        worst = diff > worst || isnan(diff) ? (isnan(diff) ? INFINITY : diff) : worst;
        top = isfinite(x) && fabs(x) > top ? fabs(x) : top; /* an infinity is no scale */
    }
    e->abs = worst > e->abs ? worst : e->abs;
    e->ref = top > e->ref ? top : e->ref;
    e->differs |= fl ? !(worst <= 1e-5 + 1e-3 * top) : worst != 0;
}

static size_t check_live_outputs(const Graph *g, const Var **vars)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (!g->outputs[i].removed && g->outputs[i].var && n < CHECK_MAX_OUTPUTS)
            vars[n++] = g->outputs[i].var;
    return n;
}

static int check_run_failed(int rc, const EvalRunError *err, const char *which, Diag *d)
{
    if (rc == EVAL_RUN_OOM)
        return diag_set(d, PPQ_EINTERNAL, "--check: out of memory");
    if (err->op)
        return diag_set(d, PPQ_ECHECK, "--check: cannot run the %s model: node '%s' (%s): %s",
                        which, op_label(err->op), err->op->type, err->why);
    return diag_set(d, PPQ_ECHECK, "--check: cannot run the %s model: %s", which, err->why);
}

/* Does the tensor of file path fit graph input v (type, rank, fixed dims)? */
static int check_given_fits(const Tensor *t, const Var *v, const char *path, Diag *d)
{
    int kind = check_kind(v);
    if ((kind != TYPE_TENSOR) != (eval_held(t) != NULL))
        return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' holds a %s, graph input '%s' is "
                        "declared %s", path, eval_value_kind(t), v->name,
                        kind == TYPE_TENSOR ? "a tensor" : "a sequence or an optional");
    if (eval_held(t)) { /* the elements' shapes are the kernels' to check */
        int32_t want = check_held_decl(v)->type.elem_type, got = eval_held(t)->elem_type;
        return !want || !got || want == got ? 0 : diag_set(
            d, PPQ_EINPUT, "--check-inputs: '%s' holds %s elements, graph input '%s' holds %s",
            path, dtype_name(got), v->name, dtype_name(want));
    }
    if (v->type.elem_type && t->dtype != v->type.elem_type)
        return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' holds %s, graph input '%s' is %s",
                        path, dtype_name(t->dtype), v->name, dtype_name(v->type.elem_type));
    bool fits = v->type.rank < 0 || (size_t)v->type.rank == t->ndims;
    for (size_t i = 0; fits && v->type.rank > 0 && i < t->ndims; i++)
        fits = v->type.dims[i] < 0 || v->type.dims[i] == t->dims[i];
    return fits ? 0 : diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' has a shape graph input "
                               "'%s' does not allow", path, v->name);
}

/* The files of a data set given to the input model's inputs: by the
 * TensorProto's name, else by position; an input no file names stays NULL.
 * paths (if not NULL) gets the file of each value. */
static int check_assign(const CheckData *data, const Var *const *vars, size_t nv,
                        Tensor **vals, const char **paths, Diag *d)
{
    for (size_t k = 0; k < data->n; k++) {
        const Tensor *t = data->t[k];
        size_t i = 0;
        while (i < nv && !(t->name[0] && strcmp(vars[i]->name, t->name) == 0))
            i++;
        if (i == nv && (k >= nv || t->name[0]))
            return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' %s%s%s matches no graph input "
                            "(the model has %zu)", data->path[k], t->name[0] ? "(named '" : "",
                            t->name, t->name[0] ? "')" : "", nv);
        i = i == nv ? k : i;
        if (vals[i])
            return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' gives graph input '%s' a "
                            "second value", data->path[k], vars[i]->name);
        int rc = check_given_fits(t, vars[i], data->path[k], d);
        if (rc)
            return rc;
        vals[i] = (Tensor *)t;
        if (paths)
            paths[i] = data->path[k];
    }
    return 0;
}

static size_t var_index(const Var *const *vars, size_t n, const char *name)
{
    size_t i = 0;
    while (i < n && strcmp(vars[i]->name, name) != 0)
        i++;
    return i;
}

/* The formatted model's input values: the data the user gave for the input
 * model's input of the same name (it must fit the formatted declaration too,
 * --input-shape's sizes), else drawn from that declaration. */
static int check_fmt_inputs(Arena *a, CheckDraw *draw, const Var *const *fvars, size_t nf,
                            const Var *const *rvars, Tensor *const *given, const char **paths,
                            size_t nr, Tensor **fvals, Diag *d)
{
    for (size_t j = 0; j < nf; j++) {
        size_t i = var_index(rvars, nr, fvars[j]->name);
        fvals[j] = i < nr ? given[i] : NULL;
        if (fvals[j] && check_given_fits(fvals[j], fvars[j], paths[i], d))
            return d->code;
        if (!fvals[j] && !(fvals[j] = check_random_input(a, fvars[j], draw, d)))
            return d->code;
    }
    return 0;
}

/* The input model's: given, else the formatted model's of the same name,
 * else drawn (an input the formatted model no longer has: --outputs). */
static int check_orig_inputs(Arena *a, CheckDraw *draw, const Var *const *rvars, size_t nr,
                             Tensor *const *given, const Var *const *fvars,
                             Tensor *const *fvals, size_t nf, const Tensor **rins, Diag *d)
{
    for (size_t i = 0; i < nr; i++) {
        size_t j = var_index(fvars, nf, rvars[i]->name);
        rins[i] = given[i] ? given[i] : j < nf ? fvals[j] : NULL;
        if (!rins[i] && !(rins[i] = check_random_input(a, rvars[i], draw, d)))
            return d->code;
    }
    return 0;
}

/* One run of both models on the same inputs (data's, where it gives them,
 * else random ones); errors into e. */
static int check_once(Model *orig, Model *fmt, Arena *a, CheckDraw *draw, const CheckData *data,
                      CheckError *e, Diag *d)
{
    const Var *fvars[CHECK_MAX_INPUTS], *ivars[CHECK_MAX_INPUTS], *outs[CHECK_MAX_OUTPUTS];
    Tensor *fvals[CHECK_MAX_INPUTS], *given[CHECK_MAX_INPUTS], *fres[CHECK_MAX_OUTPUTS],
        *rres[CHECK_MAX_OUTPUTS];
    const Tensor *rins[CHECK_MAX_INPUTS];
    const char *paths[CHECK_MAX_INPUTS];
    EvalRunError err;
    size_t nf = eval_run_inputs(fmt->graph, fvars, CHECK_MAX_INPUTS);
    size_t ni = eval_run_inputs(orig->graph, ivars, CHECK_MAX_INPUTS);
    if (nf > CHECK_MAX_INPUTS || ni > CHECK_MAX_INPUTS)
        return diag_set(d, PPQ_ECHECK, "--check: more than %d graph inputs", CHECK_MAX_INPUTS);
    memset(given, 0, sizeof given);
    if (data && check_assign(data, ivars, ni, given, paths, d))
        return d->code;
    int rc = check_fmt_inputs(a, draw, fvars, nf, ivars, given, paths, ni, fvals, d);
    if (!rc)
        rc = check_orig_inputs(a, draw, ivars, ni, given, fvars, fvals, nf, rins, d);
    if (rc)
        return rc;
    size_t no = check_live_outputs(fmt->graph, outs);
    const Var *rvars[CHECK_MAX_OUTPUTS];
    size_t nr = check_live_outputs(orig->graph, rvars);
    if ((rc = eval_run_graph(orig, a, rins, rres, &err)))
        return check_run_failed(rc, &err, "input", d);
    if ((rc = eval_run_graph(fmt, a, (const Tensor *const *)fvals, fres, &err)))
        return check_run_failed(rc, &err, "formatted", d);
    for (size_t k = 0; k < no; k++) {
        /* the input model's output of the same name, else at the same place */
        size_t j = var_index(rvars, nr, outs[k]->name);
        const Tensor *ref = j < nr ? rres[j] : k < nr ? rres[k] : NULL;
        if (!ref) {
            e[k].differs = true;
            e[k].why = "the input model has no such output";
        } else
            check_compare(ref, fres[k], &e[k]);
    }
    return 0;
}

/* Test-only (--check-expected, undocumented): the input model run on a data
 * set against its output_K.pb, matched by name, else by position: the ONNX
 * backend cases' expected outputs judge the kernels. */
static int check_expected(Model *m, Arena *a, CheckDraw *draw, const CheckData *data, Diag *d)
{
    const Var *vars[CHECK_MAX_INPUTS], *outs[CHECK_MAX_OUTPUTS];
    Tensor *vals[CHECK_MAX_INPUTS], *res[CHECK_MAX_OUTPUTS];
    EvalRunError err;
    size_t nv = eval_run_inputs(m->graph, vars, CHECK_MAX_INPUTS);
    if (nv > CHECK_MAX_INPUTS)
        return diag_set(d, PPQ_ECHECK, "--check: more than %d graph inputs", CHECK_MAX_INPUTS);
    memset(vals, 0, sizeof vals);
    if (check_assign(data, vars, nv, vals, NULL, d))
        return d->code;
    for (size_t i = 0; i < nv; i++)
        if (!vals[i] && !(vals[i] = check_random_input(a, vars[i], draw, d)))
            return d->code;
    int rc = eval_run_graph(m, a, (const Tensor *const *)vals, res, &err);
    if (rc)
        return check_run_failed(rc, &err, "input", d);
    size_t no = check_live_outputs(m->graph, outs);
    for (size_t k = 0; k < data->n_out; k++) {
        const Tensor *want = data->out[k];
        size_t i = var_index(outs, no, want->name);
        i = i < no ? i : k;
        if (i >= no)
            return diag_set(d, PPQ_EINPUT, "--check-expected: '%s' matches no graph output",
                            data->out_path[k]);
        CheckError e = {0};
        check_compare(want, res[i], &e);
        if (e.differs)
            return diag_set(d, PPQ_EMISMATCH, "--check-expected: output '%s' differs from '%s': "
                            "%s, max abs error %.3g, tolerance %.3g", outs[i]->name,
                            data->out_path[k], e.why ? e.why : "values", e.abs,
                            1e-5 + 1e-3 * e.ref);
    }
    return 0;
}

/* What the input model declares its value-taking inputs and live outputs
 * to be, in the files' order (check_inputs.h). */
static void check_kinds(const Graph *g, int *in, int *out, CheckKinds *k)
{
    const Var *vars[CHECK_MAX_INPUTS];
    size_t n = eval_run_inputs(g, vars, CHECK_MAX_INPUTS);
    k->n_in = n < CHECK_MAX_INPUTS ? n : CHECK_MAX_INPUTS;
    for (size_t i = 0; i < k->n_in; i++)
        in[i] = check_kind(vars[i]);
    const Var *outs[CHECK_MAX_OUTPUTS];
    k->n_out = check_live_outputs(g, outs);
    for (size_t i = 0; i < k->n_out; i++)
        out[i] = check_kind(outs[i]);
    k->in = in;
    k->out = out;
}

/* --check-inputs=dir: one run per data set; *runs counts them. */
static int check_given(Model *orig, Model *fmt, const char *dir, bool expected, CheckDraw *draw,
                       CheckError *e, int *runs, Diag *d)
{
    Arena sets_arena = {0}, a = {0};
    CheckDataSets sets;
    int in_kinds[CHECK_MAX_INPUTS], out_kinds[CHECK_MAX_OUTPUTS];
    CheckKinds kinds;
    check_kinds(orig->graph, in_kinds, out_kinds, &kinds);
    int rc = check_data_sets(dir, &sets_arena, &sets, d);
    for (size_t s = 0; !rc && s < sets.n; s++) {
        CheckData data;
        rc = check_data_read(sets.dirs[s], expected, &kinds, &a, &data, d);
        if (!rc && !data.n && eval_run_inputs(fmt->graph, NULL, 0))
            rc = diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' holds no input_0.pb or input_0.npy (nor "
                          "test_data_set_*/ folders)", sets.dirs[s]);
        if (!rc && expected)
            rc = check_expected(orig, &a, draw, &data, d);
        if (!rc && !(rc = check_once(orig, fmt, &a, draw, &data, e, d)))
            (*runs)++;
        arena_free(&a);
    }
    arena_free(&sets_arena);
    return rc;
}

/* Test-only (--check-break, undocumented): stands for a broken pass by
 * changing the formatted model's largest float weight, so that the tests
 * see --check catch it. */
static void check_break(Model *m)
{
    Var *best = NULL;
    for (size_t i = 0; i < m->graph->n_params; i++) {
        Var *v = m->graph->params[i];
        if (v->param && v->param->dtype == DT_FLOAT && v->param->data &&
            (!best || v->param->nbytes > best->param->nbytes))
            best = v;
    }
    if (!best)
        return;
    Tensor *t = tensor_new(&m->arena, DT_FLOAT, best->param->ndims, best->param->dims);
    if (!t)
        return;
    const unsigned char *src = best->param->data; /* mapped: may be unaligned */
    float *dst = (float *)t->data;
    for (size_t k = 0; k < t->nbytes / sizeof *dst; k++) {
        float x;
        memcpy(&x, src + k * sizeof x, sizeof x);
        dst[k] = x * (k % 2 ? 2.0f : -1.0f) + 0.25f;
    }
    best->param = t;
}

static void check_print(const Graph *g, const CheckError *e, size_t n, int runs)
{
    const Var *outs[CHECK_MAX_OUTPUTS];
    check_live_outputs(g, outs);
    for (size_t k = 0; k < n; k++)
        fprintf(stderr, "ppqfmt: check: output '%s': max abs error %.3g, max rel error %.3g "
                "(%d runs)\n", outs[k]->name, e[k].abs, e[k].ref > 0 ? e[k].abs / e[k].ref : e[k].abs,
                runs);
}

static int check_verdict(const Graph *g, const CheckError *e, size_t n, const Options *o,
                         Diag *d)
{
    const Var *outs[CHECK_MAX_OUTPUTS];
    check_live_outputs(g, outs);
    for (size_t k = 0; k < n; k++) {
        if (!e[k].differs)
            continue;
        if (e[k].why)
            return diag_set(d, PPQ_EMISMATCH, "--check: output '%s' differs: %s%s", outs[k]->name,
                            e[k].why, options_output(o) ? " (the output file is kept)" : "");
        return diag_set(d, PPQ_EMISMATCH, "--check: output '%s' differs: max abs error %.3g over "
                        "tolerance %.3g (seed %llu)%s", outs[k]->name, e[k].abs,
                        1e-5 + 1e-3 * e[k].ref, (unsigned long long)o->check_seed,
                        options_output(o) ? " (the output file is kept)" : "");
    }
    return 0;
}

int check_model(Model *formatted, const Source *src, const Options *o, CheckResult *res,
                Diag *d)
{
    char dir[4096];
    Model *orig = NULL;
    const char *in_dir = o->input && strcmp(o->input, "-")
                             ? (path_folder(o->input, dir, sizeof dir), dir) : NULL;
    int rc = onnx_load(src->bytes, in_dir, &orig, d);
    if (rc)
        return rc;
    if (o->check_break)
        check_break(formatted);
    memset(res, 0, sizeof *res);
    CheckError *e = res->e;
    CheckDraw draw = {o->check_seed, 0};
    int runs = o->check_inputs ? 0 : o->check_runs;
    rc = o->check_inputs ? check_given(orig, formatted, o->check_inputs, o->check_expected, &draw,
                                       e, &runs, d) : 0;
    Arena a = {0};
    for (int r = 0; !o->check_inputs && r < o->check_runs && !rc; r++) {
        draw.run = r;
        rc = check_once(orig, formatted, &a, &draw, NULL, e, d);
        arena_free(&a);
    }
    const Var *outs[CHECK_MAX_OUTPUTS];
    size_t n = check_live_outputs(formatted->graph, outs);
    res->done = !rc;
    res->runs = runs;
    res->seed = o->check_seed;
    res->n = n;
    for (size_t k = 0; k < n; k++)
        res->names[k] = outs[k]->name;
    if (!rc && o->verbosity >= 0 && o->report != REPORT_JSON) /* stderr stays one JSON document */
        check_print(formatted->graph, e, n, runs);
    if (!rc)
        rc = check_verdict(formatted->graph, e, n, o, d);
    model_free(orig);
    return rc;
}
