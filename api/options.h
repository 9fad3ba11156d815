/* options.h - ppqfmt's options, set by their long names (the command line's
 * and the library's; cli/args.c turns argv into options_set calls). */
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
    const char *check_inputs; /* --check-inputs=DIR: its data sets instead of random inputs */
    bool check_break;    /* hidden --check-break: spoil a weight (tests --check) */
    bool check_expected; /* hidden --check-expected: the input model's outputs against
                          * the data sets' output_K.pb (the kernel oracle's test) */
    bool rewrite; /* hidden: re-encode every node and graph (tests the writer) */
    int verbosity; /* -1 quiet, 0 normal, 1 verbose */
    bool exit_now; /* --help, --version, --list-passes done */
    bool threshold_given; /* --size-threshold, to warn without --external-data */
    OptionWarning warnings[4];
    size_t n_warnings;
    /* The pass options that named a pass (not through 'all'): +1 enabled,
     * -1 disabled, 0 none; a later one saying the opposite wins, with a
     * warning (its text in conflict: "--disable=P", "overrides ..."). */
    signed char named[MAX_PASSES];
    char conflict[2][80];
} Options;

/* One option: its long name, whether it takes a value, and its id (the short
 * option's letter, or OPTION_ID_FIRST and up). */
typedef enum { OPTION_NONE, OPTION_REQUIRED, OPTION_OPTIONAL } OptionArg;
enum { OPTION_ID_FIRST = 256 };
typedef struct OptionSpec {
    const char *name;
    OptionArg arg;
    int id;
} OptionSpec;

/* The table of long options (not the per-pass "no-P" ones). */
const OptionSpec *options_table(size_t *n);
/* The entry called name, or NULL. */
const OptionSpec *options_find(const char *name);
/* The defaults: the passes on by default, --size-threshold=1024. */
void options_init(Options *o);
/* Sets the option called name ("target-opset", "no-fuse-gelu") to value (NULL
 * for an option without one) as its command-line spelling would; value must
 * outlive o. On error returns PPQ_EUSAGE with the message in d. --help,
 * --version and --list-passes print to standard output and set exit_now. */
int options_set(Options *o, const char *name, const char *value, Diag *d);
/* Once every option is set: settles what depends on several of them and adds
 * the warnings; PPQ_EUSAGE when they contradict each other. */
int options_finish(Options *o, Diag *d);
const char *options_version(void);
void options_usage(FILE *f);
/* Where the model goes: a path, "-" (standard output) or NULL (nowhere:
 * --dry-run, or --print without -o). */
const char *options_output(const Options *o);

#endif
