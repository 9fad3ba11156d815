/* wire.c - protobuf wire reading and segment-list writing. */
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int wire_varint(WireReader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return -1;
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1; /* more than 10 bytes */
}

int wire_next(WireReader *r, WireField *f)
{
    if (r->p >= r->end)
        return 0;
    const uint8_t *start = r->p;
    uint64_t tag;
    if (wire_varint(r, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    f->data = (Bytes){0};
    f->u = 0;
    size_t left;
    switch (f->wt) {
    case WT_VARINT:
        if (wire_varint(r, &f->u))
            return -1;
        break;
    case WT_I64:
    case WT_I32: {
        size_t n = f->wt == WT_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return -1;
        for (size_t i = 0; i < n; i++)
            f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        break;
    }
    case WT_LEN: {
        uint64_t len;
        if (wire_varint(r, &len))
            return -1;
        left = (size_t)(r->end - r->p);
        if (len > left)
            return -1;
        f->data = (Bytes){r->p, (size_t)len};
        r->p += len;
        break;
    }
    default: /* groups (3, 4) are not used by onnx.proto; 6, 7 do not exist */
        return -1;
    }
    f->whole = (Bytes){start, (size_t)(r->p - start)};
    if (r->allowed && !r->bad && f->num < r->n_allowed && r->allowed[f->num] &&
        !(r->allowed[f->num] & WT_BIT(f->wt)))
        r->bad = f->num;
    return 1;
}

/* Does the field at r->p run past the end of the bytes, rather than being
 * malformed? (wire_next failed on it.) */
static bool wire_field_cut(WireReader *r)
{
    const uint8_t *start = r->p;
    uint64_t tag, v;
    if (wire_varint(r, &tag))
        return r->p == r->end && r->p - start < 10;
    uint64_t num = tag >> 3;
    int wt = (int)(tag & 7);
    if (num == 0 || num > 0x1fffffff ||
        (num < r->n_allowed && r->allowed[num] && !(r->allowed[num] & WT_BIT(wt))))
        return false;
    start = r->p;
    switch (wt) {
    case WT_VARINT:
        return wire_varint(r, &v) && r->p == r->end && r->p - start < 10;
    case WT_I64:
    case WT_I32:
        return true; /* fewer bytes left than the value takes */
    case WT_LEN:
        return wire_varint(r, &v) ? r->p == r->end && r->p - start < 10 : true;
    default:
        return false;
    }
}

bool wire_head_ok(WireReader r)
{
    WireField f;
    const uint8_t *start = r.p;
    int rc;
    while ((rc = wire_next(&r, &f)) == 1)
        start = r.p;
    if (r.bad || rc == 0)
        return !r.bad;
    r.p = start;
    return wire_field_cut(&r);
}

/* Free room in the current chunk for copied bytes. One pool serves a whole
 * encoding (every submessage's output), so a model with 100k small messages
 * does not hold 100k half-empty chunks. */
typedef struct OutPool {
    uint8_t *tail;
    size_t left;
} OutPool;

void out_init(Out *o, Arena *a)
{
    memset(o, 0, sizeof *o);
    o->arena = a;
    o->pool = arena_alloc(a, sizeof *o->pool);
    o->failed = !o->pool;
}

void out_child(Out *child, const Out *o)
{
    memset(child, 0, sizeof *child);
    child->arena = o->arena;
    child->pool = o->pool;
    child->failed = !o->pool;
    child->opt = o->opt;
}

/* Room for one more segment. The arrays are malloc'ed, not from the arena:
 * a child's array is freed once its parent took the segments, and a grown
 * array leaves no old copy behind, so encoding a million changed nodes
 * holds each segment about once. */
static int segs_grow(Out *o)
{
    if (o->n < o->cap)
        return 0;
    size_t cap = o->cap ? 2 * o->cap : 8;
    Seg *grown = cap <= SIZE_MAX / sizeof *grown ? realloc(o->segs, cap * sizeof *grown) : NULL;
    if (!grown) {
        o->failed = true;
        return -1;
    }
    o->segs = grown;
    o->cap = cap;
    return 0;
}

void out_free(Out *o)
{
    free(o->segs);
    o->segs = NULL;
    o->n = o->cap = 0;
}

static void push_seg(Out *o, const uint8_t *p, size_t n)
{
    if (!n || o->failed)
        return;
    o->size += n;
    if (o->n && o->segs[o->n - 1].p && o->segs[o->n - 1].p + o->segs[o->n - 1].len == p) {
        o->segs[o->n - 1].len += n; /* contiguous with the previous piece */
        return;
    }
    if (segs_grow(o))
        return;
    o->segs[o->n++] = (Seg){p, n, NULL, 0};
}

uint8_t *out_space(Out *o, size_t n)
{
    if (o->failed || !n)
        return NULL;
    OutPool *pool = o->pool;
    if (pool->left < n) {
        size_t chunk = n > 65536 ? n : 65536;
        pool->tail = arena_alloc(o->arena, chunk);
        pool->left = pool->tail ? chunk : 0;
        if (!pool->tail) {
            o->failed = true;
            return NULL;
        }
    }
    uint8_t *at = pool->tail;
    push_seg(o, at, n);
    pool->tail += n;
    pool->left -= n;
    return at;
}

void out_copy(Out *o, const void *p, size_t n)
{
    uint8_t *at = out_space(o, n);
    if (at)
        memcpy(at, p, n);
}

void out_ref(Out *o, const void *p, size_t n)
{
    push_seg(o, p, n);
}

void out_gen(Out *o, const TensorGen *gen, size_t n)
{
    if (!n || o->failed)
        return;
    if (segs_grow(o))
        return;
    o->segs[o->n++] = (Seg){NULL, n, gen, 0};
    o->size += n;
}

void out_tensor_bytes_field(Out *o, uint32_t num, const Tensor *t)
{
    if (t->data) {
        out_bytes_field(o, num, t->data, t->nbytes);
        return;
    }
    out_tag(o, num, WT_LEN);
    out_varint(o, t->nbytes);
    out_gen(o, t->gen, t->nbytes);
}

size_t wire_varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

uint8_t *wire_put_varint(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

void out_varint(Out *o, uint64_t v)
{
    uint8_t buf[10];
    out_copy(o, buf, (size_t)(wire_put_varint(buf, v) - buf));
}

void out_tag(Out *o, uint32_t num, int wt)
{
    out_varint(o, ((uint64_t)num << 3) | (uint64_t)wt);
}

void out_varint_field(Out *o, uint32_t num, uint64_t v)
{
    out_tag(o, num, WT_VARINT);
    out_varint(o, v);
}

void out_fixed32_field(Out *o, uint32_t num, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    out_tag(o, num, WT_I32);
    out_copy(o, b, 4);
}

/* A piece this short is copied, not referenced: a reference takes a Seg
 * (32 bytes) and breaks the run of copied bytes, so the next copy takes
 * another. Names and small values of re-encoded nodes are mostly short: a
 * million of them would otherwise hold tens of segments each. */
enum { OUT_COPY_MAX = 64 };

void out_bytes_field(Out *o, uint32_t num, const void *p, size_t n)
{
    out_tag(o, num, WT_LEN);
    out_varint(o, n);
    if (n <= OUT_COPY_MAX)
        out_copy(o, p, n);
    else
        out_ref(o, p, n);
}

/* The tag of length-delimited field num and the length len, encoded into
 * head: how many bytes. */
static size_t len_field_head(uint8_t head[20], uint32_t num, uint64_t len)
{
    size_t k = 0;
    for (uint64_t v = (uint64_t)num << 3 | WT_LEN, pass = 0; pass < 2; pass++, v = len) {
        do {
            head[k++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
            v >>= 7;
        } while (v);
    }
    return k;
}

bool out_ref_field(Out *o, uint32_t num, Bytes body, Bytes within)
{
    uint8_t head[20];
    size_t k = len_field_head(head, num, body.len);
    uintptr_t at = (uintptr_t)body.ptr, lo = (uintptr_t)within.ptr;
    if (at < lo + k || at - lo > within.len || body.len > within.len - (at - lo) ||
        memcmp(body.ptr - k, head, k) != 0)
        return false;
    out_ref(o, body.ptr - k, k + body.len);
    return true;
}

void out_string_field(Out *o, uint32_t num, const char *s)
{
    out_bytes_field(o, num, s, strlen(s));
}

void out_append(Out *o, const Out *child)
{
    if (child->failed)
        o->failed = true;
    for (size_t i = 0; i < child->n; i++) {
        const Seg *c = &child->segs[i];
        if (c->gen) {
            out_gen(o, c->gen, c->len);
            if (!o->failed)
                o->segs[o->n - 1].gen_off = c->gen_off;
        } else {
            push_seg(o, c->p, c->len);
        }
    }
}

/* Appends child's segments by growing child's array (realloc of a large
 * block moves pages, it does not copy them) and putting o's few segments in
 * front: copying the graph's segments into the model's array would hold both
 * at once. */
static void out_adopt(Out *o, Out *child)
{
    size_t n = o->n + child->n;
    Seg *segs = n <= SIZE_MAX / sizeof *segs ? realloc(child->segs, n * sizeof *segs) : NULL;
    if (!segs) {
        o->failed = true;
        return;
    }
    memmove(segs + o->n, segs, child->n * sizeof *segs);
    if (o->n)
        memcpy(segs, o->segs, o->n * sizeof *segs);
    free(o->segs);
    o->segs = segs;
    o->n = o->cap = n;
    o->size += child->size;
    child->segs = NULL;
    child->n = child->cap = 0;
}

/* When child is one run of copied bytes ending at the pool's tail (a small
 * message encoded from its fields), its tag and length go in front of it
 * in the pool, the bytes moved up to make room: the field is then one run
 * of bytes, which continues the run before it. A million new initializers
 * or re-encoded nodes are then a few segments, not two each. */
static bool out_prefix_in_pool(Out *o, uint32_t num, const Out *child)
{
    OutPool *pool = o->pool;
    uint8_t head[20];
    size_t k = len_field_head(head, num, child->size);
    if (o->failed || child->failed || child->n != 1 || !pool || pool->left < k)
        return false;
    const Seg *c = &child->segs[0];
    if (!c->p || c->len != child->size || c->p + c->len != pool->tail)
        return false;
    uint8_t *at = pool->tail - c->len;
    memmove(at + k, at, c->len);
    memcpy(at, head, k);
    pool->tail += k;
    pool->left -= k;
    push_seg(o, at, k + c->len);
    return true;
}

void out_message_field(Out *o, uint32_t num, Out *child)
{
    if (out_prefix_in_pool(o, num, child)) {
        out_free(child);
        return;
    }
    out_tag(o, num, WT_LEN);
    out_varint(o, child->size);
    if (child->failed)
        o->failed = true;
    if (child->n > 64 && child->n > o->n && !o->failed)
        out_adopt(o, child);
    else
        out_append(o, child);
    out_free(child);
}
