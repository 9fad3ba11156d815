/* write.c - segments -> file descriptor, atomically for files. */
#include "write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "encode.h"
#include "external.h"

static int encode(const Model *m, Arena *a, Out *o, const EncodeOptions *opt, Diag *d)
{
    out_init(o, a);
    o->opt = opt;
    if (onnx_encode(m, o) || (opt && opt->data && opt->data->failed))
        return diag_set(d, PPQ_EINTERNAL, "out of memory while encoding the model");
    return 0;
}

/* Writes n memory segments with writev, resuming after short writes. */
static int write_memory(int fd, const Seg *segs, size_t count)
{
    size_t i = 0, off = 0; /* off: bytes of segs[i] already written */
    while (i < count) {
        struct iovec iov[IOV_MAX > 1024 ? 1024 : IOV_MAX];
        int n = 0;
        for (size_t k = i; k < count && n < (int)(sizeof iov / sizeof *iov); k++, n++) {
            size_t skip = k == i ? off : 0;
            iov[n].iov_base = (void *)(segs[k].p + skip);
            iov[n].iov_len = segs[k].len - skip;
        }
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        size_t left = (size_t)w;
        while (i < count && left >= segs[i].len - off) {
            left -= segs[i].len - off;
            i++;
            off = 0;
        }
        off += left;
    }
    return 0;
}

/* Copies a segment that lies in a mapped file with copy_file_range, so its
 * bytes never pass through (or stay in) this process's memory. Falls back to
 * writing from the mapping where the kernel cannot copy between the files. */
static int copy_segment(int fd, const MappedFile *f, Seg s)
{
    while (s.len) {
        off_t off = (off_t)(s.p - f->base);
        ssize_t n = copy_file_range(f->fd, &off, fd, NULL, s.len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
                errno != EOPNOTSUPP)
                return -1;
            return write_memory(fd, &s, 1);
        }
        s.p += n;
        s.len -= (size_t)n;
    }
    return 0;
}

enum { COPY_MIN = 1 << 16, GEN_CHUNK = 1 << 20, GEN_BUFS = 2 };

static size_t chunk_len(const Seg *s, size_t done)
{
    return s->len - done < GEN_CHUNK ? s->len - done : GEN_CHUNK;
}

/* Computes a segment's bytes chunk by chunk and writes each. */
static int write_generated_serial(int fd, const Seg *s, uint8_t *buf)
{
    int rc = 0;
    for (size_t done = 0; done < s->len && !rc; done += GEN_CHUNK) {
        s->gen->fill(s->gen->ctx, s->gen_off + done, buf, chunk_len(s, done));
        rc = write_memory(fd, &(Seg){buf, chunk_len(s, done), NULL, 0}, 1);
    }
    return rc;
}

/* Filling a chunk (reading the source weights and scaling them) costs about
 * as much as writing it, so a second thread fills one buffer while this one
 * writes the other (600 MB of folded weights: 0.25 s on one thread, 0.17 s
 * on two; `make bench`). The chunks go round GEN_BUFS buffers: `empty`
 * counts the buffers free to fill, `full` those ready to write. */
typedef struct Filler {
    const Seg *s;
    uint8_t *buf;
    sem_t empty, full;
    atomic_bool stop; /* the writer failed: fill no more */
} Filler;

static void *fill_chunks(void *arg)
{
    Filler *f = arg;
    size_t k = 0;
    for (size_t done = 0; done < f->s->len; done += GEN_CHUNK, k++) {
        while (sem_wait(&f->empty) && errno == EINTR)
            ;
        if (atomic_load(&f->stop))
            break;
        f->s->gen->fill(f->s->gen->ctx, f->s->gen_off + done, f->buf + k % GEN_BUFS * GEN_CHUNK,
                        chunk_len(f->s, done));
        sem_post(&f->full);
    }
    return NULL;
}

static int write_filled(int fd, Filler *f)
{
    size_t k = 0;
    for (size_t done = 0; done < f->s->len; done += GEN_CHUNK, k++) {
        while (sem_wait(&f->full) && errno == EINTR)
            ;
        Seg chunk = {f->buf + k % GEN_BUFS * GEN_CHUNK, chunk_len(f->s, done), NULL, 0};
        if (write_memory(fd, &chunk, 1))
            return -1;
        sem_post(&f->empty);
    }
    return 0;
}

static int write_generated(int fd, const Seg *s)
{
    Filler f = {.s = s, .buf = malloc(GEN_BUFS * GEN_CHUNK)};
    if (!f.buf)
        return -1;
    int rc;
    pthread_t t;
    sem_init(&f.empty, 0, GEN_BUFS);
    sem_init(&f.full, 0, 0);
    atomic_init(&f.stop, false);
    if (s->len <= GEN_CHUNK || pthread_create(&t, NULL, fill_chunks, &f)) {
        rc = write_generated_serial(fd, s, f.buf);
    } else {
        rc = write_filled(fd, &f);
        int saved = errno;
        atomic_store(&f.stop, true);
        sem_post(&f.empty); /* wake the filler if it waits for a buffer */
        pthread_join(t, NULL);
        errno = saved;
    }
    sem_destroy(&f.empty);
    sem_destroy(&f.full);
    free(f.buf);
    return rc;
}

static int write_segments(int fd, const Out *o, const Model *m)
{
    struct stat st;
    bool regular = m && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    size_t start = 0;
    for (size_t i = 0; i <= o->n; i++) {
        const MappedFile *f = NULL;
        const Seg *g = i < o->n && o->segs[i].gen ? &o->segs[i] : NULL;
        if (i < o->n && !g && regular && o->segs[i].len >= COPY_MIN)
            f = model_find_mapping(m, o->segs[i].p, o->segs[i].len);
        if (i < o->n && !f && !g)
            continue;
        if (write_memory(fd, o->segs + start, i - start) ||
            (f && copy_segment(fd, f, o->segs[i])) || (g && write_generated(fd, g)))
            return -1;
        start = i + 1;
    }
    return 0;
}

static int write_stdout(const Out *o, const Model *m, Diag *d)
{
    if (isatty(STDOUT_FILENO))
        return diag_set(d, PPQ_EOUTPUT,
                        "refusing to write a binary model to a terminal (use -o FILE or a pipe)");
    if (write_segments(STDOUT_FILENO, o, m))
        return diag_set(d, PPQ_EOUTPUT, "standard output: %s", strerror(errno));
    return 0;
}

void path_folder(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == path)
        snprintf(dir, size, "/");
    else
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/* An existing device or pipe (/dev/null, /dev/stdout, a fifo) is written in
 * place: renaming a file over it would replace the device node. */
static int write_special(const Out *o, const Model *m, const char *path, Diag *d)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot open: %s", path, strerror(errno));
    int rc = write_segments(fd, o, m) ? diag_set(d, PPQ_EOUTPUT, "%s: write error: %s", path,
                                              strerror(errno))
                                   : 0;
    if (close(fd) && !rc)
        rc = diag_set(d, PPQ_EOUTPUT, "%s: write error: %s", path, strerror(errno));
    return rc;
}

static int write_file(const Out *o, const Model *m, const char *path, Diag *d)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 32], real[PATH_MAX];
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return S_ISDIR(st.st_mode) ? diag_set(d, PPQ_EOUTPUT, "%s: is a directory", path)
                                   : write_special(o, m, path, d);
    /* Replace the file a symlink points to, not the symlink. */
    if (stat(path, &st) == 0 && realpath(path, real))
        path = real;
    path_folder(path, dir, sizeof dir);
    snprintf(tmp, sizeof tmp, "%s/.ppqfmt-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot create a file in '%s': %s", path, dir,
                        strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    int rc = 0;
    if (fchmod(fd, 0666 & ~mask) || write_segments(fd, o, m))
        rc = diag_set(d, PPQ_EOUTPUT, "%s: write error: %s", path, strerror(errno));
    if (close(fd) && !rc)
        rc = diag_set(d, PPQ_EOUTPUT, "%s: write error: %s", path, strerror(errno));
    if (!rc && rename(tmp, path))
        rc = diag_set(d, PPQ_EOUTPUT, "%s: cannot replace: %s", path, strerror(errno));
    if (rc)
        unlink(tmp);
    return rc;
}

int check_output_is_not_input(const char *path, const Source *src, Diag *d)
{
    struct stat st;
    if (!src->is_file || strcmp(path, "-") == 0 || stat(path, &st) != 0)
        return 0;
    if (st.st_dev == src->dev && st.st_ino == src->ino)
        return diag_set(d, PPQ_EUSAGE, "%s: output is the input file; write elsewhere", path);
    return 0;
}

/* protobuf refuses messages of 2 GiB and more. */
static int check_size(const Out *o, const char *path, bool external, Diag *d)
{
    if (o->size <= INT32_MAX)
        return 0;
    return diag_set(d, PPQ_EOUTPUT,
                    "%s: the model would be %zu bytes, over protobuf's 2 GiB limit; %s", path,
                    o->size, external ? "lower --size-threshold"
                                      : "add --external-data=FILE to store weights beside it");
}

static int write_model(const Out *o, const Model *m, const WriteOptions *wo, Diag *d)
{
    if (check_size(o, wo->path, wo->external_data != NULL, d))
        return d->code;
    return strcmp(wo->path, "-") == 0 ? write_stdout(o, m, d) : write_file(o, m, wo->path, d);
}

/* The data file for --external-data, or, when the passes replaced tensors
 * that were stored externally, "<output>.data" so they stay external. */
static const char *data_file_name(const Model *m, const WriteOptions *wo, Arena *a)
{
    if (wo->external_data)
        return wo->external_data;
    if (!model_has_new_external(m) || strcmp(wo->path, "-") == 0)
        return NULL;
    const char *base = strrchr(wo->path, '/') ? strrchr(wo->path, '/') + 1 : wo->path;
    char *name = arena_alloc(a, strlen(base) + 6);
    if (name)
        sprintf(name, "%s.data", base);
    return name;
}

/* Refuses a target that is one of the files the model is read from (the
 * input or one of its external data files): writing it would change the
 * input, or the bytes still to be copied from it. */
static int check_not_mapped(const Model *m, const char *path, Diag *d)
{
    struct stat out, in;
    if (strcmp(path, "-") == 0 || stat(path, &out) != 0)
        return 0;
    for (size_t i = 0; i < m->n_maps; i++)
        if (fstat(m->maps[i].fd, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return diag_set(d, PPQ_EUSAGE, "%s: is a file the model is read from; write elsewhere",
                            path);
    return 0;
}

int onnx_write(const Model *m, const WriteOptions *wo, Diag *d)
{
    Arena a = {0};
    Out o = {0}, data = {0};
    char dir[PATH_MAX], data_path[2 * PATH_MAX];
    const char *data_name = data_file_name(m, wo, &a);
    EncodeOptions opt = {NULL, data_name, wo->external_data ? wo->size_threshold : SIZE_MAX};
    int rc = 0;
    path_folder(wo->path, dir, sizeof dir);
    if (data_name) {
        out_init(&data, &a);
        opt.data = &data;
        rc = external_name_ok(data_name, d);
        snprintf(data_path, sizeof data_path, "%s/%s", dir, data_name);
    }
    if (!rc)
        rc = check_not_mapped(m, wo->path, d);
    if (!rc && data_name)
        rc = check_not_mapped(m, data_path, d);
    if (!rc)
        rc = encode(m, &a, &o, &opt, d);
    if (!rc)
        rc = external_check_target(m, wo, &opt, d);
    if (!rc && data_name)
        rc = write_file(&data, m, data_path, d);
    if (!rc)
        rc = external_copy_beside(m, wo, &opt, dir, d);
    if (!rc)
        rc = write_model(&o, m, wo, d);
    out_free(&o);
    if (data_name)
        out_free(&data);
    arena_free(&a);
    return rc;
}

int onnx_write_mem(const Model *m, uint8_t **buf, size_t *len, Diag *d)
{
    Arena a = {0};
    Out o;
    int rc = encode(m, &a, &o, NULL, d);
    if (!rc && !(*buf = malloc(o.size ? o.size : 1)))
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
    if (!rc) {
        size_t off = 0;
        for (size_t i = 0; i < o.n; i++) {
            const Seg *sg = &o.segs[i];
            if (sg->gen)
                sg->gen->fill(sg->gen->ctx, sg->gen_off, *buf + off, sg->len);
            else
                memcpy(*buf + off, sg->p, sg->len);
            off += sg->len;
        }
        *len = off;
    }
    out_free(&o);
    arena_free(&a);
    return rc;
}
