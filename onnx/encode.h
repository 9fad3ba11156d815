/* encode.h - BaseGraph -> segments of ONNX bytes (see encode.c). */
#ifndef PPQ_ENCODE_H
#define PPQ_ENCODE_H

#include "../core/ir/graph.h"
#include "wire.h"

/* Where initializers move when --external-data is given. */
typedef struct EncodeOptions {
    Out *data;            /* the external data file's contents; NULL: keep inline */
    const char *location; /* its name, relative to the model's folder */
    size_t threshold;     /* initializers of at least this many bytes move */
    size_t align;         /* each tensor's offset in the data file: a power of two,
                           * at most EXTERNAL_ALIGN_MAX */
} EncodeOptions;

/* 64 bytes is what readers need to use a mapped tensor in place (onnxruntime
 * maps external data); --page-align asks for 4 KiB, the page size, so that
 * each tensor can be mapped on its own. */
enum { EXTERNAL_ALIGN = 64, EXTERNAL_ALIGN_PAGE = 4096, EXTERNAL_ALIGN_MAX = 4096 };

/* Appends the encoded model to o (o->opt may be NULL); -1 when out of memory. */
int onnx_encode(const Model *m, Out *o);
/* Does initializer t go to the external data file? */
bool tensor_moves_out(const Tensor *t, const EncodeOptions *opt);
/* Encodes t under name; only initializers move to the external data file. */
void encode_tensor(Out *o, const Tensor *t, const char *name, bool initializer);

#endif
