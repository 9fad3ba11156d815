/* staging.c - temporaries beside their targets, renamed together at the end. */
#include "staging.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tempfile.h"
#include "path.h"

void staging_init(Staging *s, Arena *a)
{
    *s = (Staging){a, NULL, 0, 0};
}

/* Creates a registered temporary (tempfile.h: removed if a signal stops the
 * run) beside target in a new slot; its descriptor, or -1 with a message. */
static int staging_add(Staging *s, const char *target, Diag *d)
{
    char dir[4096];
    path_folder(target, dir, sizeof dir);
    size_t size = strlen(dir) + sizeof "/.ppqfmt-XXXXXX";
    char *tmp = arena_alloc(s->arena, size);
    if (!tmp || arena_grow(s->arena, (void **)&s->files, &s->cap, s->n + 1, sizeof *s->files))
        return diag_set(d, PPQ_EINTERNAL, "out of memory"), -1;
    int fd = tempfile_create(dir, tmp, size);
    if (fd < 0) {
        bool denied = errno == EACCES || errno == EPERM || errno == EROFS;
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot create a temporary file in the folder "
                        "'%s': %s%s", target, dir, strerror(errno),
                        denied ? " (the output is written there first and then renamed over "
                                 "the target, so the folder must be writable, not only the "
                                 "file)" : ""), -1;
    }
    s->files[s->n++] = (StagedFile){target, tmp};
    return fd;
}

int staging_create(Staging *s, const char *target, mode_t mode, Diag *d)
{
    int fd = staging_add(s, target, d);
    if (fd >= 0 && fchmod(fd, mode)) {
        diag_set(d, PPQ_EOUTPUT, "%s: cannot set the mode of '%s': %s", target,
                 s->files[s->n - 1].tmp, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int staging_link(Staging *s, const char *src, const char *target, Diag *d)
{
    /* The temporary reserves a free registered name; the link replaces it. */
    int fd = staging_add(s, target, d);
    if (fd < 0)
        return d->code;
    close(fd);
    StagedFile *f = &s->files[s->n - 1];
    unlink(f->tmp);
    if (link(src, f->tmp)) {
        int e = errno;
        tempfile_remove(f->tmp);
        f->tmp = NULL;
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
        tempfile_done(f->tmp);
        f->tmp = NULL;
    }
    return 0;
}

void staging_discard(Staging *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->files[i].tmp) {
            tempfile_remove(s->files[i].tmp);
            s->files[i].tmp = NULL;
        }
}
