/* hashtab.h - a fixed-size open-addressing table of 64-bit hashes to
 * pointers, for passes that look for equal things (cse: equal nodes;
 * dedup-initializers: equal tensors): the caller hashes and says what
 * "equal" is; the table finds the first equal entry or stores the new one. */
#ifndef PPQ_HASHTAB_H
#define PPQ_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct HashTab {
    uint64_t *hash; /* 0: empty slot */
    void **val;
    size_t mask, n;
} HashTab;

/* Room for n entries; -1 when out of memory. */
int hashtab_init(HashTab *t, size_t n);
void hashtab_free(HashTab *t);
/* The first stored value of hash h that same(stored, val) calls equal;
 * otherwise val is stored (unless the table holds the n entries it was
 * made for) and NULL returned. */
void *hashtab_find_or_add(HashTab *t, uint64_t h, void *val,
                          bool (*same)(const void *stored, const void *val));

/* FNV-1a style mixing: a starting value, one 64-bit word, a run of bytes. */
enum { HASH_START = 0 };
uint64_t hash_word(uint64_t h, uint64_t v);
uint64_t hash_bytes(uint64_t h, const void *p, size_t n);

#endif
