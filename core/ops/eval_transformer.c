/* eval_transformer.c - kernels of the transformer blocks opset 23 added
 * beside Attention (eval.h), in double, rounded once: RMSNormalization (x
 * over the root mean square of the axes from axis on, times the scale) and
 * RotaryEmbedding (pairs of each head's first rotary_embedding_dim values
 * turned by the cached cos and sin of their position; halves, or
 * neighbours when interleaved). */
#include <math.h>
#include <string.h>

#include "eval.h"

static int eval_rms_norm(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *w = eval_in(c, 1);
    int axis = x ? eval_axis(op_attr_int(c->op, "axis", -1), (int)x->ndims) : -1;
    c->exact = EVAL_ROUNDS;
    if (!x || !w || axis < 0 || !dtype_is_float(x->dtype) || !dtype_is_float(w->dtype) ||
        op_attr_int(c->op, "stash_type", 1) != 1)
        return eval_decline(c, "unsupported inputs, axis or stash_type");
    double eps = op_attr_float(c->op, "epsilon", 1e-5f);
    size_t rows = (size_t)dims_numel(x->dims, (size_t)axis);
    size_t cols = (size_t)dims_numel(x->dims + axis, x->ndims - (size_t)axis);
    size_t xs = dtype_size(x->dtype), ws = dtype_size(w->dtype);
    const uint8_t *xb = eval_bytes(c, x), *wb = xb ? eval_bytes(c, w) : NULL;
    Tensor *t = wb ? eval_out(c, 0, x->dtype, x->ndims, x->dims) : NULL;
    if (!t)
        return eval_out_failed(c);
    for (size_t r = 0; r < rows; r++) {
        double sq = 0;
        for (size_t k = 0; k < cols; k++) {
            double v = eval_load(x->dtype, xb + (r * cols + k) * xs).f;
            sq += v * v;
        }
        double inv = 1 / sqrt(sq / (double)(cols ? cols : 1) + eps);
        for (size_t k = 0; k < cols; k++) {
            size_t e = r * cols + k;
            int64_t wo = eval_broadcast_offset(w, x->dims, x->ndims, e);
            if (wo < 0)
                return eval_decline(c, "a scale that does not broadcast to the input");
            double v = eval_load(x->dtype, xb + e * xs).f * inv *
                       eval_load(w->dtype, wb + (size_t)wo * ws).f;
            eval_store(x->dtype, (uint8_t *)t->data + e * xs, (EvalNum){.f = v});
        }
    }
    return EVAL_OK;
}

typedef struct Rope {
    const Tensor *x, *cos, *sin;
    const uint8_t *xb, *cb, *sb;
    int64_t *pos; /* batch * seq position ids, or NULL */
    int64_t batch, seq, heads, head, rot;
    bool four_d, interleaved;
} Rope;

static bool rope_read(EvalCtx *c, Rope *r)
{
    memset(r, 0, sizeof *r);
    r->x = eval_in(c, 0);
    r->cos = eval_in(c, 1);
    r->sin = eval_in(c, 2);
    if (!r->x || !r->cos || !r->sin || !dtype_is_float(r->x->dtype) ||
        (r->x->ndims != 3 && r->x->ndims != 4))
        return false;
    r->four_d = r->x->ndims == 4;
    r->batch = r->x->dims[0];
    r->seq = r->x->dims[r->four_d ? 2 : 1];
    r->heads = r->four_d ? r->x->dims[1] : op_attr_int(c->op, "num_heads", 0);
    if (r->heads <= 0 || (!r->four_d && r->x->dims[2] % r->heads))
        return false;
    r->head = r->four_d ? r->x->dims[3] : r->x->dims[2] / r->heads;
    r->rot = op_attr_int(c->op, "rotary_embedding_dim", 0);
    r->rot = r->rot ? r->rot : r->head;
    r->interleaved = op_attr_int(c->op, "interleaved", 0) != 0;
    size_t n = (size_t)(r->batch * r->seq);
    if (r->rot % 2 || r->rot > r->head || r->cos->dims[r->cos->ndims - 1] != r->rot / 2 ||
        r->sin->ndims != r->cos->ndims)
        return false;
    if (c->n_in > 3 && c->in[3]) {
        r->pos = arena_array(c->arena, n ? n : 1, sizeof *r->pos);
        if (!r->pos || eval_ints(c, 3, r->pos, n) != (long)n || r->cos->ndims != 2)
            return false;
        for (size_t k = 0; k < n; k++)
            if (r->pos[k] < 0 || r->pos[k] >= r->cos->dims[0])
                return false;
    } else if (r->cos->ndims != 3 || r->cos->dims[0] != r->batch || r->cos->dims[1] != r->seq) {
        return false;
    }
    return (r->xb = eval_bytes(c, r->x)) && (r->cb = eval_bytes(c, r->cos)) &&
           (r->sb = eval_bytes(c, r->sin));
}

/* Element (b, s, h, d) of x (or of the output, the same layout). */
static size_t rope_at(const Rope *r, int64_t b, int64_t s, int64_t h, int64_t d)
{
    return (size_t)(r->four_d ? ((b * r->heads + h) * r->seq + s) * r->head + d
                              : ((b * r->seq + s) * r->heads + h) * r->head + d);
}

static void rope_head(const Rope *r, Tensor *t, int64_t b, int64_t s, int64_t h)
{
    int32_t dt = r->x->dtype;
    size_t size = dtype_size(dt), half = (size_t)(r->rot / 2);
    size_t row = (size_t)(r->pos ? r->pos[b * r->seq + s] : b * r->seq + s) * half;
    for (int64_t d = 0; d < r->head; d++) {
        double v = eval_load(dt, r->xb + rope_at(r, b, s, h, d) * size).f;
        if (d < r->rot) {
            size_t i = r->interleaved ? (size_t)d / 2 : (size_t)d % half;
            bool second = r->interleaved ? d % 2 : (size_t)d >= half;
            int64_t pair = r->interleaved ? (second ? d - 1 : d + 1)
                                          : (second ? d - (int64_t)half : d + (int64_t)half);
            double other = eval_load(dt, r->xb + rope_at(r, b, s, h, pair) * size).f;
            double cs = eval_load(r->cos->dtype, r->cb + (row + i) * dtype_size(r->cos->dtype)).f;
            double sn = eval_load(r->sin->dtype, r->sb + (row + i) * dtype_size(r->sin->dtype)).f;
            v = second ? sn * other + cs * v : cs * v - sn * other;
        }
        eval_store(dt, (uint8_t *)t->data + rope_at(r, b, s, h, d) * size, (EvalNum){.f = v});
    }
}

static int eval_rotary_embedding(EvalCtx *c)
{
    Rope r;
    c->exact = EVAL_ROUNDS;
    if (!rope_read(c, &r))
        return eval_decline(c, "unsupported inputs, caches or position ids");
    Tensor *t = eval_out(c, 0, r.x->dtype, r.x->ndims, r.x->dims);
    if (!t)
        return eval_out_failed(c);
    for (int64_t b = 0; b < r.batch; b++)
        for (int64_t s = 0; s < r.seq; s++)
            for (int64_t h = 0; h < r.heads; h++)
                rope_head(&r, t, b, s, h);
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "RMSNormalization", 23, eval_rms_norm},
    {"", "RotaryEmbedding", 23, eval_rotary_embedding},
};

const OpKernelTable eval_transformer_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
