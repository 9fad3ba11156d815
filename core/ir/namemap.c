/* namemap.c - linear-probing hash map keyed by C strings (FNV-1a).
 *
 * Beside each slot's key pointer the map keeps 32 bits of the key's hash
 * (0: empty slot). A probe compares strings only where the hashes match, and
 * growing the table or closing the gap a removal leaves re-seats entries by
 * their stored hash: at a million names the tables are far larger than the
 * caches, and reading a key's characters costs a cache miss per key. */
#include "namemap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A key's hash, never 0 (the mark of an empty slot). The slot is its low
 * bits, so a table has at most 2^32 slots. */
static uint32_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33; /* mix: names differing in the last characters spread out */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    uint32_t h32 = (uint32_t)(h >> 32);
    return h32 ? h32 : 1;
}

static bool same_key(const char *stored, const char *key)
{
    return stored == key || strcmp(stored, key) == 0;
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static size_t find_slot(const NameMap *m, const char *key, uint32_t h)
{
    size_t mask = m->cap - 1, i = h & mask;
    for (; m->hashes[i]; i = (i + 1) & mask)
        if (m->hashes[i] == h && same_key(m->keys[i], key))
            break;
    return i;
}

void namemap_prefetch(const NameMap *m, const char *key)
{
    if (!m->cap)
        return;
    size_t i = hash_str(key) & (m->cap - 1);
    __builtin_prefetch(&m->hashes[i]);
    __builtin_prefetch(&m->keys[i]);
    if (m->vals)
        __builtin_prefetch(&m->vals[i]);
}

void *namemap_get(const NameMap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m, key, hash_str(key));
    return !m->hashes[i] ? NULL : m->vals ? m->vals[i] : (void *)m->keys[i];
}

/* Puts key (hash h, not in the map) with val into the first free slot of
 * its probe run. */
static void place(NameMap *m, const char *key, uint32_t h, void *val)
{
    size_t mask = m->cap - 1, i = h & mask;
    while (m->hashes[i])
        i = (i + 1) & mask;
    m->keys[i] = key;
    m->hashes[i] = h;
    if (m->vals)
        m->vals[i] = val;
}

static int rehash(NameMap *m, size_t cap, bool set)
{
    if (cap > (size_t)UINT32_MAX + 1)
        return -1;
    NameMap n = {calloc(cap, sizeof *n.keys), set ? NULL : calloc(cap, sizeof *n.vals),
                 calloc(cap, sizeof *n.hashes), cap, 0};
    if (!n.keys || (!set && !n.vals) || !n.hashes) {
        namemap_free(&n);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->hashes[i]) {
            place(&n, m->keys[i], m->hashes[i], set ? NULL : m->vals[i]);
            n.len++;
        }
    namemap_free(m);
    *m = n;
    return 0;
}

/* Finds or adds key's slot (*added: whether it was new); SIZE_MAX on out of
 * memory. */
static size_t insert(NameMap *m, const char *key, bool set, bool *added)
{
    if ((m->len + 1) * 4 >= m->cap * 3 && rehash(m, m->cap ? m->cap * 2 : 16, set) != 0)
        return SIZE_MAX;
    uint32_t h = hash_str(key);
    size_t i = find_slot(m, key, h);
    *added = !m->hashes[i];
    if (*added) {
        m->keys[i] = key;
        m->hashes[i] = h;
        m->len++;
    }
    return i;
}

int namemap_reserve(NameMap *m, size_t n, bool set)
{
    size_t cap = m->cap ? m->cap : 16;
    while ((m->len + n) * 4 >= cap * 3)
        cap *= 2;
    return cap == m->cap ? 0 : rehash(m, cap, set);
}

/* Sets key's value (replace: also when key was there already): 0, 1 when
 * key was there and is kept, -1 on out of memory. */
static int put(NameMap *m, const char *key, void *val, bool replace)
{
    bool added;
    size_t i = insert(m, key, false, &added);
    if (i == SIZE_MAX)
        return -1;
    if (!added && !replace)
        return 1;
    m->vals[i] = val;
    return 0;
}

int namemap_put(NameMap *m, const char *key, void *val) { return put(m, key, val, true); }

int namemap_add(NameMap *m, const char *key, void *val) { return put(m, key, val, false); }

int nameset_add(NameMap *m, const char *key)
{
    return nameset_add_new(m, key) < 0 ? -1 : 0;
}

int nameset_add_new(NameMap *m, const char *key)
{
    bool added;
    return insert(m, key, true, &added) == SIZE_MAX ? -1 : !added;
}

/* Empties slot i and re-seats the entries that follow in its probe run. */
static void remove_slot(NameMap *m, size_t i)
{
    size_t mask = m->cap - 1;
    m->hashes[i] = 0;
    m->len--;
    /* Re-seat the entries that follow in the probe run. */
    for (size_t j = (i + 1) & mask; m->hashes[j]; j = (j + 1) & mask) {
        uint32_t h = m->hashes[j];
        m->hashes[j] = 0;
        place(m, m->keys[j], h, m->vals ? m->vals[j] : NULL);
    }
}

void namemap_del(NameMap *m, const char *key)
{
    if (!m->cap)
        return;
    size_t i = find_slot(m, key, hash_str(key));
    if (m->hashes[i])
        remove_slot(m, i);
}

bool namemap_del_value(NameMap *m, const char *key, const void *val)
{
    if (!m->cap)
        return false;
    size_t i = find_slot(m, key, hash_str(key));
    if (!m->hashes[i] || m->vals[i] != val)
        return false;
    remove_slot(m, i);
    return true;
}

void namemap_free(NameMap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    m->keys = NULL;
    m->vals = NULL;
    m->hashes = NULL;
    m->cap = m->len = 0;
}

int deferred_reserve(DeferredSet *s, size_t n)
{
    if (s->n_waiting + n <= s->cap_waiting)
        return 0;
    if (n > SIZE_MAX / sizeof *s->waiting - s->n_waiting)
        return -1;
    const char **w = realloc(s->waiting, (s->n_waiting + n) * sizeof *w);
    if (!w)
        return -1;
    s->waiting = w;
    s->cap_waiting = s->n_waiting + n;
    return 0;
}

int deferred_add(DeferredSet *s, const char *key)
{
    if (s->n_waiting == s->cap_waiting && deferred_reserve(s, s->cap_waiting ? s->cap_waiting : 16))
        return -1;
    s->waiting[s->n_waiting++] = key;
    return 0;
}

int deferred_settle(DeferredSet *s)
{
    enum { AHEAD = 8 }; /* names whose slots are fetched before their insertion */
    if (!s->n_waiting)
        return 0;
    if (namemap_reserve(&s->set, s->n_waiting, true))
        return -1;
    for (size_t i = 0; i < s->n_waiting; i++) {
        if (i + AHEAD < s->n_waiting)
            namemap_prefetch(&s->set, s->waiting[i + AHEAD]);
        if (nameset_add(&s->set, s->waiting[i]))
            return -1; /* all stay waiting: adding a settled name again is harmless */
    }
    free(s->waiting);
    s->waiting = NULL;
    s->n_waiting = s->cap_waiting = 0;
    return 0;
}

void deferred_free(DeferredSet *s)
{
    namemap_free(&s->set);
    free(s->waiting);
    s->waiting = NULL;
    s->n_waiting = s->cap_waiting = 0;
}
