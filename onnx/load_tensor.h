/* load_tensor.h - TensorProto and SparseTensorProto -> Tensor, pointing into
 * the input (no copy of raw_data). */
#ifndef PPQ_LOAD_TENSOR_H
#define PPQ_LOAD_TENSOR_H

#include "loader.h"

int load_tensor(Loader *L, Bytes wire, Tensor **out);
/* A SparseTensorProto as a tensor without element bytes (Tensor.sparse). */
int load_sparse_tensor(Loader *L, Bytes wire, Tensor **out);
#endif
