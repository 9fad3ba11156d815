/* lazy.c - tensors computed in chunks while written (lazy.h). */
#include "lazy.h"

#include <string.h>

#include "mapping.h"

typedef struct Lazy {
    TensorGen gen;
    LazyFill fill;
    const void *ctx;
    size_t size; /* bytes per element */
    const Tensor *source;
    bool in_order;
    size_t nbytes; /* of the result */
    const Model *m;
} Lazy;

/* Input pages of the source already read are let go (so memory stays flat)
 * a window at a time: madvise per 1 MiB chunk would split the input's
 * 2 MiB mappings and flush the other core's TLB each time. Windows are aligned in memory, so
 * their edges fall on page boundaries; chunks come in order. The source's
 * element i lies at the result's element i (same element count). */
enum { FORGET_WINDOW = 32 << 20 };

static void lazy_forget(const Lazy *l, size_t first, size_t count)
{
    const Tensor *s = l->source;
    size_t ssize = dtype_size(s->dtype), off = first * ssize, n = count * ssize;
    uintptr_t base = (uintptr_t)s->data, end = base + off + n;
    uintptr_t from = (base + off) / FORGET_WINDOW * FORGET_WINDOW;
    uintptr_t to = off + n == s->nbytes ? end : end / FORGET_WINDOW * FORGET_WINDOW;
    from = from < base ? base : from;
    if (to > from)
        model_forget_bytes(l->m, (const void *)from, (size_t)(to - from));
}

static void lazy_fill(const void *ctx, size_t off, uint8_t *buf, size_t n)
{
    const Lazy *l = ctx;
    size_t first = off / l->size, count = n / l->size;
    l->fill(l->ctx, first, count, buf);
    if (!l->source || !l->source->data)
        return;
    if (l->in_order) /* read once: let those pages of the input go */
        lazy_forget(l, first, count);
    else if (off + n == l->nbytes) /* the last chunk: the whole source was read */
        model_forget_bytes(l->m, l->source->data, l->source->nbytes);
}

Tensor *lazy_tensor_new(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims,
                        LazyFill fill, const void *ctx, const Tensor *source, bool in_order,
                        const Model *m)
{
    Lazy *l = arena_alloc(a, sizeof *l);
    if (!l || !dtype_size(dtype))
        return NULL;
    *l = (Lazy){{lazy_fill, l}, fill, ctx, dtype_size(dtype), source, in_order, 0, m};
    Tensor *t = tensor_new_lazy(a, dtype, ndims, dims, &l->gen);
    if (t)
        l->nbytes = t->nbytes;
    return t;
}

void lazy_read(const Tensor *t, size_t off, size_t n, uint8_t *buf)
{
    if (t->data)
        memcpy(buf, (const uint8_t *)t->data + off, n);
    else
        t->gen->fill(t->gen->ctx, off, buf, n);
}
