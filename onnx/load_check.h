/* load_check.h - reading a model only to write it back unchanged.
 *
 * When no pass runs, the output is the input byte for byte, and building
 * the whole graph would only serve to refuse bad input. */
#ifndef PPQ_LOAD_CHECK_H
#define PPQ_LOAD_CHECK_H

#include "../core/ir/graph.h"
#include "wire.h"

/* Makes onnx_load's checks on bytes without building the graph. When every
 * check passes on a model of the form it covers (see load_check.c), *out is
 * a model holding only its model-level fields and its main graph's bytes,
 * with no operations or values: enough for onnx_write to copy it. Otherwise
 * *out is NULL and the caller calls onnx_load, which gives the verdict.
 * Non-zero only when out of memory. */
int onnx_load_for_copy(Bytes bytes, const char *dir, Model **out, Diag *d);

#endif
