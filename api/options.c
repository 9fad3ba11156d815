/* options.c - ppqfmt's options by name, the one parser behind the command line
 * (cli/args.c splits argv) and the library (ppqfmt_options_set). Each pass P
 * gets --no-P, which is the same as --disable=P; --passes, --enable and
 * --disable apply in the order given. */

#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../formatter/opset.h"
#include "../formatter/pass.h"

#ifndef PPQFMT_VERSION
#define PPQFMT_VERSION "0.1.0"
#endif

enum {
    OPT_PASSES = OPTION_ID_FIRST, OPT_ENABLE, OPT_DISABLE, OPT_LIST, OPT_REPORT, OPT_PRINT, OPT_DRY_RUN,
    OPT_VERSION, OPT_VERIFY, OPT_REWRITE, OPT_EXTERNAL, OPT_THRESHOLD, OPT_PAGE_ALIGN, OPT_LINK,
    OPT_TARGET_OPSET,
    OPT_FOLD_LIMIT, OPT_FOLD_GROWTH, OPT_FOLD_GROWTH_LIMIT, OPT_INPUT_SHAPE,
    OPT_MARK_PREPROCESSED, OPT_CUT_INPUTS, OPT_CUT_OUTPUTS, OPT_CHECK, OPT_CHECK_SEED,
    OPT_CHECK_BREAK, OPT_CHECK_INPUTS, OPT_CHECK_EXPECTED,
};

/* One screen (24 lines at most); the man page ppqfmt.1 says the same at length. */
void options_usage(FILE *f)
{
    fputs("usage: ppqfmt [options] INPUT [-o OUTPUT]   ('-': standard input/output)\n"
          "Put an ONNX model into the canonical form a quantizer expects.\n\n"
          "  -o, --output=FILE      write the formatted model to FILE (default: stdout)\n"
          "      --passes=LIST      run exactly these passes (comma list, 'all' or 'none')\n"
          "      --enable=P,.. / --disable=P,..  add / remove passes (--no-P, --no-all)\n"
          "      --target-opset=N   raise or lower the default-domain opset to N (7..26)\n"
          "      --report[=FMT]     say what each pass changed, on stderr (text or json)\n"
          "      --print, --dry-run print the graph as a table / format but write no model\n"
          "      --external-data=F  put initializers >= --size-threshold=BYTES (1024) in\n"
          "                         F beside the output, 64-byte aligned (--page-align: 4K)\n"
          "      --link-external    hard-link the input's data files instead of copying\n"
          "      --fold-limit=B     largest result fold computes (64 MiB; a grown one, as\n"
          "                         of Expand, Tile: --fold-growth-limit=B, 1 MiB)\n"
          "      --input-shape=[IN=]D  fix dynamic input dims: x=1,3,-1,-1 (repeatable)\n"
          "      --verify-ir / --mark-preprocessed  check the IR each pass / tag it (man)\n"
          "      --check[=N] --check-seed=S  compare with the input on N (3) random inputs\n"
          "      --check-inputs=DIR  or on DIR's input_K.pb or .npy (each test_data_set_*/)\n"
          "      --inputs=V,.. --outputs=V,..  keep the graph between these values\n"
          "  -q, --quiet / -v, --verbose  no warnings or progress / name each pass\n"
          "  -h, --help, --version, --list-passes  this help, the version, the passes\n"
          "Exit codes: 0 ok, 1 usage, 2 bad input model, 3 cannot write, 4 internal error,\n"
          "5 --check found an output that differs, 6 --check cannot run a node.\n"
          "Colour unless NO_COLOR is set. Manual: man ppqfmt, or man -l ppqfmt.1\n",
          f);
}

const char *options_output(const Options *o)
{
    if (o->dry_run)
        return NULL;
    return o->output ? o->output : o->print ? NULL : "-";
}

static void list_passes(void)
{
    size_t n;
    const Pass *p = pass_list(&n);
    int width = 0; /* the longest name sets the column */
    for (size_t i = 0; i < n; i++)
        width = (int)strlen(p[i].name) > width ? (int)strlen(p[i].name) : width;
    for (size_t i = 0; i < n; i++)
        printf("%-*s %-3s %s\n", width, p[i].name, p[i].on_by_default ? "on" : "off", p[i].help);
}

/* The registered pass nearest to name, or NULL when none is near enough to
 * be what was meant. */
static const char *nearest_pass(const char *name)
{
    size_t n, best = SIZE_MAX;
    const Pass *p = pass_list(&n);
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t dist = diag_edit_distance(name, p[i].name);
        if (dist < best) {
            best = dist;
            found = p[i].name;
        }
    }
    return found && best * 3 <= strlen(found) + 1 ? found : NULL; /* a third of it */
}

/* The registry index of the pass named by the len bytes at name ('_' may
 * stand for '-'), or -1 with a usage error that suggests the nearest name. */
static int pass_index(const char *name, size_t len, Diag *d)
{
    size_t n;
    const Pass *passes = pass_list(&n);
    char buf[64];
    if (!len) {
        diag_set(d, PPQ_EUSAGE, "empty pass name in a pass list (see --list-passes)");
        return -1;
    }
    snprintf(buf, sizeof buf, "%.*s", (int)len, name);
    for (char *c = buf; *c; c++)
        *c = *c == '_' ? '-' : *c;
    const Pass *p = len < sizeof buf ? pass_find(buf) : NULL;
    if (p)
        return (int)(p - passes);
    const char *near = len < sizeof buf ? nearest_pass(buf) : NULL;
    if (near)
        diag_set(d, PPQ_EUSAGE, "unknown pass '%s'; did you mean '%s'?", buf, near);
    else
        diag_set(d, PPQ_EUSAGE, "unknown pass '%.*s' (see --list-passes)", (int)len, name);
    return -1;
}

/* Sets pass k as an option named it (how: "--disable", "--no-"...); says
 * once when it contradicts an earlier option that named the same pass. */
static void name_pass(Options *o, size_t k, bool value, const char *how)
{
    signed char said = value ? 1 : -1;
    if (o->named[k] == -said && !o->conflict[0][0]) {
        const char *name = pass_list(&(size_t){0})[k].name;
        bool eq = how[strlen(how) - 1] != '-'; /* "--no-" takes no '=' */
        snprintf(o->conflict[0], sizeof o->conflict[0], "%s%s%s", how, eq ? "=" : "", name);
        snprintf(o->conflict[1], sizeof o->conflict[1],
                 "overrides an earlier option that %s %s: the last one given wins",
                 value ? "disabled" : "enabled", name);
    }
    o->named[k] = said;
    o->enabled[k] = value;
}

/* Applies value to every pass named in a comma list ("all": every pass). */
static int set_passes(Options *o, const char *option, const char *list, bool value, Diag *d)
{
    size_t n;
    pass_list(&n);
    if (!*list)
        return diag_set(d, PPQ_EUSAGE, "%s needs a comma list of passes (see --list-passes)",
                        option);
    for (const char *tok = list; tok; tok = strchr(tok, ',') ? strchr(tok, ',') + 1 : NULL) {
        size_t len = strcspn(tok, ",");
        int k = len == 3 && strncmp(tok, "all", 3) == 0 ? -2 : pass_index(tok, len, d);
        if (k == -1)
            return PPQ_EUSAGE;
        if (k >= 0)
            name_pass(o, (size_t)k, value, option);
        for (size_t i = 0; k == -2 && i < n; i++)
            o->enabled[i] = value;
    }
    return 0;
}

static int set_exact(Options *o, const char *list, Diag *d)
{
    memset(o->enabled, 0, sizeof o->enabled);
    return strcmp(list, "none") == 0 ? 0 : set_passes(o, "--passes", list, true, d);
}

/* A byte count for option into *out. */
static int set_bytes(size_t *out, const char *option, const char *arg, Diag *d)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || arg[0] == '-' || v > SIZE_MAX)
        return diag_set(d, PPQ_EUSAGE, "%s takes a number of bytes, not '%s'", option, arg);
    *out = (size_t)v;
    return 0;
}

/* The fold bounds keep 0 for "the default" (formatter/fold.c): a 0 given on
 * the command line would silently mean 64 MiB, so it is refused. */
static int set_fold_bound(size_t *out, const char *option, const char *arg, Diag *d)
{
    if (set_bytes(out, option, arg, d))
        return d->code;
    if (*out == 0)
        return diag_set(d, PPQ_EUSAGE, "%s takes at least 1 byte, not 0 (--no-fold turns "
                        "folding off)", option);
    return 0;
}

/* The passes that stand for onnxruntime's quant_pre_process steps: ONNX and
 * symbolic shape inference, and its basic graph optimizations (constant
 * folding, redundant nodes, common subexpressions, Conv+BatchNormalization/
 * Add/Mul fusions). --mark-preprocessed tags only what all of them formatted. */
static const char *const PREPROCESS_PASSES[] = {
    "fold", "eliminate-noops", "cse", "identity", "fuse-bn", "fuse-bias", "fuse-conv-scale",
    "infer-shapes",
};

static int check_preprocess_passes(const Options *o, Diag *d)
{
    size_t n;
    const Pass *p = pass_list(&n);
    for (size_t k = 0; k < sizeof PREPROCESS_PASSES / sizeof *PREPROCESS_PASSES; k++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(p[i].name, PREPROCESS_PASSES[k]) && !o->enabled[i])
                return diag_set(d, PPQ_EUSAGE, "--mark-preprocessed needs pass %s, which "
                                "stands for a step of onnxruntime's quant_pre_process",
                                p[i].name);
    return 0;
}

/* A comma list of value names for --inputs/--outputs: split into the
 * list's own copy (the names point into it). */
static int set_cut(CutList *c, const char *option, const char *arg, Diag *d)
{
    size_t len = strlen(arg);
    if (!len || len >= sizeof c->buf)
        return diag_set(d, PPQ_EUSAGE, "%s takes a comma list of value names", option);
    memcpy(c->buf, arg, len + 1);
    c->n = 0;
    for (char *tok = c->buf; tok; tok = strchr(tok, ',') ? strchr(tok, ',') + 1 : NULL) {
        if (c->n == MAX_CUT_NAMES || *tok == ',' || !*tok)
            return diag_set(d, PPQ_EUSAGE, "%s: an empty name, or more than %d names", option,
                            MAX_CUT_NAMES);
        c->names[c->n++] = tok;
    }
    for (char *p = c->buf; (p = strchr(p, ',')); p++)
        *p = '\0';
    return 0;
}

/* dedup-initializers merges what split-params splits: asked for, it turns
 * split-params off (on by default), unless an option named split-params. */
static int settle_dedup(Options *o, Diag *d)
{
    size_t n;
    const Pass *p = pass_list(&n), *dedup = pass_find("dedup-initializers"),
               *split = pass_find("split-params");
    size_t k = (size_t)(dedup - p), s = (size_t)(split - p);
    if (!o->enabled[k] || !o->enabled[s])
        return 0;
    if (o->named[s] > 0)
        return diag_set(d, PPQ_EUSAGE, "dedup-initializers and split-params undo each other: "
                        "enable one of them");
    o->enabled[s] = false;
    o->warnings[o->n_warnings++] =
        (OptionWarning){"dedup-initializers", "turns split-params off (they undo each other)"};
    return 0;
}

/* The opset bounds live in formatter/opset.h, with why they are what they are. */
static int set_target_opset(Options *o, const char *arg, Diag *d)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || errno)
        return diag_set(d, PPQ_EUSAGE, "--target-opset takes an opset number, not '%s'", arg);
    if (v < OPSET_TARGET_MIN || v > OPSET_TARGET_MAX)
        return diag_set(d, PPQ_EUSAGE, "--target-opset=%ld is outside the opsets ppqfmt can "
                        "raise or lower to (%d to %d)", v, OPSET_TARGET_MIN, OPSET_TARGET_MAX);
    o->target_opset = (int)v;
    return 0;
}

/* --check[=N] (N runs, 1 to 1000; default 3) and --check-seed=S. */
static int set_check(Options *o, const char *arg, Diag *d)
{
    char *end;
    errno = 0;
    long v = arg ? strtol(arg, &end, 10) : 3;
    if (arg && (!*arg || *end || errno || v < 1 || v > 1000))
        return diag_set(d, PPQ_EUSAGE, "--check takes a number of runs from 1 to 1000, not '%s'",
                        arg);
    o->check_runs = (int)v;
    return 0;
}

static int set_check_seed(Options *o, const char *arg, Diag *d)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || *arg == '-')
        return diag_set(d, PPQ_EUSAGE, "--check-seed takes a non-negative integer, not '%s'", arg);
    o->check_seed = v;
    return 0;
}

/* --check-inputs=DIR: a check on DIR's data sets (one run each), so it
 * turns --check on. */
static int set_check_inputs(Options *o, const char *arg, Diag *d)
{
    if (!*arg)
        return diag_set(d, PPQ_EUSAGE, "--check-inputs takes a folder, not ''");
    o->check_inputs = arg;
    o->check_runs = o->check_runs ? o->check_runs : 1;
    return 0;
}

static int add_input_shape(Options *o, const char *arg, Diag *d)
{
    if (o->n_input_shapes == MAX_INPUT_SHAPES)
        return diag_set(d, PPQ_EUSAGE, "more than %d --input-shape options", MAX_INPUT_SHAPES);
    return input_shape_parse(arg, &o->input_shapes[o->n_input_shapes++], d);
}

static int set_report(Options *o, const char *arg, Diag *d)
{
    if (!arg || strcmp(arg, "text") == 0)
        o->report = REPORT_TEXT;
    else if (strcmp(arg, "json") == 0)
        o->report = REPORT_JSON;
    else
        return diag_set(d, PPQ_EUSAGE, "--report takes 'text' or 'json', not '%s'", arg);
    return 0;
}

/* The long options by name, as on the command line; a new option is one line
 * here and one case in handle(). -o, -q, -v and -h are output, quiet, verbose
 * and help. Besides these, "no-P" for each pass P (and "no-all") is --disable=P. */
static const OptionSpec OPTION_TABLE[] = {
    {"output", OPTION_REQUIRED, 'o'},         {"passes", OPTION_REQUIRED, OPT_PASSES},
    {"enable", OPTION_REQUIRED, OPT_ENABLE},  {"disable", OPTION_REQUIRED, OPT_DISABLE},
    {"list-passes", OPTION_NONE, OPT_LIST},   {"report", OPTION_OPTIONAL, OPT_REPORT},
    {"print", OPTION_NONE, OPT_PRINT},        {"dry-run", OPTION_NONE, OPT_DRY_RUN},
    {"verify-ir", OPTION_NONE, OPT_VERIFY},   {"rewrite", OPTION_NONE, OPT_REWRITE},
    {"quiet", OPTION_NONE, 'q'},              {"verbose", OPTION_NONE, 'v'},
    {"version", OPTION_NONE, OPT_VERSION},    {"help", OPTION_NONE, 'h'},
    {"external-data", OPTION_REQUIRED, OPT_EXTERNAL},
    {"size-threshold", OPTION_REQUIRED, OPT_THRESHOLD},
    {"page-align", OPTION_NONE, OPT_PAGE_ALIGN},
    {"link-external", OPTION_NONE, OPT_LINK},
    {"target-opset", OPTION_REQUIRED, OPT_TARGET_OPSET},
    {"fold-limit", OPTION_REQUIRED, OPT_FOLD_LIMIT},
    {"fold-growth", OPTION_REQUIRED, OPT_FOLD_GROWTH},
    {"fold-growth-limit", OPTION_REQUIRED, OPT_FOLD_GROWTH_LIMIT},
    {"input-shape", OPTION_REQUIRED, OPT_INPUT_SHAPE},
    {"mark-preprocessed", OPTION_NONE, OPT_MARK_PREPROCESSED},
    {"inputs", OPTION_REQUIRED, OPT_CUT_INPUTS},
    {"outputs", OPTION_REQUIRED, OPT_CUT_OUTPUTS},
    {"check", OPTION_OPTIONAL, OPT_CHECK},
    {"check-seed", OPTION_REQUIRED, OPT_CHECK_SEED},
    {"check-inputs", OPTION_REQUIRED, OPT_CHECK_INPUTS},
    {"check-expected", OPTION_NONE, OPT_CHECK_EXPECTED}, /* hidden, tests the kernels */
    {"check-break", OPTION_NONE, OPT_CHECK_BREAK}, /* hidden, tests --check */
};

const OptionSpec *options_table(size_t *n)
{
    *n = sizeof OPTION_TABLE / sizeof *OPTION_TABLE;
    return OPTION_TABLE;
}

const char *options_version(void) { return PPQFMT_VERSION; }

/* --help, --version and --list-passes: done at once, on standard output. */
static int exit_now(Options *o, int id)
{
    if (id == OPT_LIST)
        list_passes();
    else if (id == OPT_VERSION)
        printf("ppqfmt %s\n", PPQFMT_VERSION);
    else
        options_usage(stdout);
    o->exit_now = true;
    return 0;
}

static int handle(Options *o, int c, const char *optarg, Diag *d)
{
    switch (c) {
    case 'o': o->output = optarg; return 0;
    case OPT_PASSES: return set_exact(o, optarg, d);
    case OPT_ENABLE: return set_passes(o, "--enable", optarg, true, d);
    case OPT_DISABLE: return set_passes(o, "--disable", optarg, false, d);
    case OPT_LIST: case OPT_VERSION: case 'h': return exit_now(o, c);
    case OPT_REPORT: return set_report(o, optarg, d);
    case OPT_PRINT: o->print = true; return 0;
    case OPT_DRY_RUN: o->dry_run = true; return 0;
    case OPT_VERIFY: o->verify_ir = true; return 0;
    case OPT_REWRITE: o->rewrite = true; return 0;
    case OPT_EXTERNAL: o->external_data = optarg; return 0;
    case OPT_THRESHOLD:
        o->threshold_given = true;
        return set_bytes(&o->size_threshold, "--size-threshold", optarg, d);
    case OPT_FOLD_LIMIT: return set_fold_bound(&o->fold_limit, "--fold-limit", optarg, d);
    case OPT_FOLD_GROWTH: return set_fold_bound(&o->fold_growth, "--fold-growth", optarg, d);
    case OPT_FOLD_GROWTH_LIMIT:
        return set_fold_bound(&o->fold_growth_limit, "--fold-growth-limit", optarg, d);
    case OPT_PAGE_ALIGN: o->page_align = true; return 0;
    case OPT_LINK: o->link_external = true; return 0;
    case OPT_TARGET_OPSET: return set_target_opset(o, optarg, d);
    case OPT_INPUT_SHAPE: return add_input_shape(o, optarg, d);
    case OPT_MARK_PREPROCESSED: o->mark_preprocessed = true; return 0;
    case OPT_CUT_INPUTS: return set_cut(&o->cut_inputs, "--inputs", optarg, d);
    case OPT_CUT_OUTPUTS: return set_cut(&o->cut_outputs, "--outputs", optarg, d);
    case OPT_CHECK: return set_check(o, optarg, d);
    case OPT_CHECK_SEED: return set_check_seed(o, optarg, d);
    case OPT_CHECK_BREAK: o->check_break = true; return 0;
    case OPT_CHECK_INPUTS: return set_check_inputs(o, optarg, d);
    case OPT_CHECK_EXPECTED: o->check_expected = true; return 0;
    case 'q': o->verbosity = -1; return 0;
    case 'v': o->verbosity = 1; return 0;
    default: return diag_set(d, PPQ_EINTERNAL, "option %d has no handler", c);
    }
}

/* "no-all" and "no-P" (with '_' for '-' in P, as --disable takes it). */
static int set_no_pass(Options *o, const char *pass, Diag *d)
{
    if (strcmp(pass, "all") == 0) /* as --disable=all */
        return set_passes(o, "--no-", "all", false, d);
    int k = pass_index(pass, strlen(pass), d);
    if (k < 0)
        return PPQ_EUSAGE;
    name_pass(o, (size_t)k, false, "--no-");
    return 0;
}

const OptionSpec *options_find(const char *name)
{
    for (size_t i = 0; i < sizeof OPTION_TABLE / sizeof *OPTION_TABLE; i++)
        if (strcmp(OPTION_TABLE[i].name, name) == 0)
            return &OPTION_TABLE[i];
    return NULL;
}

int options_set(Options *o, const char *name, const char *value, Diag *d)
{
    const OptionSpec *spec = options_find(name);
    if (!spec && strncmp(name, "no-", 3) == 0 && !value)
        return set_no_pass(o, name + 3, d);
    if (!spec)
        return diag_set(d, PPQ_EUSAGE, "unknown option '--%s' (try --help)", name);
    if (spec->arg == OPTION_REQUIRED && !value)
        return diag_set(d, PPQ_EUSAGE, "option '--%s' needs an argument (try --help)", name);
    if (spec->arg == OPTION_NONE && value)
        return diag_set(d, PPQ_EUSAGE, "option '--%s' takes no argument (try --help)", name);
    return handle(o, spec->id, value, d);
}

void options_init(Options *o)
{
    size_t n;
    const Pass *p = pass_list(&n);
    memset(o, 0, sizeof *o);
    o->size_threshold = 1024;
    for (size_t i = 0; i < n && i < MAX_PASSES; i++)
        o->enabled[i] = p[i].on_by_default;
}

/* What depends on several options, once all are given: warnings for those
 * without effect, and the passes other options need or exclude. */
int options_finish(Options *o, Diag *d)
{
    if (o->dry_run && o->output)
        o->warnings[o->n_warnings++] =
            (OptionWarning){"-o", "has no effect with --dry-run: no model is written"};
    if (o->threshold_given && !o->external_data)
        o->warnings[o->n_warnings++] =
            (OptionWarning){"--size-threshold", "has no effect without --external-data"};
    if (o->conflict[0][0])
        o->warnings[o->n_warnings++] = (OptionWarning){o->conflict[0], o->conflict[1]};
    if (o->mark_preprocessed && check_preprocess_passes(o, d))
        return d->code;
    if (settle_dedup(o, d))
        return d->code;
    if (o->cut_inputs.n || o->cut_outputs.n) /* what the cut leaves dead goes, then and after */
        o->enabled[pass_find("isolated") - pass_list(&(size_t){0})] = true;
    return 0;
}
