/* ppqfmt.h - libppqfmt, ppqfmt as a C library: put an ONNX model into the
 * canonical form a quantizer expects, from a file or from memory.
 *
 *     ppqfmt_options *o = ppqfmt_options_new();
 *     ppqfmt_options_set(o, "target-opset", "17");
 *     if (ppqfmt_format_file(o, "in.onnx", "out.onnx"))
 *         fprintf(stderr, "%s\n", ppqfmt_last_error(o));
 *     ppqfmt_options_free(o);
 *
 * Options have the names and value syntax of the command line's long options
 * (man ppqfmt). Every function returning int returns 0 or one of the error
 * codes below, which are the command line's exit codes. A ppqfmt_options holds
 * the options and the outcome of its last run (report, error message): threads
 * may format at once, each with its own ppqfmt_options. The library installs
 * no signal handlers and keeps no global state; it never writes to standard
 * output unless asked to (the "print" option, or output "-"). */
#ifndef PPQFMT_H
#define PPQFMT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PPQFMT_OK = 0,
    PPQFMT_EUSAGE = 1,   /* an unknown option, a bad value, options that contradict */
    PPQFMT_EINPUT = 2,   /* the model is unreadable or invalid */
    PPQFMT_EOUTPUT = 3,  /* the output cannot be written */
    PPQFMT_EINTERNAL = 4, /* out of memory, or a pass failed */
    PPQFMT_EMISMATCH = 5, /* "check": an output differs from the input model's */
    PPQFMT_ECHECK = 6     /* "check": a node could not be run by the interpreter */
};

typedef struct ppqfmt_options ppqfmt_options;

/* The library's version, as `ppqfmt --version` prints it ("0.1.0"). */
const char *ppqfmt_version(void);

/* New options holding the defaults (the passes on by default); NULL when out
 * of memory. */
ppqfmt_options *ppqfmt_options_new(void);
/* Frees o and what it holds (report, message); NULL is allowed. */
void ppqfmt_options_free(ppqfmt_options *o);

/* Sets the option called name, without the leading "--" ("disable",
 * "input-shape", "no-fuse-gelu"), to value as the command line spells it
 * ("fuse-gelu,cse", "x=1,3,224,224"); value is NULL for an option that takes
 * none ("mark-preprocessed") and is copied. Options apply in the order set,
 * as on the command line (--passes then --enable...). Errors: PPQFMT_EUSAGE
 * for an unknown name, a missing, needless or bad value, and for "help",
 * "version" and "list-passes", which only the command line has. */
int ppqfmt_options_set(ppqfmt_options *o, const char *name, const char *value);

/* Formats the model file input into the file output ("-": standard output;
 * NULL: nowhere, as with --dry-run), its external data files included, as
 * `ppqfmt INPUT -o OUTPUT` would. The output is written to a temporary file
 * and renamed into place, so a failure leaves no partial file. Errors: the
 * codes above, with the message in ppqfmt_last_error. With the "check"
 * option, PPQFMT_EMISMATCH and PPQFMT_ECHECK are verdicts: the output is
 * written and the report holds them, as for a successful format. */
int ppqfmt_format_file(ppqfmt_options *o, const char *input, const char *output);

/* Formats the model in the len bytes at in (which may not use external data
 * files) into a new buffer: *out (free it with ppqfmt_free) and *out_len.
 * Errors as ppqfmt_format_file; *out is then NULL, except after a "check"
 * verdict (PPQFMT_EMISMATCH, PPQFMT_ECHECK), which keeps the output. */
int ppqfmt_format_buffer(ppqfmt_options *o, const void *in, size_t len, void **out,
                         size_t *out_len);

/* Frees a buffer ppqfmt_format_buffer made; NULL is allowed. */
void ppqfmt_free(void *buf);

/* The report of o's last successful format or "check" mismatch, one JSON
 * document (the one `--report=json` writes: what each pass changed, the
 * warnings, the check's verdicts); "" before any and after a check that
 * could not run. Valid until o's next format or free. */
const char *ppqfmt_report_json(const ppqfmt_options *o);

/* The message of o's last error (from set or format), as the command line
 * prints it after "ppqfmt: "; "" when there was none. */
const char *ppqfmt_last_error(const ppqfmt_options *o);

#ifdef __cplusplus
}
#endif

#endif
