/* lazy.h - tensors computed in chunks while they are written, never held
 * whole in memory: fuse-bn's scaled weights and constant folding's large
 * results.
 *
 * A LazyFill computes elements [first, first+count) into buf. It may run on
 * the writer's thread, and more than once for the same range, so it keeps no
 * state between calls. When the result reads a source tensor in element
 * order (element i of the result needs source elements near i only), the
 * source's mapped input pages are let go a window at a time as chunks are
 * computed, so memory stays flat; a result that reads its source out of
 * order (a transposed weight) lets all of the source's pages go once its
 * last chunk is computed, so at most one such source is mapped at a time. */
#ifndef PPQ_LAZY_H
#define PPQ_LAZY_H

#include "graph.h"

typedef void (*LazyFill)(const void *ctx, size_t first, size_t count, uint8_t *buf);

/* A tensor of dtype and dims whose elements fill computes from ctx. Its
 * pages in model m's mappings of source (may be NULL) are let go behind
 * the chunks when source is read in_order, else after the last chunk. */
Tensor *lazy_tensor_new(Arena *a, int32_t dtype, size_t ndims, const int64_t *dims,
                        LazyFill fill, const void *ctx, const Tensor *source, bool in_order,
                        const Model *m);
/* Bytes [off, off+n) of t's element bytes into buf, whether t holds them or
 * computes them (off and n multiples of the element size). */
void lazy_read(const Tensor *t, size_t off, size_t n, uint8_t *buf);

#endif
