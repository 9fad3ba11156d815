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

static size_t align_up(size_t n)
{
    size_t a = sizeof(max_align_t);
    return (n + a - 1) / a * a;
}

/* n bytes from the arena, not cleared. */
static void *arena_alloc_raw(Arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = align_up(n ? n : 1);
    ArenaBlock *b = a->head;
    if (!b || b->size - b->used < n) {
        /* Large requests get a block of their own so they waste nothing. */
        size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        b = malloc(sizeof *b + size);
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
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

void *arena_alloc(Arena *a, size_t n)
{
    void *p = arena_alloc_raw(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

void *arena_array(Arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return arena_alloc(a, n * size);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (p && n)
        memcpy(p, s, n);
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
    /* only the new part is cleared: the old one is copied over */
    void *p = size && n > SIZE_MAX / size ? NULL : arena_alloc_raw(a, n * size);
    if (!p)
        return -1;
    if (*cap)
        memcpy(p, *arr, *cap * size);
    memset((char *)p + *cap * size, 0, (n - *cap) * size);
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
