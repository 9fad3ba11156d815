/* decl.h - declared tensor types for shape inference (core/infer.h).
 *
 * Decodes a graph input/output or value_info entry's ValueInfoProto into an
 * InferDecl that keeps the dim_param names (`batch`, `seq`), which the IR's
 * TypeInfo drops. Pass onnx_infer_decl as InferOptions.decl. */
#ifndef PPQ_DECL_H
#define PPQ_DECL_H

#include "../core/infer.h"

/* ctx is unused. Returns 0, or -1 when wire is not a tensor ValueInfoProto. */
int onnx_infer_decl(void *ctx, Arena *a, Bytes wire, InferDecl *out);

#endif
