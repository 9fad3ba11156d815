/* ppqfmt.c - the public C API (ppqfmt.h) over options.c and run.c: a
 * ppqfmt_options owns its options, the value strings they point to, and the
 * report and message of its last run, so that separate handles share nothing. */
#include "ppqfmt.h"

#include <stdlib.h>
#include <string.h>

#include "run.h"

struct ppqfmt_options {
    Options options;
    char **values; /* copies of the values set; options point into them */
    size_t n_values;
    char *report; /* the last run's JSON report, or NULL */
    Diag diag;    /* the last error */
};

const char *ppqfmt_version(void) { return options_version(); }

ppqfmt_options *ppqfmt_options_new(void)
{
    ppqfmt_options *o = calloc(1, sizeof *o);
    if (o)
        options_init(&o->options);
    return o;
}

void ppqfmt_options_free(ppqfmt_options *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n_values; i++)
        free(o->values[i]);
    free(o->values);
    free(o->report);
    free(o);
}

/* A copy of value that lives as long as o; NULL stays NULL. */
static int keep_value(ppqfmt_options *o, const char *value, const char **kept)
{
    *kept = NULL;
    if (!value)
        return 0;
    char **grown = realloc(o->values, (o->n_values + 1) * sizeof *grown);
    if (!grown)
        return diag_set(&o->diag, PPQ_EINTERNAL, "out of memory");
    o->values = grown;
    if (!(o->values[o->n_values] = strdup(value)))
        return diag_set(&o->diag, PPQ_EINTERNAL, "out of memory");
    *kept = o->values[o->n_values++];
    return 0;
}

int ppqfmt_options_set(ppqfmt_options *o, const char *name, const char *value)
{
    const char *kept;
    o->diag = (Diag){0};
    if (!name)
        return diag_set(&o->diag, PPQ_EUSAGE, "no option name given");
    if (!strcmp(name, "help") || !strcmp(name, "version") || !strcmp(name, "list-passes"))
        return diag_set(&o->diag, PPQ_EUSAGE, "option '--%s' is for the command line only",
                        name);
    if (keep_value(o, value, &kept))
        return o->diag.code;
    return options_set(&o->options, name, kept, &o->diag);
}

/* A "check" verdict: the format itself succeeded and its output is kept. */
static bool run_verdict(int rc) { return rc == PPQ_EMISMATCH || rc == PPQ_ECHECK; }

/* Runs the options, completed for this run, with the JSON report into o. */
static int run(ppqfmt_options *o, Options *run_opts, RunIO *io)
{
    char *text = NULL;
    size_t len = 0;
    free(o->report);
    o->report = NULL;
    o->diag = (Diag){0};
    run_opts->report = REPORT_JSON;
    if (options_finish(run_opts, &o->diag))
        return o->diag.code;
    io->report = open_memstream(&text, &len);
    if (!io->report)
        return diag_set(&o->diag, PPQ_EINTERNAL, "out of memory");
    int rc = run_format(run_opts, io, &o->diag);
    if (fclose(io->report) && !rc)
        rc = diag_set(&o->diag, PPQ_EINTERNAL, "out of memory");
    if (rc && !run_verdict(rc))
        free(text);
    else
        o->report = text;
    return rc;
}

int ppqfmt_format_file(ppqfmt_options *o, const char *input, const char *output)
{
    Options run_opts = o->options;
    if (!input) {
        o->diag = (Diag){0};
        return diag_set(&o->diag, PPQ_EUSAGE, "no input model given");
    }
    run_opts.input = input;
    run_opts.output = output;
    run_opts.dry_run |= !output;
    return run(o, &run_opts, &(RunIO){0});
}

int ppqfmt_format_buffer(ppqfmt_options *o, const void *in, size_t len, void **out,
                         size_t *out_len)
{
    Options run_opts = o->options;
    Bytes bytes = {in, len};
    RunBuffer buf = {0};
    run_opts.input = "-"; /* no folder: external data is refused */
    run_opts.output = NULL;
    int rc = run(o, &run_opts, &(RunIO){.in_mem = &bytes, .out_mem = &buf});
    if (rc && !run_verdict(rc)) {
        free(buf.buf);
        buf = (RunBuffer){0};
    }
    *out = buf.buf;
    *out_len = buf.len;
    return rc;
}

void ppqfmt_free(void *buf) { free(buf); }

const char *ppqfmt_report_json(const ppqfmt_options *o) { return o->report ? o->report : ""; }

const char *ppqfmt_last_error(const ppqfmt_options *o) { return o->diag.msg; }
