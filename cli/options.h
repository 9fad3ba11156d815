/* options.h - the command line of ppqfmt. */
#ifndef PPQ_OPTIONS_H
#define PPQ_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/ir/diag.h"
#include "input_shape.h"

enum { MAX_PASSES = 32, MAX_INPUT_SHAPES = 32, MAX_CUT_NAMES = 64 };
/* --inputs or --outputs: names pointing into buf. */
typedef struct CutList {
    char buf[4096];
    const char *names[MAX_CUT_NAMES];
    size_t n;
} CutList;
typedef enum { REPORT_NONE, REPORT_TEXT, REPORT_JSON } ReportFormat;
/* An option given where it has no effect: "OPTION MESSAGE" is the warning. */
typedef struct OptionWarning {
    const char *option, *message;
} OptionWarning;

typedef struct Options {
    const char *input;
    const char *output; /* NULL: standard output, unless printing or a dry run */
    bool enabled[MAX_PASSES]; /* by registry index */
    ReportFormat report;
    bool print;
    bool dry_run;
    bool verify_ir;
    const char *external_data; /* --external-data=FILE */
    size_t size_threshold;     /* --size-threshold=BYTES */
    bool page_align;           /* --page-align */
    bool link_external;        /* --link-external */
    int target_opset;          /* --target-opset=N; 0: keep the model's opset */
    size_t fold_limit;         /* --fold-limit=BYTES; 0: pass fold's default */
    size_t fold_growth; /* hidden --fold-growth=N (tests the kernels); 0: the default 2 */
    size_t fold_growth_limit;  /* --fold-growth-limit=BYTES; 0: pass fold's default */
    bool mark_preprocessed;    /* --mark-preprocessed */
    CutList cut_inputs, cut_outputs; /* --inputs, --outputs */
    InputShape input_shapes[MAX_INPUT_SHAPES]; /* --input-shape, in order */
    size_t n_input_shapes;
    int check_runs;      /* --check[=N]: runs of the interpreter; 0: no check */
    uint64_t check_seed; /* --check-seed=S */
    bool check_break;    /* hidden --check-break: spoil a weight (tests --check) */
    bool rewrite; /* hidden: re-encode every node and graph (tests the writer) */
    int verbosity; /* -1 quiet, 0 normal, 1 verbose */
    bool exit_now; /* --help, --version, --list-passes done */
    OptionWarning warnings[4];
    size_t n_warnings;
    /* The pass options that named a pass (not through 'all'): +1 enabled,
     * -1 disabled, 0 none; a later one saying the opposite wins, with a
     * warning (its text in conflict: "--disable=P", "overrides ..."). */
    signed char named[MAX_PASSES];
    char conflict[2][80];
} Options;

/* Fills o from argv; on error returns PPQ_EUSAGE with a message in d. */
int options_parse(Options *o, int argc, char **argv, Diag *d);
void options_usage(FILE *f);
/* Where the model goes: a path, "-" (standard output) or NULL (nowhere:
 * --dry-run, or --print without -o). */
const char *options_output(const Options *o);

#endif
