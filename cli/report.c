/* report.c - what the passes did, for people (text) and programs (JSON).
 *
 * Text, one line per pass that changed something, then that pass's warnings:
 *   isolated: removed 1 (dead_sig); removed initializer 1 (unused_scale)
 *   identity: warning: Y: kept Identity: ...
 *
 * JSON schema (stable; new keys may be added, none removed):
 *   {"input": str, "output": str|null,
 *    "passes": [{"name": str, "enabled": bool, "changes": int,
 *                "actions": [{"action": str, "subject": str}],
 *                "warnings": [{"subject": str, "message": str}]}],
 *    "timings": {pass name: milliseconds (number), for each pass that ran},
 *    "other_warnings": [{"stage": "load"|"output", "subject": str, "message": str}]
 *                      (warnings raised outside the passes),
 *    "warnings": int (all warnings of the run)}
 */
#include "report.h"

#include <string.h>

#include "../formatter/pass.h"
#include "term.h"

enum { MAX_NAMES = 8 }; /* names listed per action before "..." */

void report_warnings(const Model *m, FILE *f)
{
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (e->warning)
            fprintf(f, "ppqfmt: %swarning:%s %s: %s: %s\n", term_colour(TC_WARN),
                    term_colour(TC_RESET), e->pass, e->subject, e->detail ? e->detail : "");
    }
}

static bool is_action(const ChangeEntry *e, const char *action)
{
    return !e->warning && strcmp(e->action, action) == 0;
}

/* Is entry i the first of its action in [start, i]? Searching backwards
 * stops at once in the usual long run of one action. */
static bool first_of_action(const ChangeLog *l, size_t start, size_t i)
{
    for (size_t j = i; j-- > start;)
        if (is_action(&l->items[j], l->items[i].action))
            return false;
    return true;
}

/* "removed 2 (a, b)" for the entries of [i, end) with entry i's action. */
static void text_action(const ChangeLog *l, size_t i, size_t end, FILE *f)
{
    const char *action = l->items[i].action;
    size_t count = 0, shown = 0;
    for (size_t j = i; j < end; j++)
        count += is_action(&l->items[j], action);
    fprintf(f, "%s %zu (", action, count);
    for (size_t j = i; j < end && shown <= MAX_NAMES; j++) {
        if (!is_action(&l->items[j], action))
            continue;
        if (shown < MAX_NAMES)
            fprintf(f, "%s%s", shown ? ", " : "", l->items[j].subject);
        else
            fputs(", ...", f);
        shown++;
    }
    fputc(')', f);
}

/* The report of the log entries [start, end), which all belong to one pass. */
static void text_pass(const ChangeLog *l, size_t start, size_t end, bool with_warnings, FILE *f)
{
    const char *pass = l->items[start].pass, *bold = term_colour(TC_BOLD);
    const char *reset = term_colour(TC_RESET);
    bool any = false;
    for (size_t i = start; i < end; i++) {
        if (l->items[i].warning || !first_of_action(l, start, i))
            continue;
        if (any)
            fputs("; ", f);
        else
            fprintf(f, "%s%s%s: ", bold, pass, reset);
        any = true;
        text_action(l, i, end, f);
    }
    if (any)
        fputc('\n', f);
    for (size_t i = start; i < end && with_warnings; i++) {
        const ChangeEntry *e = &l->items[i];
        if (e->warning)
            fprintf(f, "%s%s%s: %swarning:%s %s: %s\n", bold, pass, reset, term_colour(TC_WARN),
                    reset, e->subject, e->detail ? e->detail : "");
    }
}

/* The passes run one after the other, so each one's entries are contiguous. */
void report_text(const Model *m, bool with_warnings, FILE *f)
{
    const ChangeLog *l = &m->log;
    size_t end;
    for (size_t start = 0; start < l->n; start = end) {
        for (end = start + 1; end < l->n; end++)
            if (strcmp(l->items[end].pass, l->items[start].pass) != 0)
                break;
        text_pass(l, start, end, with_warnings, f);
    }
}

static void json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
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

static bool is_pass(const char *name)
{
    size_t n;
    const Pass *p = pass_list(&n);
    for (size_t k = 0; k < n; k++)
        if (strcmp(p[k].name, name) == 0)
            return true;
    return false;
}

static void json_other_warnings(const Model *m, FILE *f)
{
    bool first = true;
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (!e->warning || is_pass(e->pass))
            continue;
        fputs(first ? "{\"stage\": " : ", {\"stage\": ", f);
        first = false;
        json_string(f, e->pass);
        fputs(", \"subject\": ", f);
        json_string(f, e->subject);
        fputs(", \"message\": ", f);
        json_string(f, e->detail);
        fputc('}', f);
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

void report_json(const Model *m, const Options *o, const RunStats *st, FILE *f)
{
    size_t warnings = 0;
    for (size_t i = 0; i < m->log.n; i++)
        warnings += m->log.items[i].warning;
    fputs("{\"input\": ", f);
    json_string(f, o->input);
    fputs(", \"output\": ", f);
    json_string(f, options_output(o));
    fputs(", \"passes\": [", f);
    json_passes(m, o, f);
    fputs("], \"timings\": {", f);
    json_timings(st, f);
    fputs("}, \"other_warnings\": [", f);
    json_other_warnings(m, f);
    fprintf(f, "], \"warnings\": %zu}\n", warnings);
}
