/* dim.c - canonical symbolic dimensions, interned per table (see dim.h).
 *
 * Arithmetic works on a Poly, a scratch sum of terms over a divisor, which is
 * put into canonical form (symbols sorted inside a term, terms sorted and
 * merged, zero terms dropped, the gcd of every coefficient and the divisor
 * divided out) and then looked up in the table's hash set, so equal values
 * share one DimExpr. Sizes are bounded (terms, symbols per term); past them,
 * or on integer overflow, the result is a fresh symbol. */
#include "dim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/arena.h"
#include "../ir/namemap.h"

enum { DIM_MAX_TERMS = 16, DIM_MAX_DEG = 8, POLY_CAP = DIM_MAX_TERMS * DIM_MAX_TERMS, DIM_SMALL = 1024 };

typedef struct DimTerm {
    int64_t coef;
    uint32_t n; /* symbols in the product (0: the constant term) */
    uint32_t sym[DIM_MAX_DEG];
} DimTerm;

struct DimExpr {
    int64_t div; /* >= 1; the value is (sum of terms) / div, an integer */
    uint32_t n_terms;
    uint64_t hash;
    DimTerm terms[];
};

struct DimTable {
    Arena arena;
    const char **names; /* symbol id -> name */
    size_t n_names, cap_names;
    bool *fresh; /* symbol id -> made by dim_fresh */
    size_t cap_fresh;
    NameMap by_name; /* name -> id + 1, for the model's symbols */
    /* The same for fresh symbols, kept apart: a fresh symbol's name is unique
     * among fresh ones but may equal a declared name (one an earlier run
     * wrote for the same size), and dim_sym never returns a fresh symbol. */
    NameMap fresh_names;
    Dim *slots;      /* open-addressing set of every DimExpr made */
    size_t cap, len;
    const char *origin;
    unsigned next_fresh;
    bool oom;
    /* dim_const of 0..DIM_SMALL-1 once made: every initializer's shape asks
     * for them, and building a Poly clears a few hundred bytes each time */
    Dim small[DIM_SMALL];
};

typedef struct Poly {
    int64_t div;
    size_t n;
    bool bad; /* outside the form: the result becomes a fresh symbol */
    DimTerm t[POLY_CAP];
} Poly;

/* Handed out after an allocation failed; dim_table_oom() says so. */
static const DimExpr dim_oom_zero = {1, 0, 0};

DimTable *dim_table_new(void)
{
    DimTable *t = calloc(1, sizeof *t);
    if (t)
        t->origin = "dim";
    return t;
}

void dim_table_free(DimTable *t)
{
    if (!t)
        return;
    namemap_free(&t->by_name);
    namemap_free(&t->fresh_names);
    free(t->slots);
    arena_free(&t->arena);
    free(t);
}

void dim_table_set_origin(DimTable *t, const char *origin)
{
    t->origin = origin && *origin ? origin : "dim";
    t->next_fresh = 0;
}

bool dim_table_oom(const DimTable *t) { return t->oom; }

/* --- integer helpers --- */

static int64_t gcd64(int64_t a, int64_t b)
{
    uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
    uint64_t y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return x > INT64_MAX ? 0 : (int64_t)x;
}

static int64_t floordiv64(int64_t a, int64_t c)
{
    int64_t q = a / c;
    return (a % c != 0 && ((a < 0) != (c < 0))) ? q - 1 : q;
}

/* --- canonical form --- */

static int term_cmp(const DimTerm *a, const DimTerm *b)
{
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1; /* higher degree first, constant last */
    for (uint32_t i = 0; i < a->n; i++)
        if (a->sym[i] != b->sym[i])
            return a->sym[i] < b->sym[i] ? -1 : 1;
    return 0;
}

static void term_sort_syms(DimTerm *x)
{
    for (uint32_t i = 1; i < x->n; i++)
        for (uint32_t j = i; j > 0 && x->sym[j - 1] > x->sym[j]; j--) {
            uint32_t s = x->sym[j];
            x->sym[j] = x->sym[j - 1];
            x->sym[j - 1] = s;
        }
}

static int term_qsort_cmp(const void *a, const void *b) { return term_cmp(a, b); }

/* Sorts and merges terms, drops zeros, makes the divisor positive and
 * divides out the common gcd. */
static void poly_canon(Poly *p)
{
    if (p->bad)
        return;
    for (size_t i = 0; i < p->n; i++)
        term_sort_syms(&p->t[i]);
    qsort(p->t, p->n, sizeof p->t[0], term_qsort_cmp);
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (k && term_cmp(&p->t[k - 1], &p->t[i]) == 0) {
            if (__builtin_add_overflow(p->t[k - 1].coef, p->t[i].coef, &p->t[k - 1].coef))
                p->bad = true;
        } else {
            p->t[k++] = p->t[i];
        }
    }
    size_t z = 0;
    for (size_t i = 0; i < k; i++)
        if (p->t[i].coef)
            p->t[z++] = p->t[i];
    p->n = z;
    if (p->div == 0 || p->div == INT64_MIN || p->n > DIM_MAX_TERMS) {
        p->bad = true;
        return;
    }
    int64_t g = p->div;
    for (size_t i = 0; i < p->n; i++)
        g = gcd64(g, p->t[i].coef);
    if (g == 0) {
        p->bad = true;
        return;
    }
    if (p->div < 0)
        g = -g;
    for (size_t i = 0; i < p->n; i++)
        p->t[i].coef /= g;
    p->div /= g;
    if (!p->n)
        p->div = 1;
    /* A constant that is not a whole number: the "exact" division the model
     * promised does not hold, so no value can be trusted. */
    if (p->div != 1 && p->n == 1 && p->t[0].n == 0)
        p->bad = true;
}

static uint64_t poly_hash(const Poly *p)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)p->div;
    for (size_t i = 0; i < p->n; i++) {
        h = (h ^ (uint64_t)p->t[i].coef) * 1099511628211ull;
        for (uint32_t j = 0; j < p->t[i].n; j++)
            h = (h ^ p->t[i].sym[j]) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    }
    h ^= h >> 33;
    return h ? h : 1;
}

static bool poly_equals(const Poly *p, uint64_t h, Dim d)
{
    if (d->hash != h || d->div != p->div || d->n_terms != p->n)
        return false;
    for (size_t i = 0; i < p->n; i++)
        if (d->terms[i].coef != p->t[i].coef || term_cmp(&d->terms[i], &p->t[i]) != 0)
            return false;
    return true;
}

static bool table_grow(DimTable *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    Dim *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i])
            continue;
        size_t j = t->slots[i]->hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

static Dim oom(DimTable *t)
{
    t->oom = true;
    return &dim_oom_zero;
}

/* The interned DimExpr equal to canonical p. */
static Dim intern(DimTable *t, const Poly *p)
{
    if ((t->len + 1) * 2 > t->cap && !table_grow(t))
        return oom(t);
    uint64_t h = poly_hash(p);
    size_t i = h & (t->cap - 1);
    for (; t->slots[i]; i = (i + 1) & (t->cap - 1))
        if (poly_equals(p, h, t->slots[i]))
            return t->slots[i];
    DimExpr *e = arena_alloc(&t->arena, sizeof *e + p->n * sizeof e->terms[0]);
    if (!e)
        return oom(t);
    e->div = p->div;
    e->n_terms = (uint32_t)p->n;
    e->hash = h;
    memcpy(e->terms, p->t, p->n * sizeof e->terms[0]);
    t->slots[i] = e;
    t->len++;
    return e;
}

/* The canonical form of p, or a fresh symbol when p left the form. */
static Dim poly_finish(DimTable *t, Poly *p)
{
    poly_canon(p);
    return p->bad ? dim_fresh(t) : intern(t, p);
}

static void poly_load(Poly *p, Dim d)
{
    p->div = d->div;
    p->n = d->n_terms;
    p->bad = false;
    memcpy(p->t, d->terms, d->n_terms * sizeof p->t[0]);
}

/* --- constructors --- */

/* p = coef, one constant term. Only the fields read are set: a cleared Poly
 * is POLY_CAP terms, about 12 KB, for the one term used. */
static void poly_one_term(Poly *p, int64_t coef)
{
    p->div = 1;
    p->n = 1;
    p->bad = false;
    p->t[0].coef = coef;
    p->t[0].n = 0;
}

Dim dim_const(DimTable *t, int64_t v)
{
    bool small = v >= 0 && v < DIM_SMALL;
    if (small && t->small[v])
        return t->small[v];
    Poly p;
    poly_one_term(&p, v);
    Dim d = poly_finish(t, &p);
    if (small && !t->oom)
        t->small[v] = d;
    return d;
}

static Dim sym_by_id(DimTable *t, uint32_t id)
{
    Poly p;
    poly_one_term(&p, 1);
    p.t[0].n = 1;
    p.t[0].sym[0] = id;
    poly_canon(&p);
    return intern(t, &p);
}

static Dim sym_new(DimTable *t, const char *name, bool fresh)
{
    if (t->n_names >= UINT32_MAX - 1 ||
        arena_grow(&t->arena, (void **)&t->names, &t->cap_names, t->n_names + 1,
                   sizeof *t->names) ||
        arena_grow(&t->arena, (void **)&t->fresh, &t->cap_fresh, t->n_names + 1, sizeof *t->fresh))
        return oom(t);
    t->fresh[t->n_names] = fresh;
    const char *copy = arena_strdup(&t->arena, name);
    uint32_t id = (uint32_t)t->n_names;
    NameMap *map = fresh ? &t->fresh_names : &t->by_name;
    if (!copy || namemap_put(map, copy, (void *)(uintptr_t)(id + 1)))
        return oom(t);
    t->names[t->n_names++] = copy;
    return sym_by_id(t, id);
}

Dim dim_sym(DimTable *t, const char *name)
{
    uintptr_t id = (uintptr_t)namemap_get(&t->by_name, name);
    return id ? sym_by_id(t, (uint32_t)(id - 1)) : sym_new(t, name, false);
}

/* Copies s keeping letters, digits and '_' (others become '_'). */
static void put_ident(char *buf, size_t size, const char *s)
{
    size_t k = 0;
    if (*s >= '0' && *s <= '9' && k + 1 < size)
        buf[k++] = '_';
    for (; *s && k + 1 < size; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        buf[k++] = ok ? c : '_';
    }
    buf[k] = '\0';
}

Dim dim_fresh(DimTable *t)
{
    char origin[96], name[128];
    put_ident(origin, sizeof origin, t->origin);
    for (;;) {
        snprintf(name, sizeof name, "unk_%s_%u", origin, t->next_fresh++);
        if (!namemap_get(&t->fresh_names, name))
            return sym_new(t, name, true);
    }
}

/* --- reading --- */

bool dim_is_const(Dim d)
{
    return d->div == 1 && (d->n_terms == 0 || (d->n_terms == 1 && d->terms[0].n == 0));
}

int64_t dim_value(Dim d) { return d->n_terms == 1 && d->terms[0].n == 0 ? d->terms[0].coef : 0; }

bool dim_has_fresh(const DimTable *t, Dim d)
{
    for (uint32_t i = 0; i < d->n_terms; i++)
        for (uint32_t k = 0; k < d->terms[i].n; k++)
            if (t->fresh[d->terms[i].sym[k]])
                return true;
    return false;
}

const char *dim_sym_name(const DimTable *t, Dim d)
{
    if (d->n_terms != 1 || d->div != 1 || d->terms[0].n != 1 || d->terms[0].coef != 1)
        return NULL;
    return t->names[d->terms[0].sym[0]];
}

bool dim_nonneg(Dim d)
{
    for (uint32_t i = 0; i < d->n_terms; i++)
        if (d->terms[i].coef < 0)
            return false;
    return true;
}

/* --- arithmetic --- */

/* p = p * k (every coefficient), for bringing sums to a common divisor. */
static void poly_scale(Poly *p, int64_t k)
{
    for (size_t i = 0; i < p->n; i++)
        if (__builtin_mul_overflow(p->t[i].coef, k, &p->t[i].coef))
            p->bad = true;
}

static Dim add_signed(DimTable *t, Dim a, Dim b, int64_t sign)
{
    Poly p, q;
    poly_load(&p, a);
    poly_load(&q, b);
    int64_t g = gcd64(a->div, b->div);
    /* a/da + b/db = (a*(db/g) + b*(da/g)) / (da*db/g) */
    poly_scale(&p, b->div / g);
    poly_scale(&q, sign * (a->div / g));
    if (__builtin_mul_overflow(a->div, b->div / g, &p.div) || p.n + q.n > POLY_CAP)
        return dim_fresh(t);
    memcpy(p.t + p.n, q.t, q.n * sizeof q.t[0]);
    p.n += q.n;
    p.bad |= q.bad;
    return poly_finish(t, &p);
}

Dim dim_add(DimTable *t, Dim a, Dim b) { return add_signed(t, a, b, 1); }

Dim dim_sub(DimTable *t, Dim a, Dim b) { return a == b ? dim_const(t, 0) : add_signed(t, a, b, -1); }

static bool term_mul(const DimTerm *x, const DimTerm *y, DimTerm *out)
{
    if (x->n + y->n > DIM_MAX_DEG || __builtin_mul_overflow(x->coef, y->coef, &out->coef))
        return false;
    out->n = x->n + y->n;
    memcpy(out->sym, x->sym, x->n * sizeof x->sym[0]);
    memcpy(out->sym + x->n, y->sym, y->n * sizeof y->sym[0]);
    return true;
}

Dim dim_mul(DimTable *t, Dim a, Dim b)
{
    Poly p;
    p.n = 0;
    p.bad = false;
    if (__builtin_mul_overflow(a->div, b->div, &p.div))
        return dim_fresh(t);
    for (uint32_t i = 0; i < a->n_terms; i++)
        for (uint32_t j = 0; j < b->n_terms; j++)
            if (!term_mul(&a->terms[i], &b->terms[j], &p.t[p.n++]))
                return dim_fresh(t);
    return poly_finish(t, &p);
}

Dim dim_div_exact(DimTable *t, Dim a, int64_t c)
{
    Poly p;
    poly_load(&p, a);
    if (c == 0 || __builtin_mul_overflow(p.div, c, &p.div))
        return dim_fresh(t);
    return poly_finish(t, &p);
}

/* Removes the symbols of m (a multiset) from x; false if x lacks one. */
static bool term_remove_syms(DimTerm *x, const DimTerm *m)
{
    for (uint32_t i = 0; i < m->n; i++) {
        uint32_t j = 0;
        while (j < x->n && x->sym[j] != m->sym[i])
            j++;
        if (j == x->n)
            return false;
        memmove(x->sym + j, x->sym + j + 1, (x->n - j - 1) * sizeof x->sym[0]);
        x->n--;
    }
    return true;
}

Dim dim_div_exact_dim(DimTable *t, Dim a, Dim b)
{
    if (a == b)
        return dim_const(t, 1);
    if (dim_is_const(b))
        return dim_div_exact(t, a, dim_value(b));
    if (b->n_terms != 1)
        return dim_fresh(t);
    /* a / (k*m/db) = (a with m removed from every term) * db / k */
    const DimTerm *m = &b->terms[0];
    Poly p;
    poly_load(&p, a);
    for (size_t i = 0; i < p.n; i++)
        if (!term_remove_syms(&p.t[i], m))
            return dim_fresh(t);
    poly_scale(&p, b->div);
    if (__builtin_mul_overflow(p.div, m->coef, &p.div))
        return dim_fresh(t);
    return poly_finish(t, &p);
}

Dim dim_floordiv(DimTable *t, Dim a, int64_t c)
{
    if (c == 1)
        return a;
    if (c <= 0)
        return dim_fresh(t);
    int64_t dc;
    if (__builtin_mul_overflow(a->div, c, &dc))
        return dim_fresh(t);
    /* a = P/d. floor(P/(d*c)) is (P-r)/(d*c) + floor(r/(d*c)) when every
     * non-constant coefficient of P is a multiple of d*c (r: P's constant). */
    Poly p;
    poly_load(&p, a);
    int64_t r = 0;
    if (p.n && p.t[p.n - 1].n == 0)
        r = p.t[--p.n].coef;
    for (size_t i = 0; i < p.n; i++)
        if (p.t[i].coef % dc != 0)
            return dim_fresh(t);
    p.div = dc;
    p.t[p.n].coef = floordiv64(r, dc) * dc;
    p.t[p.n++].n = 0;
    return poly_finish(t, &p);
}

Dim dim_ceildiv(DimTable *t, Dim a, int64_t c)
{
    if (c <= 0)
        return dim_fresh(t);
    return dim_floordiv(t, dim_add(t, a, dim_const(t, c - 1)), c);
}

/* --- printing --- */

typedef struct StrBuf {
    char *p;
    size_t size, len;
} StrBuf;

static void sb_put(StrBuf *b, const char *s)
{
    for (; *s; s++)
        if (b->len + 1 < b->size)
            b->p[b->len++] = *s;
    b->p[b->len < b->size ? b->len : b->size - 1] = '\0';
}

static void sb_term(StrBuf *b, const DimTable *t, const DimTerm *x, bool first)
{
    char num[32], id[128];
    int64_t c = x->coef;
    if (!first || c < 0)
        sb_put(b, c < 0 ? "-" : "+");
    uint64_t mag = c < 0 ? 0 - (uint64_t)c : (uint64_t)c;
    snprintf(num, sizeof num, "%llu", (unsigned long long)mag);
    if (x->n == 0 || mag != 1) {
        sb_put(b, num);
        if (x->n)
            sb_put(b, "*");
    }
    for (uint32_t i = 0; i < x->n; i++) {
        put_ident(id, sizeof id, t->names[x->sym[i]]);
        sb_put(b, i ? "*" : "");
        sb_put(b, *id ? id : "_");
    }
}

char *dim_str(const DimTable *t, Dim d, char *buf, size_t size)
{
    StrBuf b = {buf, size, 0};
    if (!size)
        return buf;
    buf[0] = '\0';
    bool paren = d->div != 1 && d->n_terms > 1;
    if (paren)
        sb_put(&b, "(");
    if (!d->n_terms)
        sb_put(&b, "0");
    for (uint32_t i = 0; i < d->n_terms; i++)
        sb_term(&b, t, &d->terms[i], i == 0);
    if (paren)
        sb_put(&b, ")");
    if (d->div != 1) {
        char num[32];
        snprintf(num, sizeof num, "/%lld", (long long)d->div);
        sb_put(&b, num);
    }
    return buf;
}

/* --- parsing what dim_str wrote --- */

typedef struct Parser {
    DimTable *t;
    const char *s;
    bool bad;
} Parser;

static bool is_ident_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

static int64_t parse_int(Parser *p)
{
    int64_t v = 0;
    if (*p->s < '0' || *p->s > '9')
        p->bad = true;
    for (; *p->s >= '0' && *p->s <= '9'; p->s++) {
        if (v > (INT64_MAX - 9) / 10)
            p->bad = true;
        else
            v = v * 10 + (*p->s - '0');
    }
    return v;
}

/* A factor: an integer or a symbol. */
static Dim parse_factor(Parser *p)
{
    if (*p->s >= '0' && *p->s <= '9')
        return dim_const(p->t, parse_int(p));
    char name[128];
    size_t k = 0;
    for (; is_ident_char(*p->s, k == 0) && k + 1 < sizeof name; p->s++)
        name[k++] = *p->s;
    name[k] = '\0';
    if (!k) {
        p->bad = true;
        return dim_const(p->t, 0);
    }
    return dim_sym(p->t, name);
}

static Dim parse_term(Parser *p)
{
    Dim d = parse_factor(p);
    while (!p->bad && *p->s == '*') {
        p->s++;
        d = dim_mul(p->t, d, parse_factor(p));
    }
    return d;
}

static Dim parse_sum(Parser *p)
{
    bool neg = *p->s == '-';
    if (neg || *p->s == '+')
        p->s++;
    Dim d = parse_term(p);
    if (neg)
        d = dim_sub(p->t, dim_const(p->t, 0), d);
    while (!p->bad && (*p->s == '+' || *p->s == '-')) {
        bool minus = *p->s++ == '-';
        Dim x = parse_term(p);
        d = minus ? dim_sub(p->t, d, x) : dim_add(p->t, d, x);
    }
    return d;
}

Dim dim_parse(DimTable *t, const char *s)
{
    Parser p = {t, s, false};
    bool paren = *p.s == '(';
    p.s += paren;
    Dim d = parse_sum(&p);
    if (paren && *p.s++ != ')')
        return NULL;
    if (!p.bad && *p.s == '/') {
        p.s++;
        int64_t c = parse_int(&p);
        if (c <= 0)
            return NULL;
        d = dim_div_exact(t, d, c);
    }
    char back[256];
    if (p.bad || *p.s || dim_has_fresh(t, d) || strcmp(dim_str(t, d, back, sizeof back), s) != 0)
        return NULL;
    return d;
}
