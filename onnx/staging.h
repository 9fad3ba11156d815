/* staging.h - the files one run writes, made complete before any is put in
 * place.
 *
 * Each target (the model, its data files) is first written under a temporary
 * name in the target's own folder; only when every one is complete are they
 * renamed over their targets, data files first and the model last, so a
 * failed run leaves no file replaced or half written and a model is never in
 * place before the data it names. */
#ifndef PPQ_STAGING_H
#define PPQ_STAGING_H

#include <stdbool.h>
#include <sys/types.h>

#include "../core/ir/arena.h"
#include "../core/ir/diag.h"

typedef struct StagedFile {
    const char *target; /* where it goes */
    char *tmp;          /* the temporary's name; NULL once renamed or removed */
} StagedFile;

typedef struct Staging {
    Arena *arena; /* owns the names */
    StagedFile *files;
    size_t n, cap;
} Staging;

void staging_init(Staging *s, Arena *a);
/* Creates an empty temporary beside target with the given mode; its open
 * descriptor, or -1 with a message in d (exit code 3). */
int staging_create(Staging *s, const char *target, mode_t mode, Diag *d);
/* Puts a hard link to src under a temporary name beside target; 0 or the
 * error code (with a message in d), like staging_commit. */
int staging_link(Staging *s, const char *src, const char *target, Diag *d);
/* Renames every temporary over its target, in the order they were staged.
 * On failure the ones not yet renamed are removed. */
int staging_commit(Staging *s, Diag *d);
/* Removes every temporary still staged (after a failure). */
void staging_discard(Staging *s);

#endif
