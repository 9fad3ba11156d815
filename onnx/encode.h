/* encode.h - BaseGraph -> segments of ONNX bytes (see encode.c). */
#ifndef PPQ_ENCODE_H
#define PPQ_ENCODE_H

#include "../core/graph.h"
#include "wire.h"

/* Appends the encoded model to o; -1 when out of memory. */
int onnx_encode(const Model *m, Out *o);
/* Does writing m need anything but a copy of its input? */
bool model_dirty(const Model *m);
void encode_tensor(Out *o, const Tensor *t, const char *name);

#endif
