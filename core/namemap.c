/* namemap.c - linear-probing hash map keyed by C strings (FNV-1a).
 *
 * Beside each slot's key pointer a one-byte tag holds 8 bits of the key's
 * hash (0: empty slot). A probe compares strings only where the tag matches:
 * at a million names the tables are far larger than the caches, and reading
 * each probed key's characters cost a cache miss per slot passed, most of
 * them on lookups of names not yet there (every new value is looked up
 * first). */
#include "namemap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33; /* mix: names differing in the last characters spread out */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The tag of a hash: its top byte (the slot comes from the low bits), never 0. */
static unsigned char tag_of(uint64_t h)
{
    unsigned char t = (unsigned char)(h >> 56);
    return t ? t : 1;
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static size_t find_slot(const NameMap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1, i = (size_t)h & mask;
    unsigned char t = tag_of(h);
    for (; m->tags[i]; i = (i + 1) & mask)
        if (m->tags[i] == t && strcmp(m->keys[i], key) == 0)
            break;
    return i;
}

void *namemap_get(const NameMap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m, key, hash_str(key));
    return !m->tags[i] ? NULL : m->vals ? m->vals[i] : (void *)m->keys[i];
}

/* Puts key (hash h, not in the map) with val into its empty slot. */
static size_t place(NameMap *m, const char *key, uint64_t h, void *val)
{
    size_t i = find_slot(m, key, h);
    m->keys[i] = key;
    m->tags[i] = tag_of(h);
    if (m->vals)
        m->vals[i] = val;
    return i;
}

static int rehash(NameMap *m, size_t cap, bool set)
{
    NameMap n = {calloc(cap, sizeof *n.keys), set ? NULL : calloc(cap, sizeof *n.vals),
                 calloc(cap, 1), cap, 0};
    if (!n.keys || (!set && !n.vals) || !n.tags) {
        namemap_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->tags[i]) {
            place(&n, m->keys[i], hash_str(m->keys[i]), set ? NULL : m->vals[i]);
            n.len++;
        }
    namemap_free(m);
    *m = n;
    return 0;
}

/* The slot of key, inserted when absent; SIZE_MAX when out of memory. */
static size_t insert(NameMap *m, const char *key, bool set)
{
    if ((m->len + 1) * 4 >= m->cap * 3 && rehash(m, m->cap ? m->cap * 2 : 16, set) != 0)
        return SIZE_MAX;
    uint64_t h = hash_str(key);
    size_t i = find_slot(m, key, h);
    if (!m->tags[i]) {
        m->keys[i] = key;
        m->tags[i] = tag_of(h);
        m->len++;
    }
    return i;
}

int namemap_put(NameMap *m, const char *key, void *val)
{
    size_t i = insert(m, key, false);
    if (i == SIZE_MAX)
        return -1;
    m->vals[i] = val;
    return 0;
}

int nameset_add(NameMap *m, const char *key)
{
    return insert(m, key, true) == SIZE_MAX ? -1 : 0;
}

void namemap_del(NameMap *m, const char *key)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = find_slot(m, key, hash_str(key));
    if (!m->tags[i])
        return;
    m->tags[i] = 0;
    m->len--;
    /* Re-seat the entries that follow in the probe run. */
    for (size_t j = (i + 1) & mask; m->tags[j]; j = (j + 1) & mask) {
        const char *k = m->keys[j];
        void *v = m->vals ? m->vals[j] : NULL;
        m->tags[j] = 0;
        place(m, k, hash_str(k), v);
    }
}

void namemap_free(NameMap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->tags);
    m->keys = NULL;
    m->vals = NULL;
    m->tags = NULL;
    m->cap = m->len = 0;
}
