/* staging.c - temporaries beside their targets, renamed together at the end. */
#include "staging.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write.h"

void staging_init(Staging *s, Arena *a)
{
    *s = (Staging){a, NULL, 0, 0};
}

/* Adds a slot for target whose temporary is named after target's folder;
 * NULL when out of memory. */
static StagedFile *staging_add(Staging *s, const char *target, Diag *d)
{
    char dir[4096];
    path_folder(target, dir, sizeof dir);
    size_t size = strlen(dir) + sizeof "/.ppqfmt-XXXXXX";
    char *tmp = arena_alloc(s->arena, size);
    if (!tmp || arena_grow(s->arena, (void **)&s->files, &s->cap, s->n + 1, sizeof *s->files)) {
        diag_set(d, PPQ_EINTERNAL, "out of memory");
        return NULL;
    }
    snprintf(tmp, size, "%s/.ppqfmt-XXXXXX", dir);
    s->files[s->n] = (StagedFile){target, tmp};
    return &s->files[s->n++];
}

static int staging_create_error(Staging *s, const char *target, Diag *d)
{
    char dir[4096];
    int e = errno;
    path_folder(target, dir, sizeof dir);
    s->files[--s->n].tmp = NULL; /* nothing was created */
    return diag_set(d, PPQ_EOUTPUT, "%s: cannot create a file in '%s': %s", target, dir,
                    strerror(e));
}

int staging_create(Staging *s, const char *target, mode_t mode, Diag *d)
{
    StagedFile *f = staging_add(s, target, d);
    if (!f)
        return -1;
    int fd = mkstemp(f->tmp);
    if (fd < 0) {
        staging_create_error(s, target, d);
        return -1;
    }
    if (fchmod(fd, mode)) {
        diag_set(d, PPQ_EOUTPUT, "%s: cannot set the mode of '%s': %s", target, f->tmp,
                 strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int staging_link(Staging *s, const char *src, const char *target, Diag *d)
{
    StagedFile *f = staging_add(s, target, d);
    if (!f)
        return d->code;
    /* mkstemp picks a free name; the link takes it over. */
    int fd = mkstemp(f->tmp);
    if (fd < 0)
        return staging_create_error(s, target, d);
    close(fd);
    unlink(f->tmp);
    if (link(src, f->tmp)) {
        int e = errno;
        s->files[--s->n].tmp = NULL;
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot hard-link '%s': %s", target, src,
                        strerror(e));
    }
    return 0;
}

int staging_commit(Staging *s, Diag *d)
{
    for (size_t i = 0; i < s->n; i++) {
        StagedFile *f = &s->files[i];
        if (rename(f->tmp, f->target)) {
            int rc = diag_set(d, PPQ_EOUTPUT, "%s: cannot replace: %s", f->target,
                              strerror(errno));
            staging_discard(s);
            return rc;
        }
        f->tmp = NULL;
    }
    return 0;
}

void staging_discard(Staging *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->files[i].tmp) {
            unlink(s->files[i].tmp);
            s->files[i].tmp = NULL;
        }
}
