/* load_tensor.h - TensorProto and SparseTensorProto -> Tensor, pointing into
 * the input (no copy of raw_data). */
#ifndef PPQ_LOAD_TENSOR_H
#define PPQ_LOAD_TENSOR_H

#include "loader.h"

int load_tensor(Loader *L, Bytes wire, Tensor **out);
/* A SparseTensorProto as a tensor without element bytes (Tensor.sparse). */
int load_sparse_tensor(Loader *L, Bytes wire, Tensor **out);
/* Could the TensorProto keep its data in another file? True also when the
 * bytes are malformed, so that a caller that avoids external data stays
 * clear of them. */
bool load_tensor_external(Bytes wire);
/* The name load_tensor gives the tensor (the last name field), as bytes. */
Bytes load_tensor_name(Bytes wire);
#endif
