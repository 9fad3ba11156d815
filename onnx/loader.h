/* loader.h - the state the loader's files share while reading one model
 * (load.c, load_tensor.c, external.c), and their error helpers. */
#ifndef PPQ_LOADER_H
#define PPQ_LOADER_H

#include "../core/ir/graph.h"
#include "wire.h"

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

/* Field numbers of onnx.proto's ModelProto, GraphProto, NodeProto,
 * AttributeProto and FunctionProto that the loader reads. */
enum { M_IR_VERSION = 1, M_GRAPH = 7, M_OPSET = 8, M_TRAINING_INFO = 20, M_FUNCTIONS = 25 };
enum { F_NAME = 1, F_NODE = 7, F_OPSET = 9, F_DOMAIN = 10 };
enum {
    G_NODE = 1, G_NAME = 2, G_INITIALIZER = 5, G_INPUT = 11, G_OUTPUT = 12, G_VALUE_INFO = 13,
    G_SPARSE_INITIALIZER = 15,
};
enum { N_INPUT = 1, N_OUTPUT = 2, N_NAME = 3, N_OP_TYPE = 4, N_ATTRIBUTE = 5, N_DOMAIN = 7 };
enum {
    A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_FLOATS = 7, A_INTS = 8,
    A_STRINGS = 9, A_TENSORS = 10, A_GRAPHS = 11, A_TYPE = 20,
};

/* load.c, for load_check.c: the same reading and checks, one piece at a time. */
/* ModelProto's fields into L->m (ir_version, opset_import, the graph's bytes),
 * with the checks onnx_load makes on them. */
int load_model_head(Loader *L, Bytes bytes);
/* One ModelProto.functions entry into L->m->functions (load_function.c). */
int load_function(Loader *L, Bytes wire);
/* Readers that flag a field of the wrong wire type (WireReader.bad). */
WireReader load_graph_reader(Bytes wire);
WireReader load_node_reader(Bytes wire);
/* Appends the AttributeProto wire to op's attributes. */
int load_attr(Loader *L, Op *op, Bytes wire);
/* The check made after each attribute is read (Cast's `to`). */
int load_check_attr(Loader *L, const Op *op);
/* The checks made on a loaded node (required subgraphs, Pad's pads) other
 * than the types of Conv's inputs. */
int load_check_node(Loader *L, const Op *op);
/* A LayerNormalization of n_inputs inputs whose scale is empty or missing
 * (has_scale false): refused once its inputs are linked. */
bool load_layernorm_without_scale(const Op *op, size_t n_inputs, bool has_scale);

int loader_error(Loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int loader_oom(Loader *L);
/* An arena copy of a protobuf string; NULL (with an error) if it holds a NUL. */
const char *loader_str(Loader *L, Bytes b);
/* The same for a string the model repeats (a domain, an attribute name):
 * one copy shared by all (model_intern). */
const char *loader_intern(Loader *L, Bytes b);
#endif
