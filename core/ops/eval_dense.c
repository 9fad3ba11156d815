/* eval_dense.c - blocked double loops behind MatMul, Gemm and Conv
 * (eval_dense.h). Blocks split the output, never the sum: every element's
 * terms are added in the order of the plain triple loop, so the fold's
 * results are the same bits as before, and blocks only decide which
 * elements share the cache. */
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "eval_dense.h"

/* Output columns per block: DENSE_ROWS rows of them stay in the L1 cache
 * next to one row of b. */
enum { DENSE_COLS = 512, DENSE_ROWS = 4, CONV_CHANNELS = 8, CONV_TILE = 2048 };

double *dense_load(int32_t dt, const uint8_t *b, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return NULL;
    size_t size = dtype_size(dt);
    if (dt == DT_FLOAT) {
        for (size_t e = 0; e < n; e++) {
            float f;
            memcpy(&f, b + e * size, sizeof f);
            d[e] = f;
        }
        return d;
    }
    for (size_t e = 0; e < n; e++)
        d[e] = eval_load(dt, b + e * size).f;
    return d;
}

/* Rows i0..i0+rows of c, columns j0..j0+cols: each term a(i, k)*b(k, j)
 * for k ascending, the rows sharing b's row k while it is in the cache. */
static void gemm_block(int64_t i0, int64_t rows, int64_t j0, int64_t cols, int64_t k,
                       DenseMat a, DenseMat b, double *c, int64_t n)
{
    for (int64_t kk = 0; kk < k; kk++) {
        const double *brow = b.p + kk * b.rs + j0 * b.cs;
        for (int64_t i = i0; i < i0 + rows; i++) {
            double av = a.p[i * a.rs + kk * a.cs], *crow = c + i * n + j0;
            if (b.cs == 1)
                for (int64_t j = 0; j < cols; j++)
                    crow[j] += av * brow[j];
            else
                for (int64_t j = 0; j < cols; j++)
                    crow[j] += av * brow[j * b.cs];
        }
    }
}

void dense_gemm(int64_t m, int64_t n, int64_t k, DenseMat a, DenseMat b, double *c)
{
    for (int64_t j0 = 0; j0 < n; j0 += DENSE_COLS) {
        int64_t cols = n - j0 < DENSE_COLS ? n - j0 : DENSE_COLS;
        for (int64_t i0 = 0; i0 < m; i0 += DENSE_ROWS)
            gemm_block(i0, m - i0 < DENSE_ROWS ? m - i0 : DENSE_ROWS, j0, cols, k, a, b, c, n);
    }
}

/* The output positions o in [0, out) whose input position
 * o*stride - head + off lies in [0, in): [*lo, *hi). */
static void conv_span(int64_t out, int64_t in, int64_t stride, int64_t head, int64_t off,
                      int64_t *lo, int64_t *hi)
{
    int64_t shift = off - head; /* input position of output 0 */
    *lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
    *hi = in - shift <= 0 ? 0 : (in - shift - 1) / stride + 1;
    *hi = *hi < out ? *hi : out;
    *lo = *lo < *hi ? *lo : *hi;
}

/* Output rows r0..r1 of channels m0..m0+mb, kernel offset (ki, kj): the
 * terms of every input channel in order. */
static void conv_offset(const DenseConv *g, const double *x, const double *wt, double *y,
                        int64_t m0, int64_t mb, int64_t r0, int64_t r1, int64_t ki, int64_t kj)
{
    int64_t rlo, rhi, clo, chi;
    conv_span(g->oh, g->h, g->sh, g->ph, ki * g->dh, &rlo, &rhi);
    conv_span(g->ow, g->w, g->sw, g->pw, kj * g->dw, &clo, &chi);
    rlo = rlo > r0 ? rlo : r0;
    rhi = rhi < r1 ? rhi : r1;
    int64_t kat = ki * g->kw + kj;
    if (rlo >= rhi || clo >= chi)
        return;
    for (int64_t ci = 0; ci < g->cg; ci++) {
        const double *xp = x + ci * g->xcs;
        for (int64_t r = rlo; r < rhi; r++) {
            const double *xr = xp + (r * g->sh - g->ph + ki * g->dh) * g->w;
            int64_t at = kj * g->dw - g->pw; /* o*sw + at >= 0 from clo on */
            for (int64_t mm = m0; mm < m0 + mb; mm++) {
                double wv = wt[(mm * g->cg + ci) * g->wcs + kat], *yr = y + mm * g->ycs + r * g->ow;
                if (g->sw == 1)
                    for (int64_t o = clo; o < chi; o++)
                        yr[o] += wv * xr[o + at];
                else
                    for (int64_t o = clo; o < chi; o++)
                        yr[o] += wv * xr[o * g->sw + at];
            }
        }
    }
}

void dense_conv2d(const DenseConv *g, const double *x, const double *wt, double *y)
{
    if (g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && !g->ph && !g->pw &&
        g->oh == g->h && g->ow == g->w && g->ycs == g->oh * g->ow) {
        /* pointwise: a matrix product [mg, cg] x [cg, h*w] */
        dense_gemm(g->mg, g->oh * g->ow, g->cg, (DenseMat){wt, g->cg * g->wcs, g->wcs},
                   (DenseMat){x, g->xcs, 1}, y);
        return;
    }
    /* a tile of CONV_CHANNELS output channels by enough rows for about
     * CONV_TILE accumulators, which the input rows then visit */
    int64_t rows = CONV_TILE / (CONV_CHANNELS * (g->ow ? g->ow : 1));
    rows = rows < 1 ? 1 : rows;
    for (int64_t m0 = 0; m0 < g->mg; m0 += CONV_CHANNELS) {
        int64_t mb = g->mg - m0 < CONV_CHANNELS ? g->mg - m0 : CONV_CHANNELS;
        for (int64_t r0 = 0; r0 < g->oh; r0 += rows) {
            int64_t r1 = r0 + rows < g->oh ? r0 + rows : g->oh;
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++)
                    conv_offset(g, x, wt, y, m0, mb, r0, r1, ki, kj);
        }
    }
}
