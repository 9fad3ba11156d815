/* namemap.c - linear-probing hash map keyed by C strings (FNV-1a). */
#include "namemap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33; /* mix: names differing in the last characters spread out */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h;
}

static size_t find_slot(const NameMap *m, const char *key)
{
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *namemap_get(const NameMap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m, key);
    return !m->keys[i] ? NULL : m->vals ? m->vals[i] : (void *)m->keys[i];
}

static int rehash(NameMap *m, size_t cap, bool set)
{
    NameMap n = {calloc(cap, sizeof *n.keys), set ? NULL : calloc(cap, sizeof *n.vals), cap, 0};
    if (!n.keys || (!set && !n.vals)) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = find_slot(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        if (!set)
            n.vals[j] = m->vals[i];
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
    size_t i = find_slot(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
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
    size_t i = find_slot(m, key);
    if (!m->keys[i])
        return;
    m->keys[i] = NULL;
    m->len--;
    /* Re-seat the entries that follow in the probe run. */
    for (size_t j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
        const char *k = m->keys[j];
        void *v = m->vals ? m->vals[j] : NULL;
        m->keys[j] = NULL;
        size_t s = find_slot(m, k);
        m->keys[s] = k;
        if (m->vals)
            m->vals[s] = v;
    }
}

void namemap_free(NameMap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->len = 0;
}
