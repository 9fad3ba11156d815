/* eval_plan.c - the element plan (eval.h): output element e of an
 * elementwise or data-movement kernel reads, from each input, the element
 * its axis maps give, and fn combines them. Broadcasting, Transpose, Slice,
 * Expand and Tile are all such maps, so one loop computes them, in memory or
 * chunk by chunk while the result is written. */
#include <string.h>

#include "eval.h"
#include "../ir/lazy.h"
#include "../ir/mapping.h"

void eval_plan_init(EvalPlan *p, int32_t dtype, int rank, const int64_t *dims, EvalElemFn fn)
{
    memset(p, 0, sizeof *p);
    p->dtype = dtype;
    p->rank = rank;
    if (rank)
        memcpy(p->dims, dims, (size_t)rank * sizeof *dims);
    p->fn = fn;
}

int eval_plan_mapped(EvalPlan *p, const Tensor *t, const EvalAxis *axes)
{
    if (p->n_in == EVAL_MAX_IN)
        return -1;
    p->in[p->n_in] = t;
    if (p->rank)
        memcpy(p->axes[p->n_in], axes, (size_t)p->rank * sizeof *axes);
    p->n_in++;
    return 0;
}

int eval_plan_broadcast(EvalPlan *p, const Tensor *t)
{
    EvalAxis axes[EVAL_MAX_RANK];
    int64_t strides[EVAL_MAX_RANK];
    eval_strides(t->dims, t->ndims, strides);
    for (int a = 0; a < p->rank; a++) {
        int j = a - (p->rank - (int)t->ndims);
        bool same = j >= 0 && t->dims[j] != 1;
        axes[a] = (EvalAxis){0, same ? 1 : 0, 0, same ? strides[j] : 0};
    }
    return eval_plan_mapped(p, t, axes);
}

/* Does input k read element e at output element e (same layout)? */
static bool plan_in_order(const EvalPlan *p, size_t k)
{
    int64_t strides[EVAL_MAX_RANK];
    eval_strides(p->dims, (size_t)p->rank, strides);
    if (tensor_numel(p->in[k]) != dims_numel(p->dims, (size_t)p->rank))
        return false;
    for (int a = 0; a < p->rank; a++) {
        const EvalAxis *x = &p->axes[k][a];
        if (p->dims[a] != 1 && (x->start || x->step != 1 || x->mod || x->stride != strides[a]))
            return false;
    }
    return true;
}

static int64_t plan_pos(const EvalAxis *x, int64_t j)
{
    int64_t c = x->start + x->step * j;
    return (x->mod ? c % x->mod : c) * x->stride;
}

/* Elements of inputs read in order (computed ones) come chunk by chunk
 * through a buffer of this many elements, on the stack: a chain of streamed
 * results nests one buffer per link (16 KiB each), on the writer's thread. */
enum { PLAN_STEP = 256 };

typedef struct PlanChunk {
    const uint8_t *src[EVAL_MAX_IN];
    int64_t shift[EVAL_MAX_IN]; /* element index of src[k][0] */
} PlanChunk;

static void plan_element(const EvalPlan *p, const PlanChunk *ch, const int64_t *idx, uint8_t *dst)
{
    if (!p->fn) {
        memcpy(dst, ch->src[0] + (size_t)(idx[0] - ch->shift[0]) * p->in_size[0], p->out_size);
        return;
    }
    EvalNum v[EVAL_MAX_IN];
    for (size_t k = 0; k < p->n_in; k++)
        v[k] = eval_load(p->in[k]->dtype, ch->src[k] + (size_t)(idx[k] - ch->shift[k]) * p->in_size[k]);
    eval_store(p->dtype, dst, p->fn(p, v));
}

/* Output elements [first, first+count) into out, one row of the last axis
 * at a time. */
static void plan_rows(const EvalPlan *p, const PlanChunk *ch, size_t first, size_t count,
                      uint8_t *out)
{
    int64_t coord[EVAL_MAX_RANK], base[EVAL_MAX_IN], idx[EVAL_MAX_IN];
    int last = p->rank - 1;
    size_t size = p->out_size, rest = first;
    for (int a = last; a >= 0; a--) {
        coord[a] = (int64_t)(rest % (size_t)p->dims[a]);
        rest /= (size_t)p->dims[a];
    }
    for (size_t e = 0; e < count;) {
        size_t row = last < 0 ? 1 : (size_t)(p->dims[last] - coord[last]);
        row = row < count - e ? row : count - e;
        for (size_t k = 0; k < p->n_in; k++) {
            base[k] = 0;
            for (int a = 0; a < last; a++)
                base[k] += plan_pos(&p->axes[k][a], coord[a]);
        }
        for (size_t j = 0; j < row; j++) {
            for (size_t k = 0; k < p->n_in; k++)
                idx[k] = base[k] + (last < 0 ? 0 : plan_pos(&p->axes[k][last], coord[last] + (int64_t)j));
            plan_element(p, ch, idx, out + (e + j) * size);
        }
        e += row;
        for (int a = last; a >= 0; a--) { /* carry */
            coord[a] += a == last ? (int64_t)row : 1;
            if (coord[a] < p->dims[a] || a == 0)
                break;
            coord[a] = 0;
        }
    }
}

/* dst[i] = src[at[i]] (byte offsets) for n elements of size bytes; the
 * size is switched on once so each copy is one move. */
static void plan_gather(uint8_t *dst, const uint8_t *src, const size_t *at, size_t n, size_t size)
{
#define PLAN_GATHER(sz) \
    for (size_t i = 0; i < n; i++) \
        memcpy(dst + i * (sz), src + at[i], (sz));
    switch (size) {
    case 1: PLAN_GATHER(1) break;
    case 2: PLAN_GATHER(2) break;
    case 4: PLAN_GATHER(4) break;
    case 8: PLAN_GATHER(8) break;
    default: PLAN_GATHER(size)
    }
#undef PLAN_GATHER
}

/* The tiles of plan_tiled: rows by elements of a row. */
enum { PLAN_TILE_ROWS = 128, PLAN_TILE_COLS = 16 };

/* Whole output rows [row, row+n) of a copy (Transpose and the like) whose
 * last axis reads its input with a stride: a row at a time, every element
 * would land on another input cache line and page. Instead a band of
 * PLAN_TILE_ROWS rows is filled PLAN_TILE_COLS columns at a time: those
 * columns of neighbouring rows usually read neighbouring input elements, so
 * each input line is fetched once per band and used whole, as in a
 * cache-blocked transpose. */
static void plan_tiled(const EvalPlan *p, const uint8_t *src, size_t row, size_t n, uint8_t *out)
{
    int last = p->rank - 1;
    size_t len = (size_t)p->dims[last], size = p->out_size, isize = p->in_size[0];
    const EvalAxis *ax = p->axes[0];
    for (size_t r0 = 0; r0 < n; r0 += PLAN_TILE_ROWS) {
        size_t g = n - r0 < PLAN_TILE_ROWS ? n - r0 : PLAN_TILE_ROWS;
        int64_t base[PLAN_TILE_ROWS];
        for (size_t k = 0; k < g; k++) {
            size_t rest = row + r0 + k;
            base[k] = 0;
            for (int a = last - 1; a >= 0; a--) {
                base[k] += plan_pos(&ax[a], (int64_t)(rest % (size_t)p->dims[a]));
                rest /= (size_t)p->dims[a];
            }
        }
        for (size_t j0 = 0; j0 < len; j0 += PLAN_TILE_COLS) {
            size_t w = len - j0 < PLAN_TILE_COLS ? len - j0 : PLAN_TILE_COLS, at[PLAN_TILE_COLS];
            for (size_t j = 0; j < w; j++)
                at[j] = (size_t)plan_pos(&ax[last], (int64_t)(j0 + j)) * isize;
            for (size_t k = 0; k < g; k++)
                plan_gather(out + ((r0 + k) * len + j0) * size,
                            src + (size_t)base[k] * isize, at, w, size);
        }
    }
}

/* A copy of one input in memory whose last axis is read with a stride. */
static bool plan_tileable(const EvalPlan *p)
{
    if (p->fn || p->n_in != 1 || !p->bytes[0] || p->rank < 2)
        return false;
    const EvalAxis *x = &p->axes[0][p->rank - 1];
    return p->dims[p->rank - 1] > 1 && (x->mod || x->step * x->stride != 1);
}

/* Elements [first, first+count) of a tileable plan from its input's bytes
 * src: the partial rows at either end one by one, the whole rows between
 * them tiled. */
static void plan_fill_tiled(const EvalPlan *p, const uint8_t *src, size_t first, size_t count,
                            uint8_t *out)
{
    PlanChunk ch = {{src}, {0}};
    size_t len = (size_t)p->dims[p->rank - 1], size = p->out_size;
    size_t head = (len - first % len) % len;
    head = head < count ? head : count;
    plan_rows(p, &ch, first, head, out);
    size_t rows = (count - head) / len, tail = count - head - rows * len;
    plan_tiled(p, src, (first + head) / len, rows, out + head * size);
    plan_rows(p, &ch, first + head + rows * len, tail, out + (head + rows * len) * size);
}

/* Fills at least this large read a mapped input through a copy of it
 * (model_mapped_copy); smaller ones, such as the steps of a streamed result
 * reading this one in order, read the mapping, so that two transposed
 * inputs read in turn do not evict each other's copy at every step. */
enum { PLAN_COPY_FROM = 64 << 10 };

static const uint8_t *plan_tiled_source(const EvalPlan *p, size_t count)
{
    const uint8_t *copy = NULL;
    if (p->model && count * p->out_size >= PLAN_COPY_FROM)
        copy = model_mapped_copy(p->model, p->bytes[0], p->in[0]->nbytes);
    return copy ? copy : p->bytes[0];
}

/* Elements [first, first+count): inputs without bytes in memory are read in
 * order, PLAN_STEP elements at a time (a LazyFill). */
static void plan_fill(const void *ctx, size_t first, size_t count, uint8_t *out)
{
    const EvalPlan *p = ctx;
    if (plan_tileable(p)) {
        plan_fill_tiled(p, plan_tiled_source(p, count), first, count, out);
        return;
    }
    uint8_t scratch[EVAL_MAX_IN][PLAN_STEP * 8];
    size_t size = dtype_size(p->dtype);
    for (size_t done = 0; done < count; done += PLAN_STEP) {
        size_t n = count - done < PLAN_STEP ? count - done : PLAN_STEP;
        PlanChunk ch;
        for (size_t k = 0; k < p->n_in; k++) {
            ch.src[k] = p->bytes[k];
            ch.shift[k] = 0;
            if (p->bytes[k])
                continue;
            size_t isize = dtype_size(p->in[k]->dtype);
            lazy_read(p->in[k], (first + done) * isize, n * isize, scratch[k]);
            ch.src[k] = scratch[k];
            ch.shift[k] = (int64_t)(first + done);
        }
        plan_rows(p, &ch, first + done, n, out + done * size);
    }
}

/* Input bytes: in memory, or (for a streamed result reading a computed
 * input in order) NULL, read chunk by chunk; else computed now. source:
 * the input whose mapped pages the result lets go (lazy.h), the first read
 * in order, else the first in memory. */
static int plan_bind(EvalCtx *c, EvalPlan *p, bool streamed, const Tensor **source,
                     bool *source_in_order)
{
    *source = NULL;
    *source_in_order = false;
    for (size_t k = 0; k < p->n_in; k++) {
        bool in_order = plan_in_order(p, k);
        if (p->in[k]->data && (!*source || (in_order && !*source_in_order))) {
            *source = p->in[k];
            *source_in_order = in_order;
        }
        if (streamed && in_order && !p->in[k]->data)
            continue;
        p->bytes[k] = eval_bytes(c, p->in[k]);
        if (!p->bytes[k])
            return c->why ? EVAL_DECLINE : EVAL_OOM;
    }
    return EVAL_OK;
}

int eval_plan_run(EvalCtx *c, const EvalPlan *p)
{
    int64_t n = dims_numel(p->dims, (size_t)p->rank);
    size_t size = dtype_size(p->dtype);
    if (n < 0 || !size || (uint64_t)n > c->limit / size)
        return eval_decline_too_large(c);
    bool streamed = (size_t)n * size >= c->lazy_from;
    EvalPlan *q = arena_alloc(c->arena, sizeof *q);
    if (!q)
        return EVAL_OOM;
    *q = *p;
    q->out_size = size;
    q->model = c->model;
    q->float0 = q->n_in && dtype_is_float(q->in[0]->dtype);
    for (size_t k = 0; k < q->n_in; k++)
        q->in_size[k] = dtype_size(q->in[k]->dtype);
    const Tensor *source;
    bool in_order;
    int rc = plan_bind(c, q, streamed, &source, &in_order);
    if (rc)
        return rc;
    if (streamed) {
        c->out[0] = lazy_tensor_new(c->arena, q->dtype, (size_t)q->rank, q->dims, plan_fill, q,
                                    source, in_order, c->model);
        return c->out[0] ? EVAL_OK : EVAL_OOM;
    }
    Tensor *t = eval_out(c, 0, q->dtype, (size_t)q->rank, q->dims);
    if (!t)
        return eval_out_failed(c);
    plan_fill(q, 0, (size_t)n, (uint8_t *)t->data);
    return EVAL_OK;
}
