/* load.h - ONNX bytes -> BaseGraph.
 *
 * ModelProto, GraphProto, NodeProto, AttributeProto and TensorProto are read
 * at the wire level (wire.h): every IR object records the bytes it came from
 * and tensors point into the input. ValueInfoProto and OperatorSetIdProto are
 * decoded with protobuf-c (proto.h). The input bytes must stay alive as long
 * as the model. */
#ifndef PPQ_LOAD_H
#define PPQ_LOAD_H

#include "../core/graph.h"
#include "wire.h"

/* dir: the model's folder, where external data files are looked up; NULL
 * when the model came from standard input (external data is then refused). */
int onnx_load(Bytes bytes, const char *dir, Model **out, Diag *d);

/* Could head be the first bytes of a ModelProto? False when they cannot be
 * (the loader would refuse the whole as malformed protobuf), so that a
 * stream is not read to its end only to be refused. */
bool onnx_head_ok(Bytes head);

/* Shared by the loader's files. */
typedef struct External External;
typedef struct LinkScope LinkScope;
typedef struct Loader {
    Model *m;
    Diag *d;
    int depth; /* subgraph nesting, bounded against hostile recursion */
    const char *dir;
    External *ext; /* mapped external data files, owned by the model */
    LinkScope *scope; /* the names visible to the graph being read (load.c) */
} Loader;

int loader_error(Loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int loader_oom(Loader *L);
/* An arena copy of a protobuf string; NULL (with an error) if it holds a NUL. */
const char *loader_str(Loader *L, Bytes b);
int load_tensor(Loader *L, Bytes wire, Tensor **out);
/* A SparseTensorProto as a tensor without element bytes (Tensor.sparse). */
int load_sparse_tensor(Loader *L, Bytes wire, Tensor **out);
/* Maps the external bytes of t (declared by its external_data entries). */
int load_external(Loader *L, Tensor *t, Bytes wire);

#endif
