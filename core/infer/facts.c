/* facts.c - the facts of an inference run (facts.h): each value's fact
 * (Var.fact, stamped with the run), pointer maps for declarations, the run's
 * arena, its issues and unknown op types, and facts read from constant
 * tensors. */
#include "facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const InferFact facts_unknown = {0, -1, NULL, NULL, 0, FACT_TENSOR};

/* --- pointer map (open addressing) --- */

static size_t facts_ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

void *facts_map_get(const PtrMap *m, const void *k)
{
    if (!m->cap)
        return NULL;
    for (size_t i = facts_ptr_hash(k) & (m->cap - 1); m->slots[i].key; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].key == k)
            return m->slots[i].val;
    return NULL;
}

static void facts_map_insert(PtrMap *m, const void *k, void *v)
{
    size_t i = facts_ptr_hash(k) & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != k)
        i = (i + 1) & (m->cap - 1);
    m->len += !m->slots[i].key;
    m->slots[i] = (PtrSlot){k, v};
}

/* Grows m to hold at least need entries at half load. */
static int facts_map_reserve(PtrMap *m, size_t need)
{
    if (need * 2 <= m->cap)
        return 0;
    PtrMap n = {NULL, m->cap ? m->cap : 1024, 0};
    while (n.cap < need * 2)
        n.cap *= 2;
    if (!(n.slots = calloc(n.cap, sizeof *n.slots)))
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key)
            facts_map_insert(&n, m->slots[i].key, m->slots[i].val);
    free(m->slots);
    *m = n;
    return 0;
}

int facts_map_put(PtrMap *m, const void *k, void *v)
{
    if (facts_map_reserve(m, m->len + 1))
        return -1;
    facts_map_insert(m, k, v);
    return 0;
}

static void facts_map_free(PtrMap *m)
{
    free(m->slots);
}

/* --- run bookkeeping --- */

void *facts_alloc(InferRun *r, size_t n, size_t size)
{
    void *p = arena_array(&r->arena, n ? n : 1, size);
    if (!p)
        r->oom = true;
    return p;
}

void facts_issue(InferRun *r, const char *subject, const char *detail)
{
    if (arena_grow(&r->arena, (void **)&r->issues, &r->cap_issues, r->n_issues + 1,
                   sizeof *r->issues)) {
        r->oom = true;
        return;
    }
    InferIssue *is = &r->issues[r->n_issues];
    is->subject = arena_strdup(&r->arena, subject ? subject : "");
    is->detail = arena_strdup(&r->arena, detail);
    if (!is->subject || !is->detail)
        r->oom = true;
    else
        r->n_issues++;
}

void facts_unknown_op(InferRun *r, const Op *op)
{
    char key[256];
    const char *dom = op->domain ? op->domain : "";
    snprintf(key, sizeof key, "%s%s%s", dom, *dom ? ":" : "", op->type);
    if (namemap_get(&r->unknown_set, key))
        return;
    const char *copy = arena_strdup(&r->arena, key);
    if (!copy || namemap_put(&r->unknown_set, copy, (void *)copy) ||
        arena_grow(&r->arena, (void **)&r->unknown, &r->cap_unknown, r->n_unknown + 1,
                   sizeof *r->unknown)) {
        r->oom = true;
        return;
    }
    r->unknown[r->n_unknown++] = copy;
}

/* A copy of f in the run's arena (dims and value arrays included). */
InferFact *facts_dup(InferRun *r, const InferFact *f)
{
    InferFact *n = facts_alloc(r, 1, sizeof *n);
    if (!n)
        return NULL;
    *n = *f;
    if (f->rank > 0) {
        n->dims = facts_alloc(r, (size_t)f->rank, sizeof *n->dims);
        if (!n->dims)
            return NULL;
        memcpy(n->dims, f->dims, (size_t)f->rank * sizeof *n->dims);
    }
    if (f->value) {
        n->value = facts_alloc(r, f->n_value, sizeof *n->value);
        if (!n->value)
            return NULL;
        memcpy(n->value, f->value, f->n_value * sizeof *n->value);
    }
    return n;
}

bool facts_known(const InferFact *f) { return f && (f->dtype || f->rank >= 0); }

static void store(InferRun *r, const Var *v, const InferFact *f, bool copy_arrays)
{
    if (!v || !facts_known(f))
        return;
    InferFact *n = copy_arrays ? facts_dup(r, f) : facts_alloc(r, 1, sizeof *n);
    if (n && !copy_arrays)
        *n = *f;
    if (n)
        facts_set(r, v, n);
    else
        r->oom = true;
}

void facts_set(InferRun *r, const Var *v, const InferFact *f)
{
    Var *w = (Var *)v; /* the fact slot is the run's, not the IR's */
    w->fact = f;
    w->fact_run = r->id;
}

void facts_store(InferRun *r, const Var *v, const InferFact *f) { store(r, v, f, true); }

void facts_store_shared(InferRun *r, const Var *v, const InferFact *f) { store(r, v, f, false); }

const InferFact *infer_fact(const InferRun *r, const Var *v)
{
    return v->fact_run == r->id ? v->fact : NULL;
}

DimTable *infer_dims(const InferRun *r) { return r->dt; }

const InferIssue *infer_issues(const InferRun *r, size_t *n)
{
    *n = r->n_issues;
    return r->issues;
}

const char *const *infer_unknown_ops(const InferRun *r, size_t *n)
{
    *n = r->n_unknown;
    return r->unknown;
}

/* --- facts from tensors and declarations --- */

bool facts_dtype_is_int(int32_t t)
{
    return t == DT_INT64 || t == DT_INT32 || t == DT_INT16 || t == DT_INT8 || t == DT_UINT8 ||
           t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64;
}

int64_t facts_tensor_int(const Tensor *t, size_t i)
{
    const uint8_t *p = (const uint8_t *)t->data + i * dtype_size(t->dtype);
    int64_t v64;
    int32_t v32;
    switch (t->dtype) {
    case DT_INT64:
    case DT_UINT64:
        memcpy(&v64, p, 8);
        return v64;
    case DT_INT32:
        memcpy(&v32, p, 4);
        return v32;
    default:
        return (int64_t)tensor_get_f64(t, i);
    }
}

/* Are t's contents part of its fact (a small integer tensor in memory)? */
static bool has_value_fact(const Tensor *t)
{
    int64_t numel = tensor_numel(t);
    return facts_dtype_is_int(t->dtype) && t->data && numel >= 0 && numel <= FACTS_MAX_VALUE &&
           t->nbytes >= (size_t)numel * dtype_size(t->dtype);
}

/* Contents of a small integer tensor as constant dims, or NULL. */
static Dim *facts_tensor_value(InferRun *r, const Tensor *t, size_t *n)
{
    int64_t numel = tensor_numel(t);
    if (!has_value_fact(t))
        return NULL;
    Dim *v = facts_alloc(r, (size_t)numel, sizeof *v);
    for (int64_t i = 0; v && i < numel; i++)
        v[i] = dim_const(r->dt, facts_tensor_int(t, (size_t)i));
    *n = (size_t)numel;
    return v;
}

void facts_from_tensor(InferRun *r, const Tensor *t, InferFact *f)
{
    *f = facts_unknown;
    if (t->ndims > 1024)
        return;
    f->dtype = t->dtype;
    f->rank = (int)t->ndims;
    f->dims = facts_alloc(r, t->ndims, sizeof *f->dims);
    for (size_t i = 0; f->dims && i < t->ndims; i++)
        f->dims[i] = dim_const(r->dt, t->dims[i]);
    f->value = facts_tensor_value(r, t, &f->n_value);
}

static bool fact_has_shape(const InferFact *f, const Tensor *t)
{
    if (f->dtype != t->dtype || f->rank != (int)t->ndims)
        return false;
    for (size_t i = 0; i < t->ndims; i++)
        if (!dim_is_const(f->dims[i]) || dim_value(f->dims[i]) != t->dims[i])
            return false;
    return true;
}

const InferFact *facts_of_shape(InferRun *r, const Tensor *t)
{
    if (has_value_fact(t) || t->ndims > 1024)
        return NULL;
    for (size_t i = 0; i < FACTS_RECENT; i++)
        if (r->recent[i] && fact_has_shape(r->recent[i], t))
            return r->recent[i];
    InferFact *f = facts_alloc(r, 1, sizeof *f);
    if (!f)
        return NULL;
    facts_from_tensor(r, t, f);
    r->recent[r->next_recent++ % FACTS_RECENT] = f;
    return f;
}

InferRun *facts_new(Model *m)
{
    InferRun *r = calloc(1, sizeof *r);
    if (!r || !(r->dt = dim_table_new())) {
        free(r);
        return NULL;
    }
    r->m = m;
    /* a new number (0 is no run's), so no Var holds a fact of this run yet */
    if (!++m->fact_epoch)
        ++m->fact_epoch;
    r->id = m->fact_epoch;
    return r;
}

void infer_free(InferRun *r)
{
    if (!r)
        return;
    facts_map_free(&r->decls);
    facts_map_free(&r->visited);
    namemap_free(&r->unknown_set);
    dim_table_free(r->dt);
    arena_free(&r->arena);
    free(r);
}
