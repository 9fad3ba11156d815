/* report.c - what the passes did, for people (text) and programs (JSON),
 * and the accounting of the pipeline's rounds behind it.
 *
 * The pipeline runs again until a round changes nothing, so a pass can act in
 * several rounds; both reports give each pass once, in pipeline order, with
 * its totals over all rounds.
 *
 * Text, one line per pass that changed something, then that pass's warnings;
 * names are made safe for a terminal and long ones cut (term_safe):
 *   clip: raised opset 9 → 11; upgraded 2 (slice0, clip0)
 *   isolated: removed 1 (dead_sig); removed initializer 1 (unused_scale)
 *   identity: warning: Y: kept Identity: ...
 * An action without a subject is a change to the whole model, shown as is.
 *
 * JSON schema (stable; new keys may be added, none removed). Strings are
 * valid UTF-8: bytes of a name that are not become U+FFFD.
 *   {"input": str, "output": str|null,
 *    "passes": [{"name": str, "enabled": bool, "changes": int,
 *                "actions": [{"action": str, "subject": str}]
 *                           (subject "": a change to the whole model, which
 *                           the action says: "raised opset 9 → 11"),
 *                "warnings": [{"subject": str, "message": str}]}]
 *              (every registered pass, in pipeline order, totals of all rounds),
 *    "rounds": int (rounds the pipeline ran: until one changed nothing, at most 8),
 *    "timings": {pass name: milliseconds (number, all rounds), for each pass that ran},
 *    "target_opset": null, or with --target-opset=N {"opset": N, "actions": [...]}
 *                    (the raise before the passes, actions as in "passes"),
 *    "other_warnings": [{"stage": "options"|"load"|"target-opset"|"output", "subject": str,
 *                        "message": str}]
 *                      (warnings raised outside the passes; "options": an
 *                      option that has no effect, the subject names it),
 *    "check": null, or with --check[=N] (the report then comes after it)
 *             {"runs": N, "seed": S, "verdict": "equal"|"differs",
 *              "outputs": [{"name": str, "max_abs_error": number|null,
 *                           "max_rel_error": number|null,
 *                           "verdict": "equal"|"differs", "why": str|null}]}
 *             (every graph output of the formatted model, errors over all
 *             runs; rel = abs / max|ref|, abs where max|ref| is 0; null for
 *             an infinite error, a NaN against a number; "why" says what
 *             differs when it is not the values: element type or shape),
 *    "warnings": int (all warnings of the run)}
 * With --report=json this document is all that goes to stderr on success:
 * -v and the status line are silent, option warnings go into it.
 */
#include "report.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "../formatter/opset.h"
#include "term.h"

enum { MAX_NAMES = 8 }; /* names listed per action before "..." */

bool report_stderr_free(const Options *o)
{
    return o->report != REPORT_JSON;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void report_stats_init(RunStats *st, const Options *o)
{
    memset(st, 0, sizeof *st);
    st->verbose = o->verbosity > 0 && report_stderr_free(o);
}

static void round_start(void *ctx)
{
    RunStats *st = ctx;
    st->rounds++;
    if (st->verbose && st->rounds > 1)
        fprintf(stderr, "ppqfmt: round %d: the last round changed the graph, running the "
                "passes again\n", st->rounds);
}

static void pass_start(void *ctx, const Pass *p)
{
    RunStats *st = ctx;
    if (st->verbose && st->rounds == 1)
        fprintf(stderr, "ppqfmt: running pass %s\n", p->name);
    progress_show("running pass", p->name);
    st->started = now_ms();
}

static void pass_end(void *ctx, size_t pass_index)
{
    RunStats *st = ctx;
    st->ms[pass_index] += now_ms() - st->started;
    st->ran[pass_index] = true;
}

PipelineHooks report_pipeline_hooks(RunStats *st)
{
    return (PipelineHooks){round_start, pass_start, pass_end, st};
}

/* "ppqfmt: warning: " in the warning colour. */
static void warning_prefix(FILE *f)
{
    fprintf(f, "ppqfmt: %swarning:%s ", term_colour(TC_WARN), term_colour(TC_RESET));
}

void report_option_warnings(const Options *o, FILE *f)
{
    for (size_t i = 0; i < o->n_warnings && o->verbosity >= 0 && report_stderr_free(o); i++) {
        warning_prefix(f);
        fprintf(f, "%s %s\n", o->warnings[i].option, o->warnings[i].message);
    }
}

/* "SUBJECT: DETAIL" of a warning, safe for a terminal. */
static void warning_text(const ChangeEntry *e, FILE *f)
{
    term_put(f, e->subject, TERM_NAME_COLS);
    fputs(": ", f);
    term_put(f, e->detail, TERM_TEXT_COLS);
    fputc('\n', f);
}

void report_warnings(const Model *m, FILE *f)
{
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (!e->warning)
            continue;
        warning_prefix(f);
        fprintf(f, "%s: ", e->pass);
        warning_text(e, f);
    }
}

static bool is_action(const ChangeEntry *e, const char *action)
{
    return !e->warning && strcmp(e->action, action) == 0;
}

/* Entries of one pass (or stage) are all those with its name, whichever
 * round of the pipeline logged them. */
static bool of_pass(const ChangeEntry *e, const char *pass)
{
    return strcmp(e->pass, pass) == 0;
}

/* Is entry i the first of its pass and action? Searching backwards stops at
 * once in the usual long run of one action. */
static bool first_of_action(const ChangeLog *l, size_t i)
{
    const ChangeEntry *e = &l->items[i];
    for (size_t j = i; j-- > 0;)
        if (is_action(&l->items[j], e->action) && of_pass(&l->items[j], e->pass))
            return false;
    return true;
}

/* "removed 2 (a, b)" for entry i's pass and action, from entry i on; an
 * action without a subject ("raised opset 9 → 11") is said as it is. */
static void text_action(const ChangeLog *l, size_t i, FILE *f)
{
    const ChangeEntry *first = &l->items[i];
    size_t count = 0, shown = 0;
    for (size_t j = i; j < l->n; j++)
        count += is_action(&l->items[j], first->action) && of_pass(&l->items[j], first->pass);
    if (!*first->subject) {
        fputs(first->action, f);
        if (count > 1)
            fprintf(f, " (%zu times)", count);
        return;
    }
    fprintf(f, "%s %zu (", first->action, count);
    for (size_t j = i; j < l->n && shown <= MAX_NAMES; j++) {
        const ChangeEntry *e = &l->items[j];
        if (!is_action(e, first->action) || !of_pass(e, first->pass))
            continue;
        if (shown < MAX_NAMES) {
            fputs(shown ? ", " : "", f);
            term_put(f, e->subject, TERM_NAME_COLS);
        } else {
            fputs(", ...", f);
        }
        shown++;
    }
    fputc(')', f);
}

/* The report of one pass or stage: its changes on one line, its warnings
 * under it. */
static void text_pass(const ChangeLog *l, const char *pass, bool with_warnings, FILE *f)
{
    const char *bold = term_colour(TC_BOLD), *reset = term_colour(TC_RESET);
    bool any = false;
    for (size_t i = 0; i < l->n; i++) {
        const ChangeEntry *e = &l->items[i];
        if (e->warning || !of_pass(e, pass) || !first_of_action(l, i))
            continue;
        if (any)
            fputs("; ", f);
        else
            fprintf(f, "%s%s%s: ", bold, pass, reset);
        any = true;
        text_action(l, i, f);
    }
    if (any)
        fputc('\n', f);
    for (size_t i = 0; i < l->n && with_warnings; i++) {
        const ChangeEntry *e = &l->items[i];
        if (!e->warning || !of_pass(e, pass))
            continue;
        fprintf(f, "%s%s%s: %swarning:%s ", bold, pass, reset, term_colour(TC_WARN), reset);
        warning_text(e, f);
    }
}

static bool is_pass(const char *name)
{
    return pass_find(name) != NULL;
}

/* The stages outside the passes ("load", "output") that log entries [from,
 * to) hold, each once, in log order. */
static void text_stages(const ChangeLog *l, size_t from, size_t to, bool with_warnings, FILE *f)
{
    enum { MAX_STAGES = 8 };
    const char *done[MAX_STAGES];
    size_t n_done = 0;
    for (size_t i = from; i < to; i++) {
        const char *stage = l->items[i].pass;
        bool seen = is_pass(stage);
        for (size_t k = 0; k < n_done && !seen; k++)
            seen = strcmp(done[k], stage) == 0;
        if (seen)
            continue;
        if (n_done < MAX_STAGES)
            done[n_done++] = stage;
        text_pass(l, stage, with_warnings, f);
    }
}

/* Loading comes before the passes and writing after them; the passes in
 * pipeline order. */
void report_text(const Model *m, bool with_warnings, FILE *f)
{
    const ChangeLog *l = &m->log;
    size_t n, first = 0;
    const Pass *p = pass_list(&n);
    while (first < l->n && !is_pass(l->items[first].pass))
        first++;
    text_stages(l, 0, first, with_warnings, f);
    for (size_t k = 0; k < n; k++)
        text_pass(l, p[k].name, with_warnings, f);
    text_stages(l, first, l->n, with_warnings, f);
}

static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p;) {
        uint32_t c;
        size_t n = utf8_decode(p, &c);
        if (!n) /* not UTF-8: a JSON string cannot hold the byte */
            fputs("\\ufffd", f);
        else if (c == '"' || c == '\\')
            fprintf(f, "\\%c", (char)c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", (unsigned)c);
        else
            fwrite(p, 1, n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

static void json_entries(const Model *m, const char *pass, bool warnings, FILE *f)
{
    bool first = true;
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (e->warning != warnings || strcmp(e->pass, pass) != 0)
            continue;
        fputs(first ? "" : ", ", f);
        first = false;
        fputs(warnings ? "{\"subject\": " : "{\"action\": ", f);
        json_string(f, warnings ? e->subject : e->action);
        fputs(warnings ? ", \"message\": " : ", \"subject\": ", f);
        json_string(f, warnings ? e->detail : e->subject);
        fputc('}', f);
    }
}

static void json_passes(const Model *m, const Options *o, FILE *f)
{
    size_t n;
    const Pass *p = pass_list(&n);
    for (size_t k = 0; k < n; k++) {
        size_t changes = 0;
        for (size_t i = 0; i < m->log.n; i++)
            changes += !m->log.items[i].warning && strcmp(m->log.items[i].pass, p[k].name) == 0;
        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        json_string(f, p[k].name);
        fprintf(f, ", \"enabled\": %s, \"changes\": %zu, \"actions\": [",
                o->enabled[k] ? "true" : "false", changes);
        json_entries(m, p[k].name, false, f);
        fputs("], \"warnings\": [", f);
        json_entries(m, p[k].name, true, f);
        fputs("]}", f);
    }
}

static void json_warning(const char *stage, const char *subject, const char *message, FILE *f)
{
    fputs("{\"stage\": ", f);
    json_string(f, stage);
    fputs(", \"subject\": ", f);
    json_string(f, subject);
    fputs(", \"message\": ", f);
    json_string(f, message);
    fputc('}', f);
}

static void json_other_warnings(const Model *m, const Options *o, FILE *f)
{
    bool first = true;
    for (size_t i = 0; i < o->n_warnings; i++) {
        fputs(first ? "" : ", ", f);
        first = false;
        json_warning("options", o->warnings[i].option, o->warnings[i].message, f);
    }
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (!e->warning || is_pass(e->pass))
            continue;
        fputs(first ? "" : ", ", f);
        first = false;
        json_warning(e->pass, e->subject, e->detail, f);
    }
}

static void json_timings(const RunStats *st, FILE *f)
{
    size_t n;
    const Pass *p = pass_list(&n);
    bool first = true;
    for (size_t k = 0; k < n; k++) {
        if (!st->ran[k])
            continue;
        fputs(first ? "" : ", ", f);
        first = false;
        json_string(f, p[k].name);
        fprintf(f, ": %.3f", st->ms[k]);
    }
}

static void json_error(double x, FILE *f)
{
    if (isfinite(x))
        fprintf(f, "%.6g", x);
    else
        fputs("null", f); /* JSON has no infinity */
}

static void json_check(const CheckResult *c, FILE *f)
{
    bool differs = false;
    for (size_t k = 0; k < c->n; k++)
        differs |= c->e[k].differs;
    fprintf(f, "{\"runs\": %d, \"seed\": %llu, \"verdict\": \"%s\", \"outputs\": [", c->runs,
            (unsigned long long)c->seed, differs ? "differs" : "equal");
    for (size_t k = 0; k < c->n; k++) {
        const CheckError *e = &c->e[k];
        fputs(k ? ", {\"name\": " : "{\"name\": ", f);
        json_string(f, c->names[k]);
        fputs(", \"max_abs_error\": ", f);
        json_error(e->abs, f);
        fputs(", \"max_rel_error\": ", f);
        json_error(e->ref > 0 ? e->abs / e->ref : e->abs, f);
        fprintf(f, ", \"verdict\": \"%s\", \"why\": ", e->differs ? "differs" : "equal");
        if (e->why)
            json_string(f, e->why);
        else
            fputs("null", f);
        fputs("}", f);
    }
    fputs("]}", f);
}

void report_json(const Model *m, const Options *o, const RunStats *st, FILE *f)
{
    size_t warnings = o->n_warnings;
    for (size_t i = 0; i < m->log.n; i++)
        warnings += m->log.items[i].warning;
    fputs("{\"input\": ", f);
    json_string(f, o->input);
    fputs(", \"output\": ", f);
    json_string(f, options_output(o));
    fputs(", \"passes\": [", f);
    json_passes(m, o, f);
    fputs("], \"target_opset\": ", f);
    if (o->target_opset) {
        fprintf(f, "{\"opset\": %d, \"actions\": [", o->target_opset);
        json_entries(m, OPSET_STAGE, false, f);
        fputs("]}", f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ", \"rounds\": %d, \"timings\": {", st->rounds);
    json_timings(st, f);
    fputs("}, \"other_warnings\": [", f);
    json_other_warnings(m, o, f);
    fputs("], \"check\": ", f);
    if (st->check && st->check->done)
        json_check(st->check, f);
    else
        fputs("null", f);
    fprintf(f, ", \"warnings\": %zu}\n", warnings);
}
