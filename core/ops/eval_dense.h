/* eval_dense.h - the dense inner loops of MatMul, Gemm and Conv on double
 * operands (eval_dense.c), ordered and blocked for the cache so that the
 * reference interpreter runs a ResNet-50 in seconds, while each result
 * element keeps the summation order of the plain loops: bias (or 0) first,
 * then the terms in ascending k. */
#ifndef PPQ_EVAL_DENSE_H
#define PPQ_EVAL_DENSE_H

#include <stddef.h>
#include <stdint.h>

/* A row-major matrix view: element (i, j) at p[i*rs + j*cs]. */
typedef struct DenseMat {
    const double *p;
    int64_t rs, cs;
} DenseMat;

/* c[i*n + j] += sum over k ascending of a(i, k) * b(k, j), for an m x n
 * result c that holds its starting values (0, or a bias). */
void dense_gemm(int64_t m, int64_t n, int64_t k, DenseMat a, DenseMat b, double *c);

/* One image's 2-D convolution of one group, Conv's semantics (eval_conv.c):
 * x [cg, h, w], weights wt [mg, cg, kh, kw], y [mg, oh, ow] holding the
 * bias. Terms are added kernel offset by kernel offset, input channel by
 * input channel within one, positions in padding skipped. A plane of a 3-D
 * convolution is one too: its channels then lie xcs (ycs) elements apart
 * rather than h*w (oh*ow), and each (output, input) channel pair's kernel
 * wcs rather than kh*kw. */
typedef struct DenseConv {
    int64_t cg, mg, h, w, oh, ow, kh, kw;
    int64_t sh, sw, dh, dw, ph, pw; /* strides, dilations, head pads */
    int64_t xcs, ycs, wcs;          /* channel strides of x, y and the weights */
} DenseConv;

void dense_conv2d(const DenseConv *g, const double *x, const double *wt, double *y);

/* n elements of dtype dt at b as doubles (malloc'd; NULL when out of memory). */
double *dense_load(int32_t dt, const uint8_t *b, size_t n);

#endif
