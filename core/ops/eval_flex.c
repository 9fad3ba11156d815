/* eval_flex.c - ai.onnx.preview's FlexAttention for the reference
 * interpreter (eval_flex.h): Y = prob_mod(Softmax(score_mod(Q K^T * scale)))
 * V over rank-4 inputs [batch, heads, sequence, head size], query head h
 * reading key/value head h / (q_heads / kv_heads) (grouped-query).
 *
 * As onnx's reference: Q and K are each multiplied by sqrt(scale) (taken in
 * float32, then rounded to the inputs' type), the scores and probabilities
 * are tensors of the softmax precision (float32 unless the inputs are
 * double or softmax_precision says otherwise) that the modifier subgraphs
 * read and write, and Y has V's type. Sums and the softmax run in double,
 * each result rounded once. A row the score modifier masks whole (every
 * score -inf) has no softmax: it declines. */
#include <math.h>
#include <string.h>

#include "eval.h"
#include "eval_flex.h"

typedef struct Flex {
    int64_t b, hq, hkv, l, s, e, ev;
    int32_t dt, ct; /* the inputs' type; the softmax precision */
    int64_t dims[4]; /* of scores and probabilities: b, hq, l, s */
} Flex;

static bool flex_float(const Tensor *t)
{
    return t && dtype_is_float(t->dtype) && t->ndims == 4 && t->data && !t->strings;
}

/* The shapes and types; -1 when the inputs do not fit the operator. */
static int flex_shape(const Op *op, const Tensor *q, const Tensor *k, const Tensor *v, Flex *f)
{
    if (!flex_float(q) || !flex_float(k) || !flex_float(v) || k->dtype != q->dtype ||
        v->dtype != q->dtype)
        return -1;
    *f = (Flex){q->dims[0], q->dims[1], k->dims[1], q->dims[2], k->dims[2], q->dims[3],
                v->dims[3], q->dtype, q->dtype == DT_DOUBLE ? DT_DOUBLE : DT_FLOAT, {0}};
    int64_t prec = op_attr_int(op, "softmax_precision", 0);
    if (prec)
        f->ct = (int32_t)prec;
    if (!dtype_is_float(f->ct) || k->dims[0] != f->b || v->dims[0] != f->b ||
        v->dims[1] != f->hkv || v->dims[2] != f->s || k->dims[3] != f->e || f->hkv < 1 ||
        f->hq % f->hkv)
        return -1;
    int64_t dims[4] = {f->b, f->hq, f->l, f->s};
    memcpy(f->dims, dims, sizeof dims);
    return 0;
}

/* Scores of softmax precision: (Q * sqrt(scale)) (K * sqrt(scale))^T. */
static void flex_scores(const Op *op, const Flex *f, const Tensor *q, const Tensor *k, double *sc)
{
    double scale = op_attr(op, "scale") ? op_attr_float(op, "scale", 1)
                                        : 1.0 / sqrt((double)f->e);
    double root = eval_round_to(f->dt, eval_round_to(DT_FLOAT, sqrt(eval_round_to(DT_FLOAT, scale))));
    size_t size = dtype_size(f->dt), at = 0;
    const uint8_t *qb = q->data, *kb = k->data;
    for (int64_t b = 0; b < f->b; b++)
        for (int64_t h = 0; h < f->hq; h++) {
            int64_t kh = h / (f->hq / f->hkv);
            for (int64_t i = 0; i < f->l; i++)
                for (int64_t j = 0; j < f->s; j++) {
                    size_t qo = (size_t)(((b * f->hq + h) * f->l + i) * f->e);
                    size_t ko = (size_t)(((b * f->hkv + kh) * f->s + j) * f->e);
                    double sum = 0;
                    for (size_t e = 0; e < (size_t)f->e; e++) {
                        double qe = eval_load(f->dt, qb + (qo + e) * size).f;
                        double ke = eval_load(f->dt, kb + (ko + e) * size).f;
                        sum += eval_round_to(f->dt, qe * root) * eval_round_to(f->dt, ke * root);
                    }
                    sc[at++] = eval_round_to(f->ct, sum);
                }
        }
}

/* Runs the modifier subgraph attribute `name` (when present) on v, of
 * softmax precision and f->dims, and reads its output back into v. */
static int flex_mod(EvalBody *r, const Op *op, const char *name, const Flex *f,
                    double *v)
{
    if (!op_attr(op, name))
        return EVAL_OK;
    const Graph *g = eval_body_graph(op, name);
    if (!g || eval_body_inputs(g) != 1 || eval_body_outputs(g) != 1)
        return eval_body_decline(r, "FlexAttention: a modifier that is not a graph of one input "
                                    "and one output");
    Tensor *in = tensor_new(r->arena, f->ct, 4, f->dims), *out[1] = {NULL};
    if (!in)
        return EVAL_OOM;
    size_t n = (size_t)tensor_numel(in), size = dtype_size(f->ct);
    for (size_t e = 0; e < n; e++)
        eval_store(f->ct, (uint8_t *)in->data + e * size, (EvalNum){.f = v[e]});
    const Tensor *ins[1] = {in};
    int rc = r->run(r, g, ins, 1, out);
    if (rc)
        return rc;
    const Tensor *o = out[0];
    if (!o || o->dtype != f->ct || o->ndims != 4 || !o->data ||
        memcmp(o->dims, f->dims, sizeof f->dims) != 0)
        return eval_body_decline(r, "FlexAttention: a modifier whose output differs from "
                                    "its input in type or shape");
    for (size_t e = 0; e < n; e++)
        v[e] = eval_load(f->ct, (const uint8_t *)o->data + e * size).f;
    return EVAL_OK;
}

/* Softmax of each row of s scores, rounded to the softmax precision; -1
 * when a row has no finite maximum (masked whole, or NaN). */
static int flex_softmax(const Flex *f, double *p, size_t rows)
{
    size_t s = (size_t)f->s;
    for (size_t r = 0; r < rows; r++) {
        double *row = p + r * s, mx = -INFINITY, sum = 0;
        for (size_t j = 0; j < s; j++)
            mx = row[j] > mx ? row[j] : mx;
        if (!isfinite(mx))
            return -1;
        for (size_t j = 0; j < s; j++)
            sum += row[j] = exp(row[j] - mx);
        for (size_t j = 0; j < s; j++)
            row[j] = eval_round_to(f->ct, row[j] / sum);
    }
    return 0;
}

/* Y = P V, rounded to V's type. */
static void flex_output(const Flex *f, const double *p, const Tensor *v, Tensor *y)
{
    size_t size = dtype_size(f->dt), at = 0;
    for (int64_t b = 0; b < f->b; b++)
        for (int64_t h = 0; h < f->hq; h++) {
            int64_t kh = h / (f->hq / f->hkv);
            for (int64_t i = 0; i < f->l; i++)
                for (int64_t d = 0; d < f->ev; d++) {
                    const double *row = p + ((b * f->hq + h) * f->l + i) * f->s;
                    double sum = 0;
                    for (int64_t j = 0; j < f->s; j++) {
                        size_t vo = (size_t)(((b * f->hkv + kh) * f->s + j) * f->ev + d);
                        double vv = eval_load(f->dt, (const uint8_t *)v->data + vo * size).f;
                        sum += row[j] * eval_round_to(f->ct, vv);
                    }
                    eval_store(f->dt, (uint8_t *)y->data + (at++) * size, (EvalNum){.f = sum});
                }
        }
}

bool eval_is_flex_attention(const Op *op)
{
    return !op->removed && op->domain && strcmp(op->domain, "ai.onnx.preview") == 0 &&
           strcmp(op->type, "FlexAttention") == 0;
}

int eval_run_flex_attention(EvalBody *r, const Op *op, const Tensor *const *ins, Tensor **outs)
{
    Flex f;
    if (op->n_inputs != 3 || op->n_outputs != 1 || flex_shape(op, ins[0], ins[1], ins[2], &f))
        return eval_body_decline(r, "FlexAttention: inputs that are not rank-4 float tensors of "
                                    "matching shapes");
    size_t n = (size_t)dims_numel(f.dims, 4);
    double *p = arena_array(r->arena, n ? n : 1, sizeof *p);
    int64_t ydims[4] = {f.b, f.hq, f.l, f.ev};
    Tensor *y = p ? tensor_new(r->arena, f.dt, 4, ydims) : NULL;
    if (!y)
        return EVAL_OOM;
    flex_scores(op, &f, ins[0], ins[1], p);
    int rc = flex_mod(r, op, "score_mod", &f, p);
    if (rc)
        return rc;
    if (flex_softmax(&f, p, (size_t)(f.b * f.hq * f.l)))
        return eval_body_decline(r, "FlexAttention: a row of scores masked whole (its softmax is "
                                    "NaN)");
    if ((rc = flex_mod(r, op, "prob_mod", &f, p)))
        return rc;
    flex_output(&f, p, ins[2], y);
    outs[0] = y;
    return EVAL_OK;
}
