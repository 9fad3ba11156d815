/* log.h - what the passes did, for --report.
 *
 * Each entry names the pass, an action ("removed", "folded", "renamed", ...),
 * the node or tensor it concerns and optional detail. Warnings are entries too,
 * flagged, so a report shows them next to the pass that raised them. */
#ifndef PPQ_LOG_H
#define PPQ_LOG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ChangeEntry {
    const char *pass;
    const char *action;
    const char *subject;
    const char *detail; /* may be NULL */
    bool warning;
} ChangeEntry;

/* items grows with realloc (an arena would keep every outgrown copy: a
 * million-node model logs millions of entries). */
typedef struct ChangeLog {
    ChangeEntry *items;
    size_t n, cap;
    size_t n_changes; /* entries that are not warnings */
    const char *pass; /* the pass now running */
    /* Changes are counted but not kept (warnings always are): set by a
     * caller that will print no report, as a million-node model's passes
     * log millions of changes nobody reads. */
    bool count_only;
} ChangeLog;

struct Model;
/* How many changes (not warnings) the passes have recorded so far. */
size_t model_change_count(const struct Model *m);
void model_note(struct Model *m, const char *action, const char *subject);
void model_warn(struct Model *m, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
