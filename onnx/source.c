/* source.c - map the input file, or a copy of standard input. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "tempfile.h"

enum { SOURCE_HEAD = 1024, SOURCE_BUF = 1 << 20 };

static const char *source_name(const Source *s)
{
    return strcmp(s->path, "-") ? s->path : "standard input";
}

/* An unlinked file in $TMPDIR (or /tmp) to spool a stream into; -1 on
 * failure with errno set. */
static int spool_file(const char **dir)
{
    const char *tmpdir = getenv("TMPDIR");
    *dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
    int fd = open(*dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char path[PATH_MAX + 32]; /* a file system without O_TMPFILE: a name, at once removed */
    fd = tempfile_create(*dir, path, sizeof path);
    if (fd >= 0)
        tempfile_remove(path);
    return fd;
}

static ssize_t read_retry(int fd, uint8_t *buf, size_t n)
{
    ssize_t r;
    while ((r = read(fd, buf, n)) < 0 && errno == EINTR)
        ;
    return r;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copies in to out (*len: the bytes copied), checking the first SOURCE_HEAD
 * bytes before reading on. 1: they cannot start a model; -1: a read error
 * (*read_failed) or a write error, with errno set. */
static int spool_copy(int in, int out, uint8_t *buf, size_t *len, bool *read_failed)
{
    size_t n = 0;
    ssize_t r = 1;
    while (n < SOURCE_HEAD && (r = read_retry(in, buf + n, SOURCE_HEAD - n)) > 0)
        n += (size_t)r;
    if (n == SOURCE_HEAD && !onnx_head_ok((Bytes){buf, n}))
        return 1;
    for (*len = 0; n > 0; n = r > 0 ? (size_t)r : 0) {
        if (write_all(out, buf, n))
            return -1;
        *len += n;
        if (r > 0) /* not yet at the end, nor at an error */
            r = read_retry(in, buf, SOURCE_BUF);
    }
    *read_failed = r < 0;
    return r < 0 ? -1 : 0;
}

/* Maps len bytes of fd, which the source then owns. */
static int source_map(Source *s, int fd, size_t len, Diag *d)
{
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        return diag_set(d, PPQ_EINPUT, "%s: cannot map: %s", source_name(s), strerror(errno));
    s->bytes = (Bytes){p, len};
    s->mapped = true;
    s->fd = fd; /* kept: the writer copies from it */
    return 0;
}

/* Standard input, a pipe, a device, or a file that reports size 0 though it
 * has bytes (/proc): copied to an unlinked temporary file, which is then
 * mapped like an input file, so memory stays flat whatever the size. */
static int spool(Source *s, int in, Diag *d)
{
    const char *dir;
    int fd = spool_file(&dir);
    if (fd < 0)
        return diag_set(d, PPQ_EINPUT, "%s: cannot create a temporary file in '%s' to read it "
                        "into (TMPDIR chooses the folder): %s", source_name(s), dir,
                        strerror(errno));
    uint8_t *buf = malloc(SOURCE_BUF);
    size_t len = 0;
    bool read_failed = false;
    int rc = buf ? spool_copy(in, fd, buf, &len, &read_failed) : -1;
    int e = errno;
    free(buf);
    if (rc == 1)
        rc = diag_set(d, PPQ_EINPUT, "%s: not an ONNX model: its first %d bytes are not "
                      "protobuf ModelProto fields", source_name(s), SOURCE_HEAD);
    else if (rc && !buf)
        rc = diag_set(d, PPQ_EINTERNAL, "%s: out of memory", source_name(s));
    else if (rc && read_failed)
        rc = diag_set(d, PPQ_EINPUT, "%s: read error: %s", source_name(s), strerror(e));
    else if (rc)
        rc = diag_set(d, PPQ_EINPUT, "%s: cannot copy it into a temporary file in '%s' "
                      "(TMPDIR chooses the folder): %s", source_name(s), dir, strerror(e));
    else if (len == 0)
        rc = diag_set(d, PPQ_EINPUT, "%s: empty input is not an ONNX model", source_name(s));
    if (!rc)
        rc = source_map(s, fd, len, d);
    if (rc)
        close(fd);
    return rc;
}

int source_open(Source *s, const char *path, Diag *d)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->fd = -1;
    if (strcmp(path, "-") == 0)
        return spool(s, STDIN_FILENO, d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, PPQ_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = diag_set(d, PPQ_EINPUT, "%s: cannot stat: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = diag_set(d, PPQ_EINPUT, "%s: is a directory", path);
    else if (!S_ISREG(st.st_mode) || st.st_size == 0)
        rc = spool(s, fd, d); /* a pipe, a device, or /proc: read what comes */
    else if (!(rc = source_map(s, fd, (size_t)st.st_size, d))) {
        s->is_file = true;
        s->dev = st.st_dev;
        s->ino = st.st_ino;
    }
    if (s->fd != fd)
        close(fd);
    return rc;
}

void source_close(Source *s)
{
    if (s->mapped) {
        munmap((void *)s->bytes.ptr, s->bytes.len);
        close(s->fd);
    }
    s->bytes = (Bytes){0};
}
