/* run.c - format one model: read it, run the enabled passes, write it.
 *
 * What the command line (cli/main.c) and the library (ppqfmt.c) both do. The
 * report and warnings go to the caller's FILE; --print goes to stdout; the
 * model goes to the output path or, for the library, into memory. Errors come
 * back in a Diag whose code is the exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/ir/mapping.h"
#include "../formatter/cut.h"
#include "../formatter/opset.h"
#include "../formatter/pass.h"
#include "../onnx/load.h"
#include "../onnx/load_check.h"
#include "../onnx/path.h"
#include "../onnx/write.h"
#include "check.h"
#include "report.h"
#include "run.h"
#include "term.h"

/* The folder external data is relative to; NULL for standard input. */
static const char *input_dir(const char *input, char *buf, size_t size)
{
    if (strcmp(input, "-") == 0)
        return NULL;
    path_folder(input, buf, size);
    return buf;
}

/* A node output of g that has no element type after the passes, or NULL. */
static const Var *untyped_value(const Graph *g)
{
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t j = 0; j < g->ops[i]->n_outputs; j++) {
            const Var *v = g->ops[i]->outputs[j];
            if (v && !v->param && !v->type.elem_type)
                return v;
        }
    return NULL;
}

/* --mark-preprocessed: onnxruntime's quantize_static warns unless the model
 * carries quant_pre_process's tag. The passes stand for its steps (the
 * options checked they ran); the tag also promises a type for every value
 * the quantizer may read, which inference may not have found. */
static void mark_preprocessed(Model *m)
{
    const Var *v = untyped_value(m->graph);
    if (v)
        model_warn(m, v->name, "--mark-preprocessed: not marked, shape inference found no type "
                   "for this value (output of node '%s')", op_label(v->producer));
    else
        model_set_metadata(m, "onnx.quant.pre_process", "onnxruntime.quant");
}

static int run_passes(Model *m, const Options *o, RunStats *st, Diag *d)
{
    PipelineHooks hooks = report_pipeline_hooks(st);
    PipelineOptions po = {o->enabled, o->verify_ir, &hooks,
                          {o->fold_limit, o->fold_growth, o->fold_growth_limit, o->target_opset}};
    int rc = input_shape_apply(m, o->input_shapes, o->n_input_shapes, d);
    if (!rc && (o->cut_inputs.n || o->cut_outputs.n))
        rc = model_cut(m, o->cut_inputs.names, o->cut_inputs.n, o->cut_outputs.names,
                       o->cut_outputs.n, d);
    /* The passes then see the raised model: the legacy-form passes find
     * nothing left to raise, and opset-gated passes see the new opset. */
    if (!rc && o->target_opset)
        rc = opset_raise_to(m, o->target_opset, d);
    if (!rc)
        rc = pass_pipeline(m, &po, NULL, d);
    if (!rc && (o->cut_inputs.n || o->cut_outputs.n))
        model_cut_finish(m, o->cut_inputs.names, o->cut_inputs.n);
    if (!rc && o->mark_preprocessed)
        mark_preprocessed(m);
    if (!rc && o->rewrite)
        model_rewrite_all(m); /* --rewrite */
    return rc;
}

/* Puts the input's name before the message in d. */
static void name_input(Diag *d, const char *input)
{
    const char *name = strcmp(input, "-") ? input : "standard input";
    size_t len = strlen(name);
    if (len + 3 >= sizeof d->msg)
        return;
    memmove(d->msg + len + 2, d->msg, sizeof d->msg - len - 3); /* cut the end if need be */
    d->msg[sizeof d->msg - 1] = '\0';
    memcpy(d->msg, name, len);
    memcpy(d->msg + len, ": ", 2);
}

/* Nothing will change the model or look at its graph: no pass, no --print,
 * --rewrite, --verify-ir, --external-data, --input-shape, --target-opset,
 * report or --check (which runs the graph: a model loaded for copying has
 * none, and would be found equal on no outputs at all). */
static bool copy_unchanged(const Options *o)
{
    for (size_t i = 0; i < MAX_PASSES; i++)
        if (o->enabled[i])
            return false;
    return !o->print && !o->rewrite && !o->verify_ir && !o->external_data &&
           !o->n_input_shapes && !o->target_opset && o->report == REPORT_NONE &&
           !o->cut_inputs.n && !o->cut_outputs.n && !o->mark_preprocessed && !o->check_runs;
}

/* The model as onnx_load reads it, or, when it is written back unchanged
 * and its form allows, as onnx_load_for_copy checks it (much less work). */
static int load_model(const Source *src, const Options *o, Model **m, Diag *d)
{
    char dir[4096];
    const char *in_dir = input_dir(o->input, dir, sizeof dir);
    *m = NULL;
    int rc = copy_unchanged(o) ? onnx_load_for_copy(src->bytes, in_dir, m, d) : 0;
    return rc || *m ? rc : onnx_load(src->bytes, in_dir, m, d);
}

/* Loads the model and runs the passes. With many models at once (xargs -P)
 * a message needs the file's name as well as the node or tensor it names. */
static int load_and_run(const Source *src, const Options *o, Model **m, RunStats *st, Diag *d)
{
    int rc = load_model(src, o, m, d);
    if (!rc && o->report == REPORT_NONE)
        (*m)->log.count_only = true; /* only the warnings are printed */
    if (!rc && src->mapped && model_add_mapping(*m, src->bytes.ptr, src->bytes.len, src->fd))
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
    if (!rc)
        rc = run_passes(*m, o, st, d);
    if (!rc)
        model_drop_stale_training_info(*m);
    if (rc)
        name_input(d, src->path);
    return rc;
}

static void report_to(const Model *m, const Options *o, const RunStats *st, FILE *f)
{
    if (o->report == REPORT_JSON)
        report_json(m, o, st, f);
    else if (o->report == REPORT_TEXT)
        report_text(m, o->verbosity >= 0, f);
    else if (o->verbosity >= 0)
        report_warnings(m, f);
}

/* Warnings and the report on stderr. The JSON report holds the warnings, so
 * that stderr stays one JSON document. Written through a memory buffer: stderr
 * is unbuffered, and a report put out a few bytes at a time costs one system
 * call each (thousands for a small model, more than formatting it). */
static void report(const Model *m, const Options *o, const RunStats *st, FILE *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) { /* out of memory: unbuffered is slower, not wrong */
        report_to(m, o, st, f);
        return;
    }
    report_to(m, o, st, mem);
    if (fclose(mem) == 0)
        fwrite(text, 1, len, f);
    else
        report_to(m, o, st, f);
    free(text);
}

/* The input: the file o->input (or standard input), or the caller's bytes. */
static int open_input(Source *src, const Options *o, const RunIO *io, Diag *d)
{
    if (!io->in_mem)
        return source_open(src, o->input, d);
    *src = (Source){.bytes = *io->in_mem, .fd = -1, .path = "model bytes"};
    return 0;
}

/* The model to o's output path, or into io->out_mem. */
static int write_model(const Model *m, const Options *o, const RunIO *io, Diag *d)
{
    char in_dir[4096];
    if (io->out_mem)
        return onnx_write_mem(m, &io->out_mem->buf, &io->out_mem->len, d);
    return onnx_write(m, &(WriteOptions){.path = options_output(o),
                                         .in_dir = input_dir(o->input, in_dir, sizeof in_dir),
                                         .external_data = o->external_data,
                                         .size_threshold = o->size_threshold,
                                         .page_align = o->page_align,
                                         .link_external = o->link_external}, d);
}

int run_format(const Options *o, const RunIO *io, Diag *d)
{
    Source src;
    Model *m = NULL;
    RunStats st;
    CheckResult check;
    const char *out = io->out_mem ? "" : options_output(o);
    /* Known before reading anything: no need to load a big model first. */
    if (out && strcmp(out, "-") == 0 && isatty(STDOUT_FILENO))
        return diag_set(d, PPQ_EOUTPUT, STDOUT_TERMINAL_MSG);
    int rc = open_input(&src, o, io, d);
    if (rc)
        return rc;
    report_stats_init(&st, o);
    progress_start(src.bytes.len, o->verbosity == 0 && report_stderr_free(o));
    progress_show("loading", NULL);
    if (out && !io->out_mem && !io->in_mem)
        rc = check_output_is_not_input(out, &src, d);
    if (!rc)
        rc = load_and_run(&src, o, &m, &st, d);
    progress_clear();
    /* The JSON report holds --check's verdicts, so it waits for them. */
    bool report_after_check = o->check_runs && o->report == REPORT_JSON;
    if (!rc && io->report && !report_after_check)
        report(m, o, &st, io->report);
    if (!rc && o->print)
        print_graph(m->graph, stdout);
    /* --check runs before the write: data it cannot read (exit 2) leaves
     * nothing written, while a verdict (exit 5 or 6) keeps the output. */
    if (!rc && o->check_runs) {
        rc = check_model(m, &src, o, &check, d);
        st.check = &check;
    }
    if ((!rc || rc == PPQ_EMISMATCH || rc == PPQ_ECHECK) && out) {
        progress_show("writing", NULL);
        int wrc = write_model(m, o, io, d);
        if (wrc == PPQ_EINPUT) /* the input changed while it was copied */
            name_input(d, src.path);
        progress_clear();
        rc = wrc ? wrc : rc;
    }
    if (st.check && check.done && io->report && report_after_check &&
        (!rc || rc == PPQ_EMISMATCH))
        report(m, o, &st, io->report);
    model_free(m);
    if (!io->in_mem)
        source_close(&src);
    return rc;
}
