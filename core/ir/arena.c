/* arena.c - bump allocator: big blocks from malloc, freed all at once. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
    ArenaBlock *next;
    size_t used, size;
    max_align_t data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

static size_t align_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* n zeroed bytes from the arena at a multiple of align (blocks come from
 * calloc and each byte is handed out once). Strings ask
 * for no alignment: a million names would otherwise waste 8 bytes each on
 * average. */
static void *arena_alloc_aligned(Arena *a, size_t n, size_t align)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = n ? n : 1;
    ArenaBlock *b = a->head;
    size_t at = b ? align_up(b->used, align) : 0;
    if (!b || at > b->size || b->size - at < n) {
        /* Large requests get a block of their own so they waste nothing. */
        size_t size = n > ARENA_BLOCK / 4 ? align_up(n, sizeof(max_align_t)) : ARENA_BLOCK;
        /* calloc: glibc hands fresh heap pages over without clearing them
         * again, and since no byte is handed out twice (a bump allocator,
         * no reuse), arena_alloc need not clear: a million-node graph's
         * memset was a sixth of its CPU time. */
        b = calloc(1, sizeof *b + size);
        if (!b)
            return NULL;
        b->used = 0;
        b->size = size;
        a->total += size;
        if (a->head && size != ARENA_BLOCK) {
            /* keep the partly used block at the head for small requests */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
        at = 0;
    }
    void *p = (char *)b->data + at;
    b->used = at + n;
    return p;
}

/* The IR holds pointers, sizes, int64 and double, never long double: 8-byte
 * alignment serves every object, where max_align_t's 16 would pad each Op,
 * name list and use list (a million-node graph holds millions of them). */
enum { ARENA_ALIGN = 8 };
_Static_assert(_Alignof(int64_t) <= ARENA_ALIGN && _Alignof(double) <= ARENA_ALIGN &&
                   _Alignof(void *) <= ARENA_ALIGN && _Alignof(size_t) <= ARENA_ALIGN,
               "arena objects need at most 8-byte alignment");

static void *arena_alloc_raw(Arena *a, size_t n)
{
    return arena_alloc_aligned(a, n, ARENA_ALIGN);
}

void *arena_alloc(Arena *a, size_t n)
{
    return arena_alloc_raw(a, n);
}

void *arena_array(Arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return arena_alloc(a, n * size);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = n < SIZE_MAX ? arena_alloc_aligned(a, n + 1, 1) : NULL;
    if (p && n)
        memcpy(p, s, n);
    if (p)
        p[n] = 0;
    return p;
}

char *arena_concat(Arena *a, const char *s, size_t n, const char *t, size_t m)
{
    char *p = n < SIZE_MAX / 2 && m < SIZE_MAX / 2 ? arena_alloc_aligned(a, n + m + 1, 1) : NULL;
    if (!p)
        return NULL;
    memcpy(p, s, n);
    memcpy(p + n, t, m);
    p[n + m] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

int arena_grow(Arena *a, void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    /* the new part is zero as it comes (arena_alloc_aligned); the old one
     * is copied over */
    void *p = size && n > SIZE_MAX / size ? NULL : arena_alloc_raw(a, n * size);
    if (!p)
        return -1;
    if (*cap)
        memcpy(p, *arr, *cap * size);
    *arr = p;
    *cap = n;
    return 0;
}

void arena_free(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
}

int list_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return -1;
        n *= 2;
    }
    void *p = realloc(*arr, n * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}
