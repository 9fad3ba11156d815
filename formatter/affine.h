/* affine.h - absorbing a per-channel affine map y = k_c * x + s_c into the
 * Conv, ConvTranspose or Gemm next to it: the four fusions that do it
 * (fuse-bn and fuse-conv-scale after the linear operation, fuse-bias with
 * k = 1, fuse-bn-forward before a Conv) find the map; this module reads the
 * linear operation (Linear), decides whether the folded weight and bias fit
 * their type, and installs them, the weight computed only while it is
 * written (affine.c). */
#ifndef PPQ_AFFINE_H
#define PPQ_AFFINE_H

#include <stdbool.h>
#include <string.h>

#include "../core/ir/graph.h"

/* Does t broadcast against a rank-`rank` output as one value per channel
 * (axis 1) or one value for all? */
bool per_channel_shape(const Tensor *t, int64_t channels, size_t rank);
/* Element c of a per-channel tensor (element 0 if it holds one value). */
double channel_value(const Tensor *t, int64_t c);

typedef enum { LIN_CONV = 1, LIN_CONV_TRANSPOSE, LIN_GEMM } LinearKind;
/* A Conv, ConvTranspose or Gemm with a constant weight: what folding needs. */
typedef struct Linear {
    Op *op;
    LinearKind kind;
    const Tensor *w;
    const Tensor *bias; /* Conv bias or Gemm C; NULL when absent or unread (beta 0) */
    int64_t channels;   /* output channels */
    size_t rank;        /* output rank */
    int64_t group;
    bool trans_b;
    float beta;
} Linear;
bool linear_producer(const Op *op, Linear *out);
int64_t weight_channel(const Linear *l, size_t i);
double linear_bias(const Linear *l, int64_t c);
int linear_set_bias(const Linear *l, Tensor *bias);
/* Folds y = k_c * x + s_c per output channel c (s NULL: no shift) into l's
 * weight (computed lazily while written, fuse_bn.c) and bias; without a shift
 * an absent bias stays absent. */
int linear_fold(const Linear *l, const double *k, const double *s, Arena *a);
/* Scales l's (a Conv's) weight by k per input channel, the channel of the
 * Conv's input each element multiplies (fuse-bn-forward); computed lazily
 * as linear_fold's. */
int conv_scale_inputs(const Linear *l, const double *k, Arena *a);
/* The input channel that Conv weight element i multiplies. */
int64_t conv_input_channel(const Linear *l, size_t i);
/* The bytes of weight elements [first, first+count): read from the input
 * file into buf with pread when w is mapped (touching the mapping would
 * fault its pages in once here and again when the folded weight is written),
 * computed into buf when w is itself a fold's lazy result (tensor_get_f64
 * would run the fill, a pread, per element), else w's own bytes. buf holds
 * count elements. */
const uint8_t *weight_block(const Model *m, const Tensor *w, size_t first, size_t count,
                            uint8_t *buf);
/* Reads a weight element by element through weight_block, a block at a time. */
typedef struct WeightReader {
    const Model *m;
    const Tensor *w;
    Tensor view; /* the block's elements, for tensor_get_f64 */
    size_t first, count; /* the block held */
    const uint8_t *p;    /* its bytes */
    uint8_t *buf;
    size_t block;
    bool f32;
} WeightReader;
/* -1 when out of memory. */
int weight_reader_open(WeightReader *r, const Model *m, const Tensor *w);
/* Makes the block holding element i the one held. */
void weight_reader_fill(WeightReader *r, size_t i);
void weight_reader_close(WeightReader *r);
/* Element i of the weight; cheapest with i increasing. */
static inline double weight_reader_get(WeightReader *r, size_t i)
{
    if (i - r->first >= r->count)
        weight_reader_fill(r, i);
    if (!r->f32)
        return tensor_get_f64(&r->view, i - r->first);
    float x;
    memcpy(&x, r->p + 4 * (i - r->first), 4); /* raw_data need not be aligned */
    return x;
}
/* Would linear_fold(l, k, s) fit the weight's type? 0: yes; 1: no, with a
 * warning on `label` naming the first channel whose folded weight or bias
 * would overflow; -1: out of memory. */
int linear_fold_fits(const Linear *l, const double *k, const double *s, const char *label,
                     Model *m, Arena *a);

#endif
