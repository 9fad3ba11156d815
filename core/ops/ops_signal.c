/* ops_signal.c - rules for the signal-processing operators of opset 17:
 * DFT (and DFT-20's axis input), STFT and MelWeightMatrix. A size computed from run-time scalars is
 * taken from their known contents, else a fresh symbol. */
#include "ops.h"

enum { SIGNAL_MAX_RANK = 64 };

/* Scalar input i's contents as a dim, or NULL when not known. */
static Dim signal_scalar(const InferCtx *c, size_t i)
{
    int64_t v;
    return infer_has_in(c, i) && infer_in_ints(c, i, &v, 1) == 1 ? dim_const(c->dt, v) : NULL;
}

/* floor(n / 2) + 1, the bins a one-sided transform of n points keeps. */
static Dim signal_half_bins(InferCtx *c, Dim n)
{
    return n && dim_is_const(n) ? dim_const(c->dt, dim_value(n) / 2 + 1) : dim_fresh(c->dt);
}

/* DFT: [batch, n1, ..., nk, 1|2] -> the same with the transformed axis
 * dft_length long (halved plus one when onesided) and a last axis of 2. An
 * inverse one-sided transform reads half a spectrum and gives a real signal
 * (last axis 1) of dft_length points, by default 2 * (bins - 1). DFT-17
 * takes the axis as an attribute (default 1), DFT-20 as an input (default
 * -2, the axis before the last). */
static int signal_dft(InferCtx *c, int axis_attr)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 2 || x->rank > SIGNAL_MAX_RANK)
        return infer_set_dtype(c, 0, x->dtype);
    int64_t a = -2;
    if (axis_attr)
        a = op_attr_int(c->op, "axis", 1);
    else if (infer_has_in(c, 2) && infer_in_ints(c, 2, &a, 1) != 1)
        return infer_set(c, 0, x->dtype, x->rank, NULL);
    int axis = infer_axis(a, x->rank);
    if (axis < 0 || axis == x->rank - 1)
        return infer_bad(c, "axis out of range");
    Dim d[SIGNAL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dims[i];
    bool given = infer_has_in(c, 1);
    Dim n = !given ? x->dims[axis] : signal_scalar(c, 1);
    bool onesided = op_attr_int(c->op, "onesided", 0) != 0;
    bool inverse = op_attr_int(c->op, "inverse", 0) != 0;
    if (onesided && inverse) {
        if (!given)
            n = n && dim_is_const(n) ? dim_const(c->dt, 2 * (dim_value(n) - 1)) : NULL;
        d[axis] = n ? n : dim_fresh(c->dt);
        d[x->rank - 1] = dim_const(c->dt, 1);
        return infer_set(c, 0, x->dtype, x->rank, d);
    }
    d[axis] = onesided ? signal_half_bins(c, n) : n ? n : dim_fresh(c->dt);
    d[x->rank - 1] = dim_const(c->dt, 2);
    return infer_set(c, 0, x->dtype, x->rank, d);
}

static int signal_dft17(InferCtx *c) { return signal_dft(c, 1); }
static int signal_dft20(InferCtx *c) { return signal_dft(c, 0); }

/* The frames STFT cuts a signal of len into: (len - frame) / step + 1. */
static Dim signal_frames(InferCtx *c, Dim len, Dim frame, Dim step)
{
    if (!len || !frame || !step || !dim_is_const(len) || !dim_is_const(frame) ||
        !dim_is_const(step) || dim_value(step) <= 0 || dim_value(len) < dim_value(frame))
        return dim_fresh(c->dt);
    return dim_const(c->dt, (dim_value(len) - dim_value(frame)) / dim_value(step) + 1);
}

/* STFT-17: signal [batch, length, 1|2], frame_step, window [frame_length]
 * and/or frame_length -> [batch, frames, bins, 2]. */
static int signal_stft(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0), *w = infer_in(c, 2);
    if (x->rank >= 0 && x->rank != 3)
        return infer_bad(c, "signal must have rank 3");
    Dim frame = signal_scalar(c, 3);
    if (!frame && !infer_has_in(c, 3) && w->rank == 1)
        frame = w->dims[0];
    Dim len = x->rank == 3 ? x->dims[1] : NULL;
    bool onesided = op_attr_int(c->op, "onesided", 1) != 0;
    Dim d[4] = {x->rank == 3 ? x->dims[0] : dim_fresh(c->dt),
                signal_frames(c, len, frame, signal_scalar(c, 1)),
                onesided ? signal_half_bins(c, frame) : frame ? frame : dim_fresh(c->dt),
                dim_const(c->dt, 2)};
    return infer_set(c, 0, x->dtype, 4, d);
}

/* MelWeightMatrix-17: [dft_length / 2 + 1, num_mel_bins]. */
static int signal_mel(InferCtx *c)
{
    Dim bins = signal_scalar(c, 0);
    Dim d[2] = {signal_half_bins(c, signal_scalar(c, 1)), bins ? bins : dim_fresh(c->dt)};
    return infer_set(c, 0, (int32_t)op_attr_int(c->op, "output_datatype", DT_FLOAT), 2, d);
}

static const OpSchema ops_signal[] = {
    {"", "DFT", 17, 1, 2, 1, 1, signal_dft17},
    {"", "DFT", 20, 1, 3, 1, 1, signal_dft20},
    {"", "STFT", 17, 2, 4, 1, 1, signal_stft},
    {"", "MelWeightMatrix", 17, 5, 5, 1, 1, signal_mel},
};

const OpTable ops_signal_table = {ops_signal, sizeof ops_signal / sizeof ops_signal[0]};
