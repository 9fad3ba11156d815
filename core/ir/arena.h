/* arena.h - one bump allocator per model.
 *
 * Every object of the IR (operations, variables, names, new tensor bytes) lives
 * in the model's arena and is freed at once with arena_free(). Growable arrays
 * reallocate inside the arena; the old block is simply abandoned. */
#ifndef PPQ_ARENA_H
#define PPQ_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;

typedef struct Arena {
    ArenaBlock *head;
    size_t total; /* bytes obtained from malloc, for the memory report */
} Arena;

/* Returns zeroed memory, or NULL when out of memory (or n overflows). */
void *arena_alloc(Arena *a, size_t n);
/* Allocates n elements of size each, checking the product for overflow. */
void *arena_array(Arena *a, size_t n, size_t size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
/* The n bytes at s followed by the m bytes at t, NUL-terminated, unaligned. */
char *arena_concat(Arena *a, const char *s, size_t n, const char *t, size_t m);
/* Grows *arr (holding *cap elements of size) to hold at least need elements. */
int arena_grow(Arena *a, void **arr, size_t *cap, size_t need, size_t size);
void arena_free(Arena *a);

/* Grows a list kept outside the arena (realloc'ed) to hold `need` elements
 * of `size` bytes; -1 when out of memory (the list is as it was). A graph's
 * own lists (operations, variables, parameters, inputs, outputs, value_info)
 * and the change log grow so: an arena keeps every outgrown copy, which for
 * a million nodes is as much again as the lists. */
int list_grow(void **arr, size_t *cap, size_t need, size_t size);
#define LIST_GROW(arr, cap, need) list_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

#endif
