/* proto.h - the parts of onnx.proto decoded and encoded with protobuf-c.
 *
 * Small, nested messages that passes read but never edit in place (value
 * types and shapes, opset imports) go through the generated protobuf-c code;
 * the large, edited messages go through wire.h. */
#ifndef PPQ_PROTO_H
#define PPQ_PROTO_H

#include "../core/ir/graph.h"
#include "wire.h"

/* Decodes a ValueInfoProto: its name (arena copy) and tensor type, if any. */
int proto_value_info(Arena *a, Bytes wire, const char **name, TypeInfo *type);
/* When a ValueInfoProto's type is a sequence or optional of tensors, its
 * kind (TYPE_SEQUENCE, ...) and the tensors' type into inner; else
 * TYPE_TENSOR (also for a malformed one, which proto_value_info reports). */
int proto_value_info_held(Arena *a, Bytes wire, TypeInfo *inner);
/* Decodes an OperatorSetIdProto. */
int proto_opset(Arena *a, Bytes wire, Opset *out);
/* Encodes a ValueInfoProto for v (name, tensor type and shape) as field num. */
void proto_write_value_info(Out *o, uint32_t num, const Var *v);
/* Encodes a TypeProto for a tensor of type t as field num. */
void proto_write_type(Out *o, uint32_t num, const TypeInfo *t);
/* Encodes an OperatorSetIdProto as field num of o. */
void proto_write_opset(Out *o, uint32_t num, const Opset *op);

#endif
