/* encode.h - BaseGraph -> segments of ONNX bytes (see encode.c). */
#ifndef PPQ_ENCODE_H
#define PPQ_ENCODE_H

#include "../core/graph.h"
#include "wire.h"

/* Where initializers move when --external-data is given. */
typedef struct EncodeOptions {
    Out *data;            /* the external data file's contents; NULL: keep inline */
    const char *location; /* its name, relative to the model's folder */
    size_t threshold;     /* initializers of at least this many bytes move */
} EncodeOptions;

/* Appends the encoded model to o (o->opt may be NULL); -1 when out of memory. */
int onnx_encode(const Model *m, Out *o);
/* Does initializer t go to the external data file? */
bool tensor_moves_out(const Tensor *t, const EncodeOptions *opt);
/* Encodes t under name; only initializers move to the external data file. */
void encode_tensor(Out *o, const Tensor *t, const char *name, bool initializer);

#endif
