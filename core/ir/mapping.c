/* mapping.c - the model's mappings of its input file (mapping.h). */
#include "mapping.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph.h"

#define GROW(g_arena, arr, cap, need) \
    arena_grow((g_arena), (void **)&(arr), &(cap), (need), sizeof *(arr))

int model_add_mapping(Model *m, const void *base, size_t len, int fd)
{
    if (GROW(&m->arena, m->maps, m->cap_maps, m->n_maps + 1))
        return -1;
    m->maps[m->n_maps++] = (MappedFile){base, len, fd};
    return 0;
}

const MappedFile *model_find_mapping(const Model *m, const void *p, size_t n)
{
    const uint8_t *q = p;
    for (size_t i = 0; i < m->n_maps; i++) {
        const MappedFile *f = &m->maps[i];
        if (q >= f->base && n <= f->len && (size_t)(q - f->base) <= f->len - n)
            return f;
    }
    return NULL;
}

void model_forget_bytes(const Model *m, const void *p, size_t n)
{
    if (!model_find_mapping(m, p, n))
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) / page * page;
    uintptr_t end = ((uintptr_t)p + n) / page * page;
    if (end > start) /* whole pages only: neighbours may still be wanted */
        madvise((void *)start, end - start, MADV_DONTNEED);
}

static int pread_all(int fd, uint8_t *buf, size_t n, off_t off)
{
    while (n) {
        ssize_t r = pread(fd, buf, n, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        buf += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

/* Room for n bytes, in 2 MiB pages where the kernel has them: a transpose
 * reads the copy a few bytes per row across all of it for every chunk, so
 * with 4 KiB pages nearly every row is a TLB miss. */
static int model_copy_grow(struct MappedCopy *c, size_t n)
{
    enum { HUGE = 2 << 20 };
    size_t cap = (n + HUGE - 1) / HUGE * HUGE;
    free(c->buf);
    c->cap = 0;
    if (posix_memalign((void **)&c->buf, HUGE, cap)) {
        c->buf = NULL;
        return -1;
    }
    madvise(c->buf, cap, MADV_HUGEPAGE); /* a hint: failing is fine */
    c->cap = cap;
    return 0;
}

const uint8_t *model_mapped_copy(const Model *m, const void *p, size_t n)
{
    struct MappedCopy *c = m->copy;
    const MappedFile *f = n <= MODEL_COPY_MAX ? model_find_mapping(m, p, n) : NULL;
    if (!f)
        return NULL;
    if (c->of == p && c->n == n)
        return c->buf;
    c->of = NULL;
    if (n > c->cap && model_copy_grow(c, n))
        return NULL;
    if (pread_all(f->fd, c->buf, n, (off_t)((const uint8_t *)p - f->base)))
        return NULL;
    c->of = p;
    c->n = n;
    return c->buf;
}

const uint8_t *model_read_bytes(const Model *m, const void *p, size_t n, uint8_t *buf)
{
    const MappedFile *f = model_find_mapping(m, p, n);
    if (!f || pread_all(f->fd, buf, n, (off_t)((const uint8_t *)p - f->base)))
        return p;
    return buf;
}
