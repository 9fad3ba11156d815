/* namemap.h - string -> pointer hash map (open addressing), keys not copied.
 * Used for variables by name, per graph, and for the model-wide sets of
 * value and node names that make fresh names unique. */
#ifndef PPQ_NAMEMAP_H
#define PPQ_NAMEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct NameMap {
    const char **keys;
    void **vals;         /* NULL for a set (nameset_add) */
    uint32_t *hashes;    /* per slot: 0 empty, else the key's hash */
    size_t cap, len;
} NameMap;

void *namemap_get(const NameMap *m, const char *key);
/* Starts fetching the slot where key's lookup begins: lookups of several
 * keys in a map far larger than the caches then wait for memory together,
 * not one after another. Changes nothing. */
void namemap_prefetch(const NameMap *m, const char *key);
/* Room for n more keys without growing (set: the map is a set, see
 * nameset_add): a loader that knows how many names come spares the map its
 * doublings, each of which re-seats every key in a table larger than the
 * caches. -1 on out of memory. */
int namemap_reserve(NameMap *m, size_t n, bool set);
/* Inserts or overwrites; the key must outlive the map. -1 on out of memory. */
int namemap_put(NameMap *m, const char *key, void *val);
/* Inserts key only when absent: 0 inserted, 1 present (its value kept), -1
 * out of memory. One probe where namemap_get + namemap_put take two. */
int namemap_add(NameMap *m, const char *key, void *val);
/* Removes key if present (backward-shift deletion keeps probes short). */
void namemap_del(NameMap *m, const char *key);
/* Removes key only while it maps to val; whether it did. */
bool namemap_del_value(NameMap *m, const char *key, const void *val);
void namemap_free(NameMap *m);
/* The map used as a set of names (no values stored: half the memory; the
 * model-wide name sets hold one entry per value or node). namemap_get on a
 * set returns the stored key. A map is used either way, never both. */
int nameset_add(NameMap *m, const char *key);
/* The same telling whether key was new: 0 added, 1 already there, -1 out of
 * memory. */
int nameset_add_new(NameMap *m, const char *key);

/* A set of names whose additions wait in a list until the set is first
 * read: a million-node load appends each name (one store) instead of probing
 * a table far larger than the caches, and a run that never asks for a fresh
 * name (removing dead nodes, folding) never builds the table at all. */
typedef struct DeferredSet {
    NameMap set;         /* the names settled so far (a set, see nameset_add) */
    const char **waiting; /* added since, in order; keys must outlive the set */
    size_t n_waiting, cap_waiting;
} DeferredSet;

/* Adds key (kept, not copied) once the set is next settled. -1 on out of memory. */
int deferred_add(DeferredSet *s, const char *key);
/* Room for n more waiting names. -1 on out of memory. */
int deferred_reserve(DeferredSet *s, size_t n);
/* Moves the waiting names into s->set, which then holds every name added:
 * call before reading s->set. -1 on out of memory. */
int deferred_settle(DeferredSet *s);
void deferred_free(DeferredSet *s);

#endif
