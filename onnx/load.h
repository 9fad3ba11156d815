/* load.h - ONNX bytes -> BaseGraph.
 *
 * ModelProto, GraphProto, NodeProto, AttributeProto and TensorProto are read
 * at the wire level (wire.h): every IR object records the bytes it came from
 * and tensors point into the input. ValueInfoProto and OperatorSetIdProto are
 * decoded with protobuf-c (proto.h). The input bytes must stay alive as long
 * as the model. */
#ifndef PPQ_LOAD_H
#define PPQ_LOAD_H

#include "../core/ir/graph.h"
#include "wire.h"

/* dir: the model's folder, where external data files are looked up; NULL
 * when the model came from standard input (external data is then refused). */
int onnx_load(Bytes bytes, const char *dir, Model **out, Diag *d);

/* Could head be the first bytes of a ModelProto? False when they cannot be
 * (the loader would refuse the whole as malformed protobuf), so that a
 * stream is not read to its end only to be refused. */
bool onnx_head_ok(Bytes head);

#endif
