/* passes.h - the pass functions the registry (pass.c) lists, one file each.
 *
 * A pass rewrites one graph; the driver (pass_run) calls it on every
 * subgraph and then on the graph holding them. docs/ARCHITECTURE.md, "How to
 * add a pass", walks through writing one. */
#ifndef PPQ_PASSES_H
#define PPQ_PASSES_H

#include "../core/ir/graph.h"

/* Why a pass that would add a parameter leaves a subgraph of an IR < 4
 * model alone (graph_takes_new_params). */
#define NO_NEW_PARAMS "IR version < 4 needs new initializers as inputs, impossible in a subgraph"

int pass_de_inplace(Graph *g, Diag *d);
int pass_constant(Graph *g, Diag *d);
int pass_split_params(Graph *g, Diag *d);
int pass_fold(Graph *g, Diag *d);
int pass_eliminate_noops(Graph *g, Diag *d);
int pass_cse(Graph *g, Diag *d);
int pass_reshape_target(Graph *g, Diag *d);
int pass_dedup_initializers(Graph *g, Diag *d);
int pass_fuse_bias(Graph *g, Diag *d);
int pass_fuse_bn(Graph *g, Diag *d);
int pass_fuse_bn_forward(Graph *g, Diag *d);
int pass_bn_to_conv(Graph *g, Diag *d);
int pass_slice(Graph *g, Diag *d);
int pass_clip(Graph *g, Diag *d);
int pass_pad(Graph *g, Diag *d);
int pass_resize(Graph *g, Diag *d);
int pass_fuse_pad(Graph *g, Diag *d);
int pass_fuse_conv_scale(Graph *g, Diag *d);
int pass_fuse_matmul_add(Graph *g, Diag *d);
int pass_fuse_matmul_add_nd(Graph *g, Diag *d);
int pass_fuse_layernorm(Graph *g, Diag *d);
int pass_fuse_rmsnorm(Graph *g, Diag *d);
int pass_fuse_gelu(Graph *g, Diag *d);
int pass_identity(Graph *g, Diag *d);
int pass_isolated(Graph *g, Diag *d);
int pass_infer_shapes(Graph *g, Diag *d);

#endif
