/* report.c - what the passes did, for people (text) and programs (JSON).
 *
 * JSON schema (stable; new keys may be added, none removed):
 *   {"input": str, "output": str|null,
 *    "passes": [{"name": str, "enabled": bool, "changes": int,
 *                "actions": [{"action": str, "subject": str}],
 *                "warnings": [{"subject": str, "message": str}]}]}
 */
#include "report.h"

#include <string.h>

#include "../formatter/pass.h"

void report_warnings(const Model *m, FILE *f)
{
    for (size_t i = 0; i < m->log.n; i++) {
        const ChangeEntry *e = &m->log.items[i];
        if (e->warning)
            fprintf(f, "ppqfmt: warning: %s: %s: %s\n", e->pass, e->subject, e->detail);
    }
}

/* "constant: folded 2 (a, b); removed 1 (c)" for each pass that changed something. */
void report_text(const Model *m, FILE *f)
{
    size_t n;
    const Pass *p = pass_list(&n);
    for (size_t k = 0; k < n; k++) {
        const char *last_action = NULL;
        size_t shown = 0;
        for (size_t i = 0; i < m->log.n; i++) {
            const ChangeEntry *e = &m->log.items[i];
            if (e->warning || strcmp(e->pass, p[k].name) != 0)
                continue;
            if (!last_action || strcmp(last_action, e->action) != 0) {
                size_t count = 0;
                for (size_t j = i; j < m->log.n; j++)
                    count += !m->log.items[j].warning && strcmp(m->log.items[j].pass, e->pass) == 0 &&
                             strcmp(m->log.items[j].action, e->action) == 0;
                fprintf(f, "%s%s %s %zu: ", last_action ? "\n" : "", p[k].name, e->action, count);
                last_action = e->action;
                shown = 0;
            }
            if (shown < 8)
                fprintf(f, "%s%s", shown ? ", " : "", e->subject);
            else if (shown == 8)
                fputs(", ...", f);
            shown++;
        }
        if (last_action)
            fputc('\n', f);
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

void report_json(const Model *m, const Options *o, FILE *f)
{
    size_t n;
    const Pass *p = pass_list(&n);
    fputs("{\"input\": ", f);
    json_string(f, o->input);
    fputs(", \"output\": ", f);
    json_string(f, o->dry_run ? NULL : o->output ? o->output : "-");
    fputs(", \"passes\": [", f);
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
    fputs("]}\n", f);
}
