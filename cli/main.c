/* main.c - ppqfmt: read a model, run the enabled passes, write the model
 * (api/run.c does the work).
 *
 * Messages go to stderr as one line "ppqfmt: ..."; data (the model, --print)
 * goes to stdout or the -o file. The exit code is the Diag code. */
#include <stdio.h>

#include "../api/report.h"
#include "../api/run.h"
#include "../api/term.h"
#include "../onnx/tempfile.h"
#include "args.h"

int main(int argc, char **argv)
{
    Options o;
    Diag d = {0};
    int rc = options_parse(&o, argc, argv, &d);
    if (!rc && !o.exit_now) {
        tempfile_install_handlers(o.input);
        report_option_warnings(&o, stderr);
        rc = run_format(&o, &(RunIO){.report = stderr}, &d);
    }
    if (fflush(stdout) != 0 && !rc)
        rc = diag_set(&d, PPQ_EOUTPUT, "standard output: write error");
    if (rc) { /* even with -q: quiet means no warnings, never no errors */
        fprintf(stderr, "ppqfmt: %s", term_colour(TC_ERROR));
        term_put(stderr, d.msg, TERM_TEXT_COLS); /* it may quote names from the model */
        fprintf(stderr, "%s\n", term_colour(TC_RESET));
    }
    return rc;
}
