/* source.c - map the input file, or slurp standard input. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_all(Source *s, int fd, Diag *d)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return diag_set(d, PPQ_EINTERNAL, "%s: out of memory", s->path);
        if (len == cap) {
            uint8_t *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                return diag_set(d, PPQ_EINTERNAL, "%s: out of memory", s->path);
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            return diag_set(d, PPQ_EINPUT, "%s: read error: %s", s->path, strerror(errno));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    s->bytes = (Bytes){buf, len};
    return 0;
}

int source_open(Source *s, const char *path, Diag *d)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->fd = -1;
    if (strcmp(path, "-") == 0)
        return read_all(s, STDIN_FILENO, d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, PPQ_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = diag_set(d, PPQ_EINPUT, "%s: cannot stat: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        rc = diag_set(d, PPQ_EINPUT, "%s: is a directory", path);
    } else if (!S_ISREG(st.st_mode)) {
        rc = read_all(s, fd, d); /* a pipe or device: no mapping */
    } else if (st.st_size == 0) {
        rc = diag_set(d, PPQ_EINPUT, "%s: empty file is not an ONNX model", path);
    } else {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
            rc = diag_set(d, PPQ_EINPUT, "%s: cannot map: %s", path, strerror(errno));
        else {
            s->bytes = (Bytes){p, (size_t)st.st_size};
            s->mapped = true;
            s->fd = fd; /* kept: the writer copies from it */
            s->is_file = true;
            s->dev = st.st_dev;
            s->ino = st.st_ino;
        }
    }
    if (!s->mapped)
        close(fd);
    return rc;
}

void source_close(Source *s)
{
    if (s->mapped) {
        munmap((void *)s->bytes.ptr, s->bytes.len);
        close(s->fd);
    }
    else
        free((void *)s->bytes.ptr);
    s->bytes = (Bytes){0};
}
