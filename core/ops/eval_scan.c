/* eval_scan.c - Scan for the reference interpreter (eval_scan.h).
 *
 * From opset 9: N state variables, then M scan inputs; step t hands the
 * body the states and slice t of each scan input along its scan axis
 * (counted from the end when its direction is 1), and the body gives the
 * new states and one value per scan output. The outputs are the last
 * states, then each scan output's values stacked along its axis (in
 * reverse order when its direction is 1). Opset 8's Scan has a leading
 * batch axis on every input and output and an optional sequence_lens: each
 * batch entry is scanned on its own and the results stacked; lengths that
 * differ from the scan axis (padding) decline. */
#include <string.h>

#include "eval.h"
#include "eval_scan.h"

enum { SCAN_MAX = 64 }; /* states plus scan values the kernel handles */

typedef struct ScanSpec {
    size_t n_state, n_in, n_out; /* N, M, K */
    int64_t in_axes[SCAN_MAX], in_dirs[SCAN_MAX], out_axes[SCAN_MAX], out_dirs[SCAN_MAX];
} ScanSpec;

static bool scan_in_memory(const Tensor *t)
{
    return t && !t->strings && (t->data || !t->nbytes) && t->ndims <= EVAL_MAX_RANK;
}

/* Slice idx of t along axis (which it loses), in a. */
static Tensor *scan_slice(Arena *a, const Tensor *t, int axis, int64_t idx)
{
    int64_t dims[EVAL_MAX_RANK];
    size_t r = 0, size = dtype_size(t->dtype);
    for (size_t i = 0; i < t->ndims; i++)
        if ((int)i != axis)
            dims[r++] = t->dims[i];
    Tensor *s = tensor_new(a, t->dtype, r, dims);
    size_t outer = (size_t)dims_numel(t->dims, (size_t)axis), len = (size_t)t->dims[axis];
    size_t inner = (size_t)dims_numel(t->dims + axis + 1, t->ndims - (size_t)axis - 1) * size;
    for (size_t o = 0; s && o < outer; o++)
        memcpy((uint8_t *)s->data + o * inner,
               (const uint8_t *)t->data + (o * len + (size_t)idx) * inner, inner);
    return s;
}

/* steps[0..n) (one type and shape) stacked along a new axis, step k at
 * position k (reverse: n - 1 - k); NULL when they differ or out of memory. */
static Tensor *scan_stack(Arena *a, Tensor *const *steps, size_t n, int axis, bool reverse)
{
    const Tensor *t0 = steps[0];
    int64_t dims[EVAL_MAX_RANK];
    if (t0->ndims >= EVAL_MAX_RANK || axis < 0 || axis > (int)t0->ndims)
        return NULL;
    memcpy(dims, t0->dims, (size_t)axis * sizeof *dims);
    dims[axis] = (int64_t)n;
    memcpy(dims + axis + 1, t0->dims + axis, (t0->ndims - (size_t)axis) * sizeof *dims);
    Tensor *out = tensor_new(a, t0->dtype, t0->ndims + 1, dims);
    size_t outer = (size_t)dims_numel(t0->dims, (size_t)axis);
    size_t inner = outer ? t0->nbytes / outer : 0;
    for (size_t k = 0; out && k < n; k++) {
        const Tensor *t = steps[k];
        if (!scan_in_memory(t) || t->dtype != t0->dtype || t->ndims != t0->ndims ||
            memcmp(t->dims, t0->dims, t0->ndims * sizeof *dims) != 0)
            return NULL;
        size_t pos = reverse ? n - 1 - k : k;
        for (size_t o = 0; o < outer; o++)
            memcpy((uint8_t *)out->data + (o * n + pos) * inner,
                   (const uint8_t *)t->data + o * inner, inner);
    }
    return out;
}

/* The sequence length: the scan inputs' common extent along their axes
 * (normalised in place); -1 when they differ or an axis is out of range. */
static int64_t scan_length(ScanSpec *sp, const Tensor *const *scans)
{
    int64_t len = -1;
    for (size_t j = 0; j < sp->n_in; j++) {
        int axis = eval_axis(sp->in_axes[j], (int)scans[j]->ndims);
        if (axis < 0 || (len >= 0 && scans[j]->dims[axis] != len))
            return -1;
        sp->in_axes[j] = axis;
        len = scans[j]->dims[axis];
    }
    return len;
}

/* One scan: states[N] and scans[M] in, outs[N + K] out. */
static int scan_core(EvalBody *r, const Graph *body, ScanSpec *sp,
                     const Tensor *const *states, const Tensor *const *scans, Tensor **outs)
{
    size_t n = sp->n_state, m = sp->n_in, k = sp->n_out;
    int64_t len = scan_length(sp, scans);
    if (len <= 0)
        return eval_body_decline(r, "Scan: scan inputs of different or zero lengths, or a bad "
                                    "axis");
    const Tensor **ins = arena_array(r->arena, n + m, sizeof *ins);
    Tensor **bouts = arena_array(r->arena, n + k, sizeof *bouts);
    Tensor **steps = arena_array(r->arena, k * (size_t)len + 1, sizeof *steps);
    if (!ins || !bouts || !steps)
        return EVAL_OOM;
    memcpy(ins, states, n * sizeof *ins);
    for (int64_t t = 0; t < len; t++) {
        for (size_t j = 0; j < m; j++) {
            int64_t at = sp->in_dirs[j] ? len - 1 - t : t;
            if (!(ins[n + j] = scan_slice(r->arena, scans[j], (int)sp->in_axes[j], at)))
                return EVAL_OOM;
        }
        int rc = r->run(r, body, ins, n + m, bouts);
        if (rc)
            return rc;
        memcpy(ins, bouts, n * sizeof *ins);
        for (size_t q = 0; q < k; q++)
            steps[q * (size_t)len + (size_t)t] = bouts[n + q];
    }
    memcpy(outs, ins, n * sizeof *outs);
    for (size_t q = 0; q < k; q++) {
        Tensor *first = steps[q * (size_t)len];
        int axis = eval_axis(sp->out_axes[q], (int)first->ndims + 1);
        if (!(outs[n + q] = scan_stack(r->arena, steps + q * (size_t)len, (size_t)len, axis,
                                       sp->out_dirs[q] != 0)))
            return eval_body_decline(r, "Scan: scan outputs that differ in type or shape, or a "
                                        "bad axis");
    }
    return EVAL_OK;
}

/* The counts and attributes; -1 when they do not fit the node and body. */
static int scan_spec(const Op *op, const Graph *body, size_t n_values, ScanSpec *sp, bool v8)
{
    int64_t m = op_attr_int(op, "num_scan_inputs", 0);
    size_t n_body_in = eval_body_inputs(body), n_body_out = eval_body_outputs(body);
    if (m < 1 || (size_t)m > n_values || n_values > SCAN_MAX || op->n_outputs > SCAN_MAX)
        return -1;
    sp->n_in = (size_t)m;
    sp->n_state = n_values - sp->n_in;
    if (op->n_outputs < sp->n_state || n_body_in != n_values ||
        n_body_out != op->n_outputs)
        return -1;
    sp->n_out = op->n_outputs - sp->n_state;
    if (v8)
        return op_attr_ints_or(op, "directions", sp->in_dirs, sp->n_in, 0) ||
                       op_attr(op, "scan_input_axes")
                   ? -1
                   : 0;
    return op_attr_ints_or(op, "scan_input_axes", sp->in_axes, sp->n_in, 0) ||
                   op_attr_ints_or(op, "scan_input_directions", sp->in_dirs, sp->n_in, 0) ||
                   op_attr_ints_or(op, "scan_output_axes", sp->out_axes, sp->n_out, 0) ||
                   op_attr_ints_or(op, "scan_output_directions", sp->out_dirs, sp->n_out, 0)
               ? -1
               : 0;
}

/* Opset 8: every sequence_lens entry must be the full length. */
static bool scan8_full_lengths(const Tensor *lens, const Tensor *scan0, int64_t batch)
{
    if (!lens)
        return true;
    if (lens->dtype != DT_INT32 || tensor_numel(lens) != batch || !lens->data)
        return false;
    for (int64_t b = 0; b < batch; b++)
        if (eval_load(DT_INT32, (const uint8_t *)lens->data + 4 * b).i != scan0->dims[1])
            return false;
    return true;
}

/* Opset 8: batch entry by batch entry, the results stacked along axis 0. */
static int scan8(EvalBody *r, const Graph *body, ScanSpec *sp,
                 const Tensor *const *vals, const Tensor *lens, Tensor **outs)
{
    size_t nv = sp->n_state + sp->n_in, no = sp->n_state + sp->n_out;
    int64_t batch = vals[0]->ndims ? vals[0]->dims[0] : -1;
    for (size_t i = 0; i < nv; i++)
        if (vals[i]->ndims < 1 + (i >= sp->n_state) || vals[i]->dims[0] != batch)
            return eval_body_decline(r, "Scan: inputs without a common batch axis");
    if (batch < 1 || !scan8_full_lengths(lens, vals[sp->n_state], batch))
        return eval_body_decline(r, "Scan: an empty batch or padded sequences (sequence_lens)");
    const Tensor **one = arena_array(r->arena, nv, sizeof *one);
    Tensor **got = arena_array(r->arena, no * (size_t)batch, sizeof *got);
    if (!one || !got)
        return EVAL_OOM;
    for (int64_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < nv; i++)
            if (!(one[i] = scan_slice(r->arena, vals[i], 0, b)))
                return EVAL_OOM;
        ScanSpec each = *sp; /* scan_length normalises the axes in place */
        int rc = scan_core(r, body, &each, one, one + sp->n_state, got + (size_t)b * no);
        if (rc)
            return rc;
    }
    Tensor **col = arena_array(r->arena, (size_t)batch, sizeof *col);
    for (size_t q = 0; col && q < no; q++) {
        for (int64_t b = 0; b < batch; b++)
            col[b] = got[(size_t)b * no + q];
        if (!(outs[q] = scan_stack(r->arena, col, (size_t)batch, 0, false)))
            return eval_body_decline(r, "Scan: batch entries whose results differ in shape");
    }
    return col ? EVAL_OK : EVAL_OOM;
}

int eval_run_scan(EvalBody *r, const Op *op, const Tensor *const *ins,
                  Tensor **outs)
{
    const Graph *body = eval_body_graph(op, "body");
    int64_t opset = model_domain_opset(r->model, "");
    bool v8 = opset < 9;
    size_t skip = v8 ? 1 : 0, nv = op->n_inputs > skip ? op->n_inputs - skip : 0;
    ScanSpec sp;
    memset(&sp, 0, sizeof sp);
    if (!body || scan_spec(op, body, nv, &sp, v8))
        return eval_body_decline(r, "Scan: no body, or inputs, outputs and attributes that do "
                                    "not fit it");
    for (size_t i = 0; i < nv; i++)
        if (!scan_in_memory(ins[skip + i]))
            return eval_body_decline(r, "Scan: an input that is absent or not a numeric tensor");
    if (v8)
        return scan8(r, body, &sp, ins + 1, ins[0], outs);
    return scan_core(r, body, &sp, ins, ins + sp.n_state, outs);
}
