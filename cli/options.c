/* options.c - getopt_long parsing. Each pass P gets --no-P, which is the same
 * as --disable=P; --passes, --enable and --disable apply in command-line order. */

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../formatter/pass.h"

#ifndef PPQFMT_VERSION
#define PPQFMT_VERSION "0.1.0"
#endif

enum {
    OPT_PASSES = 256, OPT_ENABLE, OPT_DISABLE, OPT_LIST, OPT_REPORT, OPT_PRINT, OPT_DRY_RUN,
    OPT_VERSION, OPT_VERIFY, OPT_REWRITE, OPT_EXTERNAL, OPT_THRESHOLD, OPT_PAGE_ALIGN, OPT_LINK,
    OPT_NO_PASS /* + registry index */
};

/* One screen (24 lines at most); the man page ppqfmt.1 says the same at length. */
void options_usage(FILE *f)
{
    fputs("usage: ppqfmt [options] INPUT [-o OUTPUT]\n"
          "Put an ONNX model into the canonical form a quantizer expects.\n"
          "INPUT and OUTPUT may be '-' (standard input/output).\n\n"
          "  -o, --output=FILE      write the formatted model to FILE (default: stdout)\n"
          "      --passes=LIST      run exactly these passes (comma list, 'all' or 'none')\n"
          "      --enable=P[,P]     add passes to the default set\n"
          "      --disable=P[,P]    remove passes from the set\n"
          "      --no-P             the same as --disable=P (for example --no-fuse-bn)\n"
          "      --list-passes      list passes with their default and help, then exit\n"
          "      --report[=FMT]     say what each pass changed, on stderr (text or json)\n"
          "      --print            print the graph as a table; writes no model without -o\n"
          "      --dry-run          format but write no model\n"
          "      --external-data=F  put initializers >= --size-threshold=BYTES (1024) in\n"
          "                         F beside the output, 64-byte aligned (--page-align: 4K)\n"
          "      --link-external    hard-link the input's data files instead of copying\n"
          "      --verify-ir        check the graph's use lists after every pass\n"
          "  -q, --quiet            no warnings, no progress (errors are always shown)\n"
          "  -v, --verbose          name each pass as it runs\n"
          "  -h, --help, --version  print this help or the version, and exit\n\n"
          "Exit codes: 0 success, 1 usage error, 2 unreadable or invalid model,\n"
          "            3 output cannot be written, 4 internal error (out of memory).\n"
          "Colour on a terminal unless NO_COLOR is set. Manual: man ppqfmt\n",
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
    for (size_t i = 0; i < n; i++)
        printf("%-12s %-3s %s\n", p[i].name, p[i].on_by_default ? "on" : "off", p[i].help);
}

/* Applies value to every pass named in a comma list ("all": every pass). */
static int set_passes(Options *o, const char *list, bool value, Diag *d)
{
    size_t n;
    const Pass *passes = pass_list(&n);
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        const Pass *p = pass_find(tok);
        if (strcmp(tok, "all") == 0)
            for (size_t i = 0; i < n; i++)
                o->enabled[i] = value;
        else if (p)
            o->enabled[p - passes] = value;
        else
            rc = diag_set(d, PPQ_EUSAGE, "unknown pass '%s' (see --list-passes)", tok);
    }
    free(copy);
    return rc;
}

static int set_exact(Options *o, const char *list, Diag *d)
{
    memset(o->enabled, 0, sizeof o->enabled);
    return strcmp(list, "none") == 0 ? 0 : set_passes(o, list, true, d);
}

static int set_threshold(Options *o, const char *arg, Diag *d)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || arg[0] == '-' || v > SIZE_MAX)
        return diag_set(d, PPQ_EUSAGE, "--size-threshold takes a number of bytes, not '%s'", arg);
    o->size_threshold = (size_t)v;
    return 0;
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

/* getopt's '?' (unknown option or an argument where none belongs) and ':'
 * (missing argument), as one message instead of getopt's own two lines. */
static int bad_option(int c, char **argv, Diag *d)
{
    const char *arg = argv[optind - 1];
    bool is_short = optopt > 0 && optopt < 128 && arg[0] == '-' && arg[1] != '-';
    if (c == ':' && is_short)
        return diag_set(d, PPQ_EUSAGE, "option -%c needs an argument (try --help)", optopt);
    if (c == ':')
        return diag_set(d, PPQ_EUSAGE, "option '%s' needs an argument (try --help)", arg);
    if (is_short)
        return diag_set(d, PPQ_EUSAGE, "unknown option -%c (try --help)", optopt);
    if (optopt) /* a known long option, given "=value" */
        return diag_set(d, PPQ_EUSAGE, "option '%.*s' takes no argument (try --help)",
                        (int)strcspn(arg, "="), arg);
    return diag_set(d, PPQ_EUSAGE, "unknown option '%s' (try --help)", arg);
}

static int handle(Options *o, int c, char **argv, Diag *d)
{
    switch (c) {
    case 'o': o->output = optarg; return 0;
    case OPT_PASSES: return set_exact(o, optarg, d);
    case OPT_ENABLE: return set_passes(o, optarg, true, d);
    case OPT_DISABLE: return set_passes(o, optarg, false, d);
    case OPT_LIST: list_passes(); o->exit_now = true; return 0;
    case OPT_REPORT: return set_report(o, optarg, d);
    case OPT_PRINT: o->print = true; return 0;
    case OPT_DRY_RUN: o->dry_run = true; return 0;
    case OPT_VERIFY: o->verify_ir = true; return 0;
    case OPT_REWRITE: o->rewrite = true; return 0;
    case OPT_EXTERNAL: o->external_data = optarg; return 0;
    case OPT_THRESHOLD: return set_threshold(o, optarg, d);
    case OPT_PAGE_ALIGN: o->page_align = true; return 0;
    case OPT_LINK: o->link_external = true; return 0;
    case 'q': o->verbosity = -1; return 0;
    case 'v': o->verbosity = 1; return 0;
    case OPT_VERSION: printf("ppqfmt %s\n", PPQFMT_VERSION); o->exit_now = true; return 0;
    case 'h': options_usage(stdout); o->exit_now = true; return 0;
    default:
        if (c >= OPT_NO_PASS && c < OPT_NO_PASS + MAX_PASSES) {
            o->enabled[c - OPT_NO_PASS] = false;
            return 0;
        }
        return bad_option(c, argv, d);
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
    while (!rc && !o->exit_now && (c = getopt_long(argc, argv, ":o:qvh", opts, NULL)) != -1)
        rc = handle(o, c, argv, d);
    free(opts);
    if (rc || o->exit_now)
        return rc;
    if (optind != argc - 1)
        return diag_set(d, PPQ_EUSAGE, optind >= argc ? "no input model given (try --help)"
                                                      : "more than one input given");
    o->input = argv[optind];
    if (o->output && strcmp(o->output, "-") == 0 && o->print)
        return diag_set(d, PPQ_EUSAGE, "--print and -o - both want standard output");
    return 0;
}
