/* options.c - getopt_long parsing. Each pass P gets --no-P, which is the same
 * as --disable=P; --passes, --enable and --disable apply in command-line order. */

#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../formatter/opset.h"
#include "../formatter/pass.h"

#ifndef PPQFMT_VERSION
#define PPQFMT_VERSION "0.1.0"
#endif

enum {
    OPT_PASSES = 256, OPT_ENABLE, OPT_DISABLE, OPT_LIST, OPT_REPORT, OPT_PRINT, OPT_DRY_RUN,
    OPT_VERSION, OPT_VERIFY, OPT_REWRITE, OPT_EXTERNAL, OPT_THRESHOLD, OPT_PAGE_ALIGN, OPT_LINK,
    OPT_TARGET_OPSET,
    OPT_FOLD_LIMIT, OPT_FOLD_GROWTH, OPT_FOLD_GROWTH_LIMIT, OPT_INPUT_SHAPE,
    OPT_MARK_PREPROCESSED, OPT_CUT_INPUTS, OPT_CUT_OUTPUTS,
    OPT_NO_PASS /* + registry index */
};

/* One screen (24 lines at most); the man page ppqfmt.1 says the same at length. */
void options_usage(FILE *f)
{
    fputs("usage: ppqfmt [options] INPUT [-o OUTPUT]   ('-': standard input/output)\n"
          "Put an ONNX model into the canonical form a quantizer expects.\n\n"
          "  -o, --output=FILE      write the formatted model to FILE (default: stdout)\n"
          "      --passes=LIST      run exactly these passes (comma list, 'all' or 'none')\n"
          "      --enable=P[,P]     add passes to the default set\n"
          "      --disable=P[,P]    remove passes from the set (--no-P, --no-all: the same)\n"
          "      --target-opset=N   raise or lower the default-domain opset to N (7..26)\n"
          "      --report[=FMT]     say what each pass changed, on stderr (text or json)\n"
          "      --print, --dry-run print the graph as a table / format but write no model\n"
          "      --external-data=F  put initializers >= --size-threshold=BYTES (1024) in\n"
          "                         F beside the output, 64-byte aligned (--page-align: 4K)\n"
          "      --link-external    hard-link the input's data files instead of copying\n"
          "      --fold-limit=B     largest result fold computes (64 MiB; a grown one, as\n"
          "                         of Expand, Tile: --fold-growth-limit=B, 1 MiB)\n"
          "      --input-shape=[IN=]D  fix dynamic input dims: x=1,3,-1,-1 (repeatable)\n"
          "      --verify-ir        check the graph's use lists after every pass\n"
          "      --mark-preprocessed  tag the model as quant_pre_process does (see man)\n"
          "      --inputs=V,.. --outputs=V,..  keep the graph between these values\n"
          "  -q, --quiet / -v, --verbose  no warnings or progress / name each pass\n"
          "  -h, --help, --version, --list-passes  this help, the version, the passes\n\n"
          "Exit codes: 0 ok, 1 usage, 2 bad input model, 3 cannot write, 4 internal error.\n"
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

/* The fixed long options followed by one --no-P per registered pass. */
static struct option *long_options(char (*names)[40], size_t n)
{
    static const struct option fixed[] = {
        {"output", required_argument, NULL, 'o'},     {"passes", required_argument, NULL, OPT_PASSES},
        {"enable", required_argument, NULL, OPT_ENABLE}, {"disable", required_argument, NULL, OPT_DISABLE},
        {"list-passes", no_argument, NULL, OPT_LIST}, {"report", optional_argument, NULL, OPT_REPORT},
        {"print", no_argument, NULL, OPT_PRINT},      {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"verify-ir", no_argument, NULL, OPT_VERIFY}, {"rewrite", no_argument, NULL, OPT_REWRITE},
        {"quiet", no_argument, NULL, 'q'},            {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, OPT_VERSION},  {"help", no_argument, NULL, 'h'},
        {"external-data", required_argument, NULL, OPT_EXTERNAL},
        {"size-threshold", required_argument, NULL, OPT_THRESHOLD},
        {"page-align", no_argument, NULL, OPT_PAGE_ALIGN},
        {"link-external", no_argument, NULL, OPT_LINK},
        {"target-opset", required_argument, NULL, OPT_TARGET_OPSET},
        {"fold-limit", required_argument, NULL, OPT_FOLD_LIMIT},
        {"fold-growth", required_argument, NULL, OPT_FOLD_GROWTH},
        {"fold-growth-limit", required_argument, NULL, OPT_FOLD_GROWTH_LIMIT},
        {"input-shape", required_argument, NULL, OPT_INPUT_SHAPE},
        {"mark-preprocessed", no_argument, NULL, OPT_MARK_PREPROCESSED},
        {"inputs", required_argument, NULL, OPT_CUT_INPUTS},
        {"outputs", required_argument, NULL, OPT_CUT_OUTPUTS},
    };
    size_t nf = sizeof fixed / sizeof *fixed;
    struct option *opts = calloc(nf + n + 1, sizeof *opts);
    if (!opts)
        return NULL;
    memcpy(opts, fixed, sizeof fixed);
    const Pass *p = pass_list(&n);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "no-%s", p[i].name);
        opts[nf + i] = (struct option){names[i], no_argument, NULL, OPT_NO_PASS + (int)i};
    }
    return opts;
}

/* An unknown long option. "--no-P" is --disable=P, so a misspelt pass gets
 * the pass message and '_' for '-' works as in --disable ("--no-fuse_bn"). */
static int unknown_long(Options *o, const char *arg, const struct option *opts, Diag *d)
{
    size_t len = strcspn(arg, "="), matches = 0;
    for (const struct option *op = opts; len > 2 && op->name; op++)
        matches += strncmp(op->name, arg + 2, len - 2) == 0;
    if (matches > 1) /* getopt_long takes unique prefixes only */
        return diag_set(d, PPQ_EUSAGE, "option '%.*s' is ambiguous (try --help)", (int)len, arg);
    if (strcmp(arg, "--no-all") == 0) /* as --disable=all */
        return set_passes(o, "--no-", "all", false, d);
    if (strncmp(arg, "--no-", 5) == 0 && !arg[len]) {
        int k = pass_index(arg + 5, len - 5, d);
        if (k < 0)
            return PPQ_EUSAGE;
        name_pass(o, (size_t)k, false, "--no-");
        return 0;
    }
    return diag_set(d, PPQ_EUSAGE, "unknown option '%.*s' (try --help)", (int)len, arg);
}

/* getopt's '?' (unknown option or an argument where none belongs) and ':'
 * (missing argument), as one message instead of getopt's own two lines.
 * Inside a cluster of short options ("-xq") optind has not moved on, so the
 * option's kind comes from optopt: 0 for an unknown long option, a known
 * option's value for a long one given "=value", else the unknown letter. */
static int bad_option(Options *o, int c, char **argv, const struct option *opts, Diag *d)
{
    const char *arg = argv[optind - 1];
    bool known = optopt >= OPT_PASSES || (optopt > 0 && strchr("oqvh", optopt));
    if (c == ':' && strncmp(arg, "--", 2) == 0)
        return diag_set(d, PPQ_EUSAGE, "option '%s' needs an argument (try --help)", arg);
    if (c == ':')
        return diag_set(d, PPQ_EUSAGE, "option -%c needs an argument (try --help)", optopt);
    if (optopt == 0)
        return unknown_long(o, arg, opts, d);
    if (known)
        return diag_set(d, PPQ_EUSAGE, "option '%.*s' takes no argument (try --help)",
                        (int)strcspn(arg, "="), arg);
    if (optopt > 0 && optopt < 128 && isgraph(optopt)) /* a byte >= 0x80 is negative here */
        return diag_set(d, PPQ_EUSAGE, "unknown option -%c (try --help)", optopt);
    return diag_set(d, PPQ_EUSAGE, "unknown option -\\x%02x (try --help)", optopt & 0xff);
}

static int handle(Options *o, int c, char **argv, const struct option *opts, Diag *d)
{
    switch (c) {
    case 'o': o->output = optarg; return 0;
    case OPT_PASSES: return set_exact(o, optarg, d);
    case OPT_ENABLE: return set_passes(o, "--enable", optarg, true, d);
    case OPT_DISABLE: return set_passes(o, "--disable", optarg, false, d);
    case OPT_LIST: list_passes(); o->exit_now = true; return 0;
    case OPT_REPORT: return set_report(o, optarg, d);
    case OPT_PRINT: o->print = true; return 0;
    case OPT_DRY_RUN: o->dry_run = true; return 0;
    case OPT_VERIFY: o->verify_ir = true; return 0;
    case OPT_REWRITE: o->rewrite = true; return 0;
    case OPT_EXTERNAL: o->external_data = optarg; return 0;
    case OPT_THRESHOLD: return set_bytes(&o->size_threshold, "--size-threshold", optarg, d);
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
    case 'q': o->verbosity = -1; return 0;
    case 'v': o->verbosity = 1; return 0;
    case OPT_VERSION: printf("ppqfmt %s\n", PPQFMT_VERSION); o->exit_now = true; return 0;
    case 'h': options_usage(stdout); o->exit_now = true; return 0;
    default:
        if (c >= OPT_NO_PASS && c < OPT_NO_PASS + MAX_PASSES) {
            name_pass(o, (size_t)(c - OPT_NO_PASS), false, "--no-");
            return 0;
        }
        return bad_option(o, c, argv, opts, d);
    }
}

int options_parse(Options *o, int argc, char **argv, Diag *d)
{
    size_t n;
    const Pass *p = pass_list(&n);
    memset(o, 0, sizeof *o);
    o->size_threshold = 1024;
    for (size_t i = 0; i < n && i < MAX_PASSES; i++)
        o->enabled[i] = p[i].on_by_default;
    char names[MAX_PASSES][40];
    struct option *opts = long_options(names, n);
    if (!opts)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    int c, rc = 0;
    optind = 1;
    opterr = 0; /* bad_option() says it in one line */
    bool threshold = false;
    while (!rc && !o->exit_now && (c = getopt_long(argc, argv, ":o:qvh", opts, NULL)) != -1) {
        threshold |= c == OPT_THRESHOLD;
        rc = handle(o, c, argv, opts, d);
    }
    free(opts);
    if (rc || o->exit_now)
        return rc;
    if (o->dry_run && o->output)
        o->warnings[o->n_warnings++] =
            (OptionWarning){"-o", "has no effect with --dry-run: no model is written"};
    if (threshold && !o->external_data)
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
    if (optind != argc - 1)
        return diag_set(d, PPQ_EUSAGE, optind >= argc ? "no input model given (try --help)"
                                                      : "more than one input given");
    o->input = argv[optind];
    if (o->output && strcmp(o->output, "-") == 0 && o->print)
        return diag_set(d, PPQ_EUSAGE, "--print and -o - both want standard output");
    return 0;
}
