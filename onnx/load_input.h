/* load_input.h - a TensorProto file (the ONNX test data form, input_0.pb),
 * or a SequenceProto or OptionalProto one, as a core value, for
 * --check-inputs: the only reader of such files, as only onnx/ knows
 * protobuf. */
#ifndef PPQ_LOAD_INPUT_H
#define PPQ_LOAD_INPUT_H

#include "../core/ir/graph.h"

/* Reads path into a tensor whose dims, data and name live in a; the
 * elements are in memory (external data, strings and sub-byte types are
 * refused). PPQ_EINPUT naming the file when it cannot be read or is not a
 * TensorProto. */
int onnx_read_tensor_file(const char *path, Arena *a, Tensor **out, Diag *d);
/* Reads path as a value of kind (TYPE_* of graph.h, the graph's declaration
 * of the value it is for): a TensorProto, a SequenceProto of TensorProtos,
 * or an OptionalProto holding a TensorProto or such a SequenceProto, as the
 * interpreter's values (core/ops/eval_held.h), named as the file names them. */
int onnx_read_value_file(const char *path, int kind, Arena *a, Tensor **out, Diag *d);

#endif
