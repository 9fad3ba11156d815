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

#include "../core/ir/mapping.h"
#include "encode.h"
#include "external_write.h"
#include "path.h"
#include "staging.h"
#include "tempfile.h"

static int encode(const Model *m, Arena *a, Out *o, const EncodeOptions *opt, Diag *d)
{
    out_init(o, a);
    o->opt = opt;
    if (onnx_encode(m, o) || (opt && opt->data && opt->data->failed))
        return diag_set(d, PPQ_EINTERNAL, "out of memory while encoding the model");
    return 0;
}

enum { COPY_MIN = 1 << 16, GEN_CHUNK = 1 << 20, GEN_BUFS = 2 };

/* Bytes handed to the kernel per write or splice call. The kernel gives a
 * call's bytes page-cache folios as large as the call (up to megabytes),
 * taken from large free blocks: on a virtual machine whose balloon reports
 * free memory to the host, exactly the blocks the host has taken back, so
 * each of their pages traps on first touch; 64 KiB calls (cp's size) do
 * not take such blocks. Smaller calls cost more calls and more kernel
 * bookkeeping per byte. */
enum { WRITE_MAX = 1 << 16 };

/* Writes count segments with writev, at most WRITE_MAX bytes a call,
 * resuming after short writes. A computed segment among them (one under
 * COPY_MIN bytes: a folded weight of a small layer) is filled into scratch
 * (GEN_CHUNK bytes) on the way, so a model of a million small layers writes
 * its many computed weights with the bytes around them, not in calls of
 * their own. A fill runs again for a segment a call cut (fills keep no
 * state). */
static int write_memory(int fd, const Seg *segs, size_t count, uint8_t *scratch)
{
    size_t i = 0, off = 0; /* off: bytes of segs[i] already written */
    while (i < count) {
        struct iovec iov[IOV_MAX > 1024 ? 1024 : IOV_MAX];
        int n = 0;
        size_t used = 0, total = 0;
        for (size_t k = i; k < count && n < (int)(sizeof iov / sizeof *iov) && total < WRITE_MAX;
             k++, n++) {
            const uint8_t *p = segs[k].p;
            if (segs[k].gen) {
                if (n && used + segs[k].len > GEN_CHUNK)
                    break;
                segs[k].gen->fill(segs[k].gen->ctx, segs[k].gen_off, scratch + used, segs[k].len);
                p = scratch + used;
                used += segs[k].len;
            }
            size_t skip = k == i ? off : 0, len = segs[k].len - skip;
            iov[n].iov_base = (void *)(p + skip);
            iov[n].iov_len = len < WRITE_MAX - total ? len : WRITE_MAX - total;
            total += iov[n].iov_len;
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
        if (n == 0) { /* the file ends before its mapping: it was truncated */
            errno = EFAULT;
            return -1;
        }
        if (n < 0) {
            if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                return -1;
            return write_memory(fd, &s, 1, NULL);
        }
        s.p += n;
        s.len -= (size_t)n;
    }
    return 0;
}

static size_t chunk_len(const Seg *s, size_t done)
{
    return s->len - done < GEN_CHUNK ? s->len - done : GEN_CHUNK;
}

/* Where computed bytes go. Into a regular file they go through a pipe
 * (vmsplice, then splice) rather than write(): the kernel then copies them
 * from its own mapping of the buffer's pages instead of from this process's
 * addresses, which is the writer's main cost on a virtual machine. Each
 * chunk is drained from the pipe into the file before its buffer is reused,
 * and splice into a regular file copies the bytes, so the file never shares
 * a page with the buffer. */
typedef struct GenOut {
    int fd;
    uint8_t *bufs; /* the filler's buffers, allocated at the first generated
                    * segment and kept for the others: fresh pages for each
                    * tensor cost a page fault per 4 KiB */
    int pipe[2];
    bool splice;
} GenOut;

static void gen_out_open(GenOut *g, int fd, bool regular)
{
    *g = (GenOut){fd, NULL, {-1, -1}, false};
    g->splice = regular && pipe2(g->pipe, O_CLOEXEC) == 0;
    if (g->splice) /* each splice moves at most what the pipe holds */
        fcntl(g->pipe[1], F_SETPIPE_SZ, WRITE_MAX);
}

/* Stops splicing (the pipe's contents, if any, are dropped). */
static void gen_out_stop_splice(GenOut *g)
{
    for (int i = 0; i < 2; i++)
        if (g->pipe[i] >= 0)
            close(g->pipe[i]);
    g->pipe[0] = g->pipe[1] = -1;
    g->splice = false;
}

static void gen_out_close(GenOut *g)
{
    int saved = errno; /* the caller reports the write's errno */
    gen_out_stop_splice(g);
    free(g->bufs);
    errno = saved;
}

/* Moves bytes p[*done..n) into the file through the pipe, adding to *done
 * what reached the file; 0, or the errno that stopped it. */
static int splice_some(GenOut *g, const uint8_t *p, size_t n, size_t *done)
{
    struct iovec iov = {(void *)(p + *done), n - *done};
    ssize_t v = vmsplice(g->pipe[1], &iov, 1, 0);
    if (v <= 0)
        return v < 0 && errno == EINTR ? 0 : v < 0 ? errno : EINVAL;
    while (v > 0) {
        ssize_t w = splice(g->pipe[0], NULL, g->fd, NULL, (size_t)v, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EINVAL;
        v -= w;
        *done += (size_t)w;
    }
    return 0;
}

/* Writes one computed chunk; falls back to write() where splicing is not
 * supported. */
static int write_chunk(GenOut *g, const uint8_t *p, size_t n)
{
    size_t done = 0;
    int err = 0;
    while (g->splice && done < n && !err)
        err = splice_some(g, p, n, &done);
    if (err) {
        gen_out_stop_splice(g); /* it may hold bytes that did not reach the file */
        if (err != EINVAL && err != ENOSYS && err != EOPNOTSUPP) {
            errno = err;
            return -1;
        }
    }
    return done < n ? write_memory(g->fd, &(Seg){p + done, n - done, NULL, 0}, 1, NULL) : 0;
}

/* Computes a segment's bytes chunk by chunk and writes each. */
static int write_generated_serial(GenOut *g, const Seg *s, uint8_t *buf)
{
    int rc = 0;
    for (size_t done = 0; done < s->len && !rc; done += GEN_CHUNK) {
        s->gen->fill(s->gen->ctx, s->gen_off + done, buf, chunk_len(s, done));
        rc = write_chunk(g, buf, chunk_len(s, done));
    }
    return rc;
}

/* Filling a chunk (reading the source weights and scaling them) costs about
 * as much as writing it, so a second thread fills one buffer while this one
 * writes the other. The chunks go round GEN_BUFS buffers: `empty`
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

static int write_filled(GenOut *g, Filler *f)
{
    size_t k = 0;
    for (size_t done = 0; done < f->s->len; done += GEN_CHUNK, k++) {
        while (sem_wait(&f->full) && errno == EINTR)
            ;
        if (write_chunk(g, f->buf + k % GEN_BUFS * GEN_CHUNK, chunk_len(f->s, done)))
            return -1;
        sem_post(&f->empty);
    }
    return 0;
}

/* The filler's buffers, also the scratch of write_memory; NULL when out of
 * memory. */
static uint8_t *gen_out_bufs(GenOut *g)
{
    if (!g->bufs)
        g->bufs = malloc(GEN_BUFS * GEN_CHUNK);
    return g->bufs;
}

static int write_generated(GenOut *g, const Seg *s)
{
    if (!gen_out_bufs(g))
        return -1;
    Filler f = {.s = s, .buf = g->bufs};
    int rc;
    pthread_t t;
    sigset_t mask;
    sem_init(&f.empty, 0, GEN_BUFS);
    sem_init(&f.full, 0, 0);
    atomic_init(&f.stop, false);
    /* The filler leaves SIGINT & co. to this thread, whose handler removes
     * the temporary files while nothing else is being created. */
    tempfile_block_signals(&mask);
    bool serial = s->len <= GEN_CHUNK || pthread_create(&t, NULL, fill_chunks, &f);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (serial) {
        rc = write_generated_serial(g, s, f.buf);
    } else {
        rc = write_filled(g, &f);
        int saved = errno;
        atomic_store(&f.stop, true);
        sem_post(&f.empty); /* wake the filler if it waits for a buffer */
        pthread_join(t, NULL);
        errno = saved;
    }
    sem_destroy(&f.empty);
    sem_destroy(&f.full);
    return rc;
}

static int write_segments(int fd, const Out *o, const Model *m)
{
    struct stat st;
    bool regular = m && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    size_t start = 0;
    GenOut gen;
    int rc = 0;
    gen_out_open(&gen, fd, regular);
    bool small_gen = false; /* a computed segment among segs[start, i) */
    for (size_t i = 0; i <= o->n && !rc; i++) {
        const MappedFile *f = NULL;
        const Seg *s = i < o->n ? &o->segs[i] : NULL;
        const Seg *g = s && s->gen && s->len >= COPY_MIN ? s : NULL;
        if (s && !s->gen && regular && s->len >= COPY_MIN)
            f = model_find_mapping(m, s->p, s->len);
        if (s && !f && !g) {
            small_gen |= s->gen != NULL;
            continue;
        }
        if ((small_gen && !gen_out_bufs(&gen)) || write_memory(fd, o->segs + start, i - start, gen.bufs) ||
            (f && copy_segment(fd, f, *s)) || (g && write_generated(&gen, g)))
            rc = -1;
        start = i + 1;
        small_gen = false;
    }
    gen_out_close(&gen);
    return rc;
}

/* EFAULT: the write read bytes of a mapped input file that are no longer
 * there, because another program truncated the file while ppqfmt ran
 * (copy_segment reports a short copy the same way). */
static int write_failed(Diag *d, const char *path)
{
    if (errno == EFAULT)
        return diag_set(d, PPQ_EINPUT, "%s", tempfile_input_changed());
    return diag_set(d, PPQ_EOUTPUT, "%s: write error: %s", path, strerror(errno));
}

static int write_stdout(const Out *o, const Model *m, Diag *d)
{
    if (isatty(STDOUT_FILENO))
        return diag_set(d, PPQ_EOUTPUT, STDOUT_TERMINAL_MSG);
    return write_segments(STDOUT_FILENO, o, m) ? write_failed(d, "standard output") : 0;
}

/* An existing device or pipe (/dev/null, /dev/stdout, a fifo) is written in
 * place: renaming a file over it would replace the device node. */
static int write_special(const Out *o, const Model *m, const char *path, Diag *d)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot open: %s", path, strerror(errno));
    int rc = write_segments(fd, o, m) ? write_failed(d, path) : 0;
    if (close(fd) && !rc)
        rc = write_failed(d, path);
    return rc;
}

/* The file -o PATH names: symbolic links are followed, dangling or not, so
 * -o LINK always writes the file LINK points to (creating it if need be)
 * and never replaces the link itself. */
static int output_target(const char *path, char *out, size_t size, Diag *d)
{
    char link[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    snprintf(out, size, "%s", path);
    for (int hops = 0; lstat(out, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0 || hops == 40)
            return diag_set(d, PPQ_EOUTPUT, "%s: cannot follow the symbolic link: %s", path,
                            strerror(n < 0 ? errno : ELOOP));
        link[n] = '\0';
        path_folder(out, dir, sizeof dir);
        if ((link[0] == '/' ? snprintf(out, size, "%s", link)
                            : snprintf(out, size, "%s/%s", dir, link)) >= (int)size)
            return diag_set(d, PPQ_EOUTPUT, "%s: the symbolic link leads to too long a path",
                            path);
    }
    return 0;
}

/* The permissions of the new file: an existing target's own (as cp keeps
 * them), else 0666 less the umask. */
static mode_t output_mode(const char *target)
{
    struct stat st;
    if (stat(target, &st) == 0)
        return st.st_mode & 0777;
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* The file -o names, symbolic links followed (output_target); *special when
 * it is an existing device or pipe, which is written in place. */
static int model_target(const char *path, char *real, size_t size, bool *special, Diag *d)
{
    struct stat st;
    *special = false;
    snprintf(real, size, "%s", path);
    if (strcmp(path, "-") == 0)
        return 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return diag_set(d, PPQ_EOUTPUT, "%s: is a directory", path);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        *special = true;
        return 0;
    }
    return output_target(path, real, size, d);
}

/* Writes o into a staged temporary that will replace path. */
static int stage_segments(Staging *s, const Out *o, const Model *m, const char *path, Diag *d)
{
    int fd = staging_create(s, path, output_mode(path), d);
    if (fd < 0)
        return d->code;
    int rc = 0;
    if (write_segments(fd, o, m))
        rc = write_failed(d, path);
    if (close(fd) && !rc)
        rc = write_failed(d, path);
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

/* Every check that can refuse the write, made before anything is written:
 * the targets (model and data files) are not files the model is read from,
 * not directories, not another model's data (external_plan). */
static int check_targets(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                         DataPlan *plan, Arena *a, Diag *d)
{
    char dir[PATH_MAX];
    path_folder(wo->path, dir, sizeof dir);
    char data[2 * PATH_MAX];
    int rc = check_not_mapped(m, wo->path, d);
    if (!rc && opt->location) {
        snprintf(data, sizeof data, "%s/%s", dir, opt->location);
        rc = check_not_mapped(m, data, d);
    }
    if (!rc)
        rc = external_check_target(m, wo, opt, d);
    return rc ? rc : external_plan(m, wo, opt, dir, plan, a, d);
}

/* Stages the data files, then the model, and renames them all into place;
 * standard output and devices get the model after the data files are in
 * place. */
static int write_all(const Model *m, const WriteOptions *wo, bool special, const Out *o,
                     const Out *data, const DataPlan *plan, Arena *a, Diag *d)
{
    Staging st;
    staging_init(&st, a);
    int rc = check_size(o, wo->path, wo->external_data != NULL, d);
    if (!rc && data)
        rc = stage_segments(&st, data, m, plan->t[0].path, d);
    if (!rc)
        rc = external_stage_copies(plan, wo->link_external, &st, d);
    if (!rc && strcmp(wo->path, "-") != 0 && !special)
        rc = stage_segments(&st, o, m, wo->path, d);
    if (rc) {
        staging_discard(&st);
        return rc;
    }
    if (staging_commit(&st, d))
        return d->code;
    if (strcmp(wo->path, "-") == 0)
        return write_stdout(o, m, d);
    return special ? write_special(o, m, wo->path, d) : 0;
}

/* wo with -o's symbolic links followed: the model and the data files beside
 * it go to the folder of the file the link names. */
static int resolve_output(const WriteOptions *wo, WriteOptions *real, char *path, size_t size,
                          bool *special, Diag *d)
{
    *real = *wo;
    real->path = path;
    return model_target(wo->path, path, size, special, d);
}

int onnx_write(const Model *m, const WriteOptions *typed, Diag *d)
{
    Arena a = {0};
    Out o = {0}, data = {0};
    DataPlan plan = {0};
    WriteOptions real, *wo = &real;
    char path[PATH_MAX];
    bool special;
    int rc = resolve_output(typed, &real, path, sizeof path, &special, d);
    if (rc)
        return rc;
    const char *data_name = data_file_name(m, wo, &a);
    EncodeOptions opt = {NULL, data_name, wo->external_data ? wo->size_threshold : SIZE_MAX,
                         wo->page_align ? EXTERNAL_ALIGN_PAGE : EXTERNAL_ALIGN};
    if (data_name) {
        out_init(&data, &a);
        opt.data = &data;
        rc = external_name_ok(data_name, d);
    }
    if (!rc)
        rc = check_targets(m, wo, &opt, &plan, &a, d);
    if (!rc)
        rc = encode(m, &a, &o, &opt, d);
    if (!rc)
        rc = write_all(m, wo, special, &o, data_name ? &data : NULL, &plan, &a, d);
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
