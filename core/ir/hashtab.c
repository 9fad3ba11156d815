/* hashtab.c - see hashtab.h. Twice as many slots as entries keeps probes
 * short; the table never grows (its users know their size up front). */
#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

int hashtab_init(HashTab *t, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    *t = (HashTab){calloc(cap, sizeof *t->hash), calloc(cap, sizeof *t->val), cap - 1, 0};
    if (t->hash && t->val)
        return 0;
    hashtab_free(t);
    return -1;
}

void hashtab_free(HashTab *t)
{
    free(t->hash);
    free(t->val);
    *t = (HashTab){0};
}

void *hashtab_find_or_add(HashTab *t, uint64_t h, void *val,
                          bool (*same)(const void *stored, const void *val))
{
    h = h ? h : 1;
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        if (!t->hash[i]) {
            if (2 * ++t->n > t->mask + 1) /* past what it was made for: never full */
                return NULL;
            t->hash[i] = h;
            t->val[i] = val;
            return NULL;
        }
        if (t->hash[i] == h && same(t->val[i], val))
            return t->val[i];
    }
}

uint64_t hash_word(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* a word at a time: weights run to megabytes */
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = hash_word(h, w);
    }
    for (; i < n; i++)
        h = hash_word(h, b[i]);
    return h;
}
