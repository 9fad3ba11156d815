/* eval_held.h - sequence and optional values in the reference interpreter.
 *
 * A sequence of tensors, or an optional (empty, or holding a tensor or a
 * sequence), travels as a Tensor whose dtype is a reserved marker
 * (EVAL_DT_SEQUENCE, EVAL_DT_OPTIONAL) and whose data points to an
 * EvalHeld. Why a marker rather than a value type of its own: the
 * interpreter's scopes, If/Loop's carried values and branch outputs, the
 * kernel context and --check all pass `const Tensor *`; the marker lets
 * these values go through all of them unchanged, while every tensor kernel
 * refuses them by their dtype (eval_dtype_ok is false for the markers, so
 * eval_in gives NULL) and the interpreter stops a tensor kernel from ever
 * seeing one (eval_run.c). The fold pass never meets them: constants are
 * tensors, and formatter/fold.c excludes the sequence and optional ops. */
#ifndef PPQ_EVAL_HELD_H
#define PPQ_EVAL_HELD_H

#include "../ir/graph.h"

/* Negative: no TensorProto data type has these numbers. */
enum { EVAL_DT_SEQUENCE = -1001, EVAL_DT_OPTIONAL = -1002 };

typedef struct EvalHeld {
    int32_t elem_type; /* the tensors' element type; 0 when unknown (an empty value) */
    size_t n;          /* a sequence's length; an optional's 0 (empty) or 1 */
    const Tensor **items; /* n values: tensors (an optional's may be a sequence) */
} EvalHeld;

/* t's EvalHeld when t is a sequence or an optional; NULL for a tensor. */
const EvalHeld *eval_held(const Tensor *t);
/* A new sequence or optional (kind: a marker) of n items, all NULL until
 * the caller sets them; NULL when out of memory. */
Tensor *eval_held_new(Arena *a, int32_t kind, int32_t elem_type, size_t n);
/* A copy of a value (tensor, sequence or optional) owning all its bytes in
 * a; NULL when a tensor's bytes are not in memory (strings, a lazy tensor,
 * a sub-byte type) or out of memory. */
Tensor *eval_value_copy(Arena *a, const Tensor *t);
/* "tensor", "sequence" or "optional". */
const char *eval_value_kind(const Tensor *t);
/* Does the kernel of op type `type` take sequence or optional inputs? */
bool eval_takes_held(const char *type);

#endif
