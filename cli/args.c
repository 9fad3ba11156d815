/* args.c - getopt_long splits argv; each option found goes to options_set
 * (api/options.c), the one parser the library uses too. Here are only what
 * belongs to a command line: short options, unique prefixes, getopt's errors
 * as one line, and the input operand. */
#include "args.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../formatter/pass.h"

enum { SHORT_IDS = 128 }; /* getopt's value for table entry i: SHORT_IDS + i (not a byte) */

/* The table's options followed by one --no-P per registered pass. */
static struct option *long_options(char (*names)[40], size_t n_passes)
{
    size_t nf;
    const OptionSpec *table = options_table(&nf);
    struct option *opts = calloc(nf + n_passes + 1, sizeof *opts);
    if (!opts)
        return NULL;
    static const int has_arg[] = {[OPTION_NONE] = no_argument,
                                  [OPTION_REQUIRED] = required_argument,
                                  [OPTION_OPTIONAL] = optional_argument};
    for (size_t i = 0; i < nf; i++)
        opts[i] = (struct option){table[i].name, has_arg[table[i].arg], NULL,
                                  table[i].id < SHORT_IDS ? table[i].id : SHORT_IDS + (int)i};
    const Pass *p = pass_list(&n_passes);
    for (size_t i = 0; i < n_passes; i++) {
        snprintf(names[i], sizeof names[i], "no-%s", p[i].name);
        opts[nf + i] = (struct option){names[i], no_argument, NULL, SHORT_IDS + (int)(nf + i)};
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
    if (strncmp(arg, "--no-", 5) == 0 && !arg[len])
        return options_set(o, arg + 2, NULL, d);
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
    bool known = optopt >= SHORT_IDS || (optopt > 0 && strchr("oqvh", optopt));
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

/* The long name of getopt's value c: a short option's table entry, or the
 * entry SHORT_IDS + i of opts. */
static const char *option_name(int c, const struct option *opts)
{
    if (c >= SHORT_IDS)
        return opts[c - SHORT_IDS].name;
    for (const struct option *op = opts; op->name; op++)
        if (op->val == c)
            return op->name;
    return NULL;
}

static int handle(Options *o, int c, char **argv, const struct option *opts, Diag *d)
{
    const char *name = c == '?' || c == ':' ? NULL : option_name(c, opts);
    if (!name)
        return bad_option(o, c, argv, opts, d);
    return options_set(o, name, optarg, d);
}

int options_parse(Options *o, int argc, char **argv, Diag *d)
{
    size_t n;
    pass_list(&n);
    options_init(o);
    char names[MAX_PASSES][40];
    struct option *opts = long_options(names, n);
    if (!opts)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    int c, rc = 0;
    optind = 1;
    opterr = 0; /* bad_option() says it in one line */
    while (!rc && !o->exit_now && (c = getopt_long(argc, argv, ":o:qvh", opts, NULL)) != -1)
        rc = handle(o, c, argv, opts, d);
    free(opts);
    if (rc || o->exit_now)
        return rc;
    if (options_finish(o, d))
        return d->code;
    if (optind != argc - 1)
        return diag_set(d, PPQ_EUSAGE, optind >= argc ? "no input model given (try --help)"
                                                      : "more than one input given");
    o->input = argv[optind];
    if (o->output && strcmp(o->output, "-") == 0 && o->print)
        return diag_set(d, PPQ_EUSAGE, "--print and -o - both want standard output");
    return 0;
}
