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

/* What the command line tells the passes; 0 leaves a pass its default. */
typedef struct PassOptions {
    size_t fold_limit;        /* largest result fold computes, in bytes */
    size_t fold_growth;       /* how many times its inputs' size an Expand/Tile/
                               * ConstantOfShape result may be and still fold */
    size_t fold_growth_limit; /* such a result folds anyway up to this many bytes */
} PassOptions;

/* What a pass is handed: the graph it rewrites (the driver hands it every
 * subgraph first, then the graph holding them), the options, and where an
 * error goes. The model's facts and change log are the graph's model's. */
typedef struct PassCtx {
    Graph *g;
    const PassOptions *opt;
    Diag *d;
} PassCtx;

typedef int (*PassFn)(PassCtx *pc);

int pass_de_inplace(PassCtx *pc);
int pass_constant(PassCtx *pc);
int pass_split_params(PassCtx *pc);
int pass_fold(PassCtx *pc);
int pass_eliminate_noops(PassCtx *pc);
int pass_cse(PassCtx *pc);
int pass_reshape_target(PassCtx *pc);
int pass_dedup_initializers(PassCtx *pc);
int pass_fuse_bias(PassCtx *pc);
int pass_fuse_bn(PassCtx *pc);
int pass_fuse_bn_forward(PassCtx *pc);
int pass_bn_to_conv(PassCtx *pc);
int pass_slice(PassCtx *pc);
int pass_clip(PassCtx *pc);
int pass_pad(PassCtx *pc);
int pass_resize(PassCtx *pc);
int pass_fuse_pad(PassCtx *pc);
int pass_fuse_conv_scale(PassCtx *pc);
int pass_fuse_matmul_add(PassCtx *pc);
int pass_fuse_matmul_add_nd(PassCtx *pc);
int pass_fuse_layernorm(PassCtx *pc);
int pass_fuse_gelu(PassCtx *pc);
int pass_identity(PassCtx *pc);
int pass_isolated(PassCtx *pc);
int pass_infer_shapes(PassCtx *pc);

#endif
