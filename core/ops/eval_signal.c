/* eval_signal.c - kernels for the signal-processing operators (eval.h):
 * DFT-17 (axis attribute) and DFT-20 (axis input), STFT-17, the windows
 * HannWindow, HammingWindow and BlackmanWindow, and MelWeightMatrix-17. For
 * the reference interpreter only (formatter/fold.c never folds these ops).
 *
 * A complex tensor is a real one with a last axis of 2 (real, imaginary); a
 * real signal has a last axis of 1. Transforms are direct sums in double
 * (no FFT: the interpreter checks models, the sizes are small), each twiddle
 * factor taken at the angle 2*pi*(j*k mod n)/n so that large products keep
 * their precision, and every result is rounded once to the output type. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "eval.h"

#define SIGNAL_PI 3.14159265358979323846

/* One transform's geometry: lines of `len` complex points (stride `inner`
 * lines apart) in, lines of `bins` points out, of an n-point transform. */
typedef struct DftLine {
    size_t len, n, bins;
    bool inverse, real_out; /* real_out: inverse of a one-sided spectrum */
} DftLine;

/* The n-point transform of re/im (len points, zero beyond, cut at n) at
 * bins k < l->bins; inverse: e^{+i...} and divided by n. */
static void dft_points(const DftLine *l, const double *re, const double *im, double *ore,
                       double *oim)
{
    size_t m = l->len < l->n ? l->len : l->n;
    double sign = l->inverse ? 1 : -1;
    for (size_t k = 0; k < l->bins; k++) {
        double sr = 0, si = 0;
        for (size_t j = 0; j < m; j++) {
            double a = 2 * SIGNAL_PI * (double)((j * k) % l->n) / (double)l->n;
            double cs = cos(a), sn = sign * sin(a);
            sr += re[j] * cs - im[j] * sn;
            si += re[j] * sn + im[j] * cs;
        }
        ore[k] = l->inverse ? sr / (double)l->n : sr;
        oim[k] = l->inverse ? si / (double)l->n : si;
    }
}

/* The whole spectrum of n points a one-sided one (len bins) stands for:
 * bin n-j is the conjugate of bin j; the imaginary parts of bin 0 and (n
 * even) bin n/2 are dropped, as a real inverse transform reads them. */
static void dft_hermitian(const double *re, const double *im, size_t len, size_t n, double *fre,
                          double *fim)
{
    for (size_t j = 0; j < n; j++) {
        bool mirror = j > n / 2;
        size_t s = mirror ? n - j : j;
        fre[j] = s < len ? re[s] : 0;
        fim[j] = s < len ? (mirror ? -im[s] : im[s]) : 0;
        if (j == 0 || 2 * j == n)
            fim[j] = 0;
    }
}

/* Transforms every line of x (dims[rank], last axis 1 or 2) along axis
 * into y (last axis 2, or 1 when l->real_out). */
static int dft_lines(EvalCtx *c, const Tensor *x, int axis, const DftLine *l, Tensor *y)
{
    double *v = eval_doubles(c, x);
    size_t w = l->len > l->n ? l->len : l->n;
    w = (w > l->bins ? w : l->bins) + 1; /* room in each of the four buffers */
    double *buf = v ? arena_alloc(c->arena, 4 * w * sizeof *buf) : NULL;
    if (!buf)
        return c->why ? EVAL_DECLINE : EVAL_OOM;
    double *re = buf, *im = re + w, *ore = im + w, *oim = ore + w;
    size_t comps = (size_t)x->dims[x->ndims - 1], ycomps = l->real_out ? 1 : 2;
    size_t outer = (size_t)dims_numel(x->dims, (size_t)axis);
    size_t inner = (size_t)dims_numel(x->dims + axis + 1, x->ndims - (size_t)axis - 2);
    size_t ysize = dtype_size(y->dtype);
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            for (size_t j = 0; j < l->len; j++) {
                size_t at = ((o * l->len + j) * inner + i) * comps;
                re[j] = v[at];
                im[j] = comps == 2 ? v[at + 1] : 0;
            }
            if (l->real_out) {
                dft_hermitian(re, im, l->len, l->n, ore, oim);
                DftLine full = {l->n, l->n, l->n, true, true};
                memcpy(re, ore, l->n * sizeof *re);
                memcpy(im, oim, l->n * sizeof *im);
                dft_points(&full, re, im, ore, oim);
            } else {
                dft_points(l, re, im, ore, oim);
            }
            for (size_t k = 0; k < l->bins; k++) {
                uint8_t *p = (uint8_t *)y->data + ((o * l->bins + k) * inner + i) * ycomps * ysize;
                eval_store(y->dtype, p, (EvalNum){.f = ore[k]});
                if (ycomps == 2)
                    eval_store(y->dtype, p + ysize, (EvalNum){.f = oim[k]});
            }
        }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* Scalar integer input i into *v; 0 when absent, -1 when unreadable. */
static int signal_scalar(EvalCtx *c, size_t i, int64_t *v)
{
    if (i >= c->n_in || !c->in[i])
        return 0;
    return eval_ints(c, i, v, 1) == 1 ? 1 : -1;
}

/* DFT-17: axis attribute (default 1). DFT-20: axis input (default -2). */
static int eval_dft(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int64_t a = c->opset >= 20 ? -2 : op_attr_int(c->op, "axis", 1), n = 0;
    int given = signal_scalar(c, 1, &n);
    int rank = x ? (int)x->ndims : 0;
    if (!x || !dtype_is_float(x->dtype) || rank < 2 || given < 0 ||
        (c->opset >= 20 && signal_scalar(c, 2, &a) < 0))
        return eval_decline(c, "an unsupported input, dft_length or axis");
    int axis = eval_axis(a, rank);
    int64_t comps = x->dims[rank - 1];
    if (axis < 0 || axis == rank - 1 || (comps != 1 && comps != 2) || (given && n < 1))
        return eval_decline(c, "an axis, last axis or dft_length out of range");
    DftLine l = {(size_t)x->dims[axis], 0, 0, op_attr_int(c->op, "inverse", 0) != 0, false};
    bool onesided = op_attr_int(c->op, "onesided", 0) != 0;
    l.real_out = l.inverse && onesided;
    l.n = given ? (size_t)n : l.real_out ? 2 * (l.len - 1) : l.len;
    l.bins = l.real_out ? l.n : onesided ? l.n / 2 + 1 : l.n;
    if (!l.n || !l.len)
        return eval_decline(c, "an empty transform");
    if (eval_over_macs(c, (double)tensor_numel(x) * (double)l.n))
        return eval_decline(c, "too many multiply-adds for a fold");
    int64_t ydims[EVAL_MAX_RANK];
    memcpy(ydims, x->dims, x->ndims * sizeof *ydims);
    ydims[axis] = (int64_t)l.bins;
    ydims[rank - 1] = l.real_out ? 1 : 2;
    Tensor *y = eval_out(c, 0, x->dtype, x->ndims, ydims);
    return y ? dft_lines(c, x, axis, &l, y) : eval_out_failed(c);
}

/* STFT-17: signal [batch, length, 1|2], frame_step, window [frame_length]
 * (optional: all ones), frame_length (optional: the window's) -> [batch,
 * frames, bins, 2]; each frame is multiplied by the window and transformed
 * with frame_length points. */
static int eval_stft(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0), *win = eval_in(c, 2);
    int64_t step = 0, fl = 0;
    int has_fl = signal_scalar(c, 3, &fl);
    if (!x || !dtype_is_float(x->dtype) || x->ndims != 3 || signal_scalar(c, 1, &step) != 1 ||
        has_fl < 0 || (c->n_in > 2 && c->in[2] && (!win || !dtype_is_float(win->dtype))))
        return eval_decline(c, "an unsupported signal, frame_step, window or frame_length");
    if (!has_fl)
        fl = win ? tensor_numel(win) : x->dims[1];
    int64_t comps = x->dims[2], len = x->dims[1];
    if (step < 1 || fl < 1 || fl > len || (comps != 1 && comps != 2) ||
        (win && (win->ndims != 1 || win->dims[0] != fl)))
        return eval_decline(c, "a frame_step, frame_length or window that does not fit");
    bool onesided = op_attr_int(c->op, "onesided", 1) != 0;
    int64_t frames = 1 + (len - fl) / step, bins = onesided ? fl / 2 + 1 : fl;
    int64_t ydims[4] = {x->dims[0], frames, bins, 2};
    double *v = eval_doubles(c, x), *w = win ? eval_doubles(c, win) : NULL;
    double *buf = v && (w || !win) ? arena_alloc(c->arena, 4 * (size_t)(fl + 1) * sizeof *buf) : NULL;
    if (!buf)
        return c->why ? EVAL_DECLINE : EVAL_OOM;
    Tensor *y = eval_out(c, 0, x->dtype, 4, ydims);
    if (!y)
        return eval_out_failed(c);
    DftLine l = {(size_t)fl, (size_t)fl, (size_t)bins, false, false};
    double *re = buf, *im = re + fl + 1, *ore = im + fl + 1, *oim = ore + fl + 1;
    size_t ysize = dtype_size(y->dtype);
    for (int64_t b = 0; b < x->dims[0]; b++)
        for (int64_t f = 0; f < frames; f++) {
            for (int64_t j = 0; j < fl; j++) {
                size_t at = (size_t)((b * len + f * step + j) * comps);
                double wj = w ? w[j] : 1;
                re[j] = v[at] * wj;
                im[j] = comps == 2 ? v[at + 1] * wj : 0;
            }
            dft_points(&l, re, im, ore, oim);
            for (int64_t k = 0; k < bins; k++) {
                uint8_t *p = (uint8_t *)y->data + (size_t)(((b * frames + f) * bins + k) * 2) * ysize;
                eval_store(y->dtype, p, (EvalNum){.f = ore[k]});
                eval_store(y->dtype, p + ysize, (EvalNum){.f = oim[k]});
            }
        }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

enum { WINDOW_HANN, WINDOW_HAMMING, WINDOW_BLACKMAN };

/* A window of `size` points (input 0) of output_datatype: periodic (the
 * default) divides by size, symmetric by size - 1. */
static int window_run(EvalCtx *c, int kind)
{
    int64_t size = 0;
    int32_t dt = (int32_t)op_attr_int(c->op, "output_datatype", DT_FLOAT);
    bool periodic = op_attr_int(c->op, "periodic", 1) != 0;
    if (signal_scalar(c, 0, &size) != 1 || !dtype_is_float(dt) || !eval_dtype_ok(dt) || size < 0)
        return eval_decline(c, "an unsupported size or output_datatype");
    int64_t den = periodic ? size : size - 1;
    if (size > 0 && den < 1)
        return eval_decline(c, "a symmetric window of one point divides by zero");
    Tensor *y = eval_out(c, 0, dt, 1, &size);
    if (!y)
        return eval_out_failed(c);
    for (int64_t k = 0; k < size; k++) {
        double a = 2 * SIGNAL_PI * (double)k / (double)den, v;
        if (kind == WINDOW_HANN)
            v = sin(a / 2) * sin(a / 2);
        else if (kind == WINDOW_HAMMING)
            v = 25.0 / 46.0 - 21.0 / 46.0 * cos(a);
        else
            v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
        eval_store(dt, (uint8_t *)y->data + (size_t)k * dtype_size(dt), (EvalNum){.f = v});
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static int eval_hann(EvalCtx *c) { return window_run(c, WINDOW_HANN); }
static int eval_hamming(EvalCtx *c) { return window_run(c, WINDOW_HAMMING); }
static int eval_blackman(EvalCtx *c) { return window_run(c, WINDOW_BLACKMAN); }

/* Scalar float input i into *v as a computation in its type would hold
 * it; false when absent or not a float scalar. */
static bool signal_float(EvalCtx *c, size_t i, double *v)
{
    const Tensor *t = eval_in(c, i);
    const double *d = t && dtype_is_float(t->dtype) && tensor_numel(t) == 1 ? eval_doubles(c, t)
                                                                              : NULL;
    if (d)
        *v = d[0];
    return d != NULL;
}

enum { MEL_MAX_BINS = 4096 }; /* mel bins the kernel handles */

/* The spectrogram bin of mel point k of num_mel_bins + 2 evenly spaced
 * between the edges; -1 when it lies too near a bin boundary to tell
 * (the mel scale's logarithms round differently in each implementation). */
static int64_t mel_bin(double lo_mel, double step, int64_t k, int64_t dft_length, int64_t rate)
{
    double hz = 700 * expm1(((double)k * step + lo_mel) / 2595 * log(10));
    double pos = (double)(dft_length + 1) * hz / (double)rate, fl = floor(pos);
    if (hz == 0) /* a lower edge of 0 Hz: exact in every implementation */
        return 0;
    if (pos - fl < 1e-6 * (pos > 1 ? pos : 1) || fl + 1 - pos < 1e-6 * (pos > 1 ? pos : 1))
        return -1;
    return (int64_t)fl;
}

/* The edge's mel value as the operator's reference computes it: the
 * edge/700 and its log1p in the edge's type. */
static double mel_of(int32_t dt, double hz)
{
    double l = eval_round_to(dt, log1p(eval_round_to(dt, hz / 700)));
    return eval_round_to(dt, 2595 * l) / log(10);
}

/* MelWeightMatrix-17: [dft_length / 2 + 1, num_mel_bins] triangular filters
 * between mel points evenly spaced from lower_edge_hertz to upper_edge_hertz. */
static int eval_mel_weight_matrix(EvalCtx *c)
{
    int64_t mels = 0, dft = 0, rate = 0;
    double lo, hi;
    int32_t dt = (int32_t)op_attr_int(c->op, "output_datatype", DT_FLOAT);
    if (signal_scalar(c, 0, &mels) != 1 || signal_scalar(c, 1, &dft) != 1 ||
        signal_scalar(c, 2, &rate) != 1 || !signal_float(c, 3, &lo) || !signal_float(c, 4, &hi) ||
        !dtype_is_float(dt) || !eval_dtype_ok(dt) || mels < 1 || dft < 1 || rate < 1 ||
        mels > MEL_MAX_BINS)
        return eval_decline(c, "unsupported inputs or output_datatype");
    int64_t spec = dft / 2 + 1, ydims[2] = {spec, mels}, bins[MEL_MAX_BINS + 2];
    double lo_mel = mel_of(c->in[3]->dtype, lo), hi_mel = mel_of(c->in[4]->dtype, hi);
    double step = (hi_mel - lo_mel) / (double)(mels + 2);
    for (int64_t k = 0; k < mels + 2; k++)
        if ((bins[k] = mel_bin(lo_mel, step, k, dft, rate)) < 0 || bins[k] >= spec)
            return eval_decline(c, "a mel point on or past a spectrogram bin boundary");
    Tensor *y = eval_out(c, 0, dt, 2, ydims);
    if (!y)
        return eval_out_failed(c);
    size_t size = dtype_size(dt);
    for (int64_t i = 0; i < mels; i++) {
        int64_t left = bins[i], mid = bins[i + 1], right = bins[i + 2];
        uint8_t *col = (uint8_t *)y->data + (size_t)i * size;
        for (int64_t j = left; j <= mid; j++)
            eval_store(dt, col + (size_t)(j * mels) * size,
                       (EvalNum){.f = mid == left ? 1 : (double)(j - left) / (double)(mid - left)});
        for (int64_t j = mid; j < right; j++)
            eval_store(dt, col + (size_t)(j * mels) * size,
                       (EvalNum){.f = (double)(right - j) / (double)(right - mid)});
    }
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "DFT", 17, eval_dft},
    {"", "DFT", 20, eval_dft},
    {"", "STFT", 17, eval_stft},
    {"", "HannWindow", 17, eval_hann},
    {"", "HammingWindow", 17, eval_hamming},
    {"", "BlackmanWindow", 17, eval_blackman},
    {"", "MelWeightMatrix", 17, eval_mel_weight_matrix},
};

const OpKernelTable eval_signal_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
