/* graph_log.c - the change log passes write to (log.h): each change and
 * warning under the stage that made it, a warning said once; and dropping
 * stale training info, a decision that is only a warning and a flag. */
#include "graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void log_entry(Model *m, const char *action, const char *subject, const char *detail,
                      bool warning, bool copy)
{
    ChangeLog *l = &m->log;
    Arena *a = &m->arena;
    if (l->count_only && !warning) {
        l->n_changes++;
        return;
    }
    if (LIST_GROW(l->items, l->cap, l->n + 1)) {
        m->oom = true;
        return;
    }
    ChangeEntry *e = &l->items[l->n++];
    e->pass = l->pass ? l->pass : "load";
    e->action = action;
    e->subject = !subject ? "" : copy ? arena_strdup(a, subject) : subject;
    e->detail = detail;
    e->warning = warning;
    l->n_changes += !warning;
}

static void log_add(Model *m, const char *action, const char *subject, const char *detail,
                    bool warning)
{
    log_entry(m, action, subject, detail, warning, true);
}

void model_note_var(Model *m, const char *action, const Var *v)
{
    log_entry(m, action, v->name, NULL, false, false);
}

size_t model_change_count(const Model *m)
{
    return m->log.n_changes;
}

void model_note(Model *m, const char *action, const char *subject)
{
    log_add(m, action, subject, NULL, false);
}

void model_warn(Model *m, const char *subject, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* The pipeline may run a pass again: say each thing once. */
    const char *pass = m->log.pass ? m->log.pass : "load";
    const char *subj = subject ? subject : "";
    size_t n = strlen(pass) + strlen(subj) + strlen(buf) + 3;
    char *key = malloc(n);
    if (!key) {
        m->oom = true;
        return;
    }
    snprintf(key, n, "%s\x1f%s\x1f%s", pass, subj, buf);
    bool seen = namemap_get(&m->warned, key) != NULL;
    const char *kept = seen ? NULL : arena_strdup(&m->arena, key);
    free(key);
    if (seen)
        return;
    if (!kept || namemap_put(&m->warned, kept, (void *)kept))
        m->oom = true;
    log_add(m, "warning", subject, arena_strdup(&m->arena, buf), true);
}

void model_drop_stale_training_info(Model *m)
{
    if (!m->n_training_info || !model_change_count(m))
        return;
    const char *pass = m->log.pass;
    m->log.pass = "output";
    model_warn(m, "training_info", "dropped (%zu entr%s): it trains parameters by name and the "
               "passes changed them; the output is for inference (--passes=none keeps it)",
               m->n_training_info, m->n_training_info == 1 ? "y" : "ies");
    m->log.pass = pass;
    m->drop_training_info = true;
    m->changed = true;
}
