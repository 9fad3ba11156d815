/* main.c - ppqfmt: read a model, run the enabled passes, write the model.
 *
 * Messages go to stderr as one line "ppqfmt: ..."; data (the model, --print)
 * goes to stdout or the -o file. The exit code is the Diag code. */
#include <stdio.h>
#include <string.h>

#include "../formatter/pass.h"
#include "../onnx/load.h"
#include "../onnx/write.h"
#include "options.h"
#include "report.h"

/* --rewrite: make the writer re-encode every node and graph from the IR, so
 * tests can compare a full re-encoding with the original. */
static int mark_rewrite(Graph *g, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < g->n_ops; i++)
        g->ops[i]->changed = true;
    g->changed = true;
    return 0;
}

static int run_passes(Model *m, const Options *o, Diag *d)
{
    size_t n;
    const Pass *p = pass_list(&n);
    if (o->verify_ir && graph_verify(m->graph, d))
        return d->code;
    for (size_t i = 0; i < n; i++) {
        if (!o->enabled[i])
            continue;
        if (o->verbosity > 0)
            fprintf(stderr, "ppqfmt: running pass %s\n", p[i].name);
        int rc = pass_run(&p[i], m, o->verify_ir, d);
        if (rc)
            return rc;
    }
    if (o->rewrite)
        graph_walk_post(m->graph, mark_rewrite, NULL);
    return 0;
}

static int format_model(const Options *o, Diag *d)
{
    Source src;
    Model *m = NULL;
    const char *out = o->output ? o->output : (o->print || o->dry_run) ? NULL : "-";
    if (o->dry_run)
        out = NULL;
    int rc = source_open(&src, o->input, d);
    if (rc)
        return rc;
    if (out)
        rc = check_output_is_not_input(out, &src, d);
    if (!rc)
        rc = onnx_load(src.bytes, &m, d);
    if (!rc)
        rc = run_passes(m, o, d);
    if (!rc && o->verbosity >= 0)
        report_warnings(m, stderr);
    if (!rc && o->report == REPORT_TEXT)
        report_text(m, stderr);
    if (!rc && o->report == REPORT_JSON)
        report_json(m, o, stderr);
    if (!rc && o->print)
        print_graph(m->graph, stdout);
    if (!rc && out)
        rc = onnx_write(m, out, d);
    model_free(m);
    source_close(&src);
    return rc;
}

int main(int argc, char **argv)
{
    Options o;
    Diag d = {0};
    int rc = options_parse(&o, argc, argv, &d);
    if (!rc && !o.exit_now)
        rc = format_model(&o, &d);
    if (rc)
        fprintf(stderr, "ppqfmt: %s\n", d.msg);
    if (fflush(stdout) != 0 && !rc) {
        fprintf(stderr, "ppqfmt: standard output: write error\n");
        rc = PPQ_EOUTPUT;
    }
    return rc;
}
