/* match.h - what the pattern fusions share (fuse-pad, fuse-conv-scale,
 * fuse-matmul-add, fuse-layernorm, fuse-rmsnorm, fuse-gelu): reading a chain of operations
 * value by value, constants that must equal a number, and removing the
 * operations a fused node replaces. match.c. */
#ifndef PPQ_MATCH_H
#define PPQ_MATCH_H

#include <stdbool.h>

#include "../core/ir/graph.h"

/* The one reader of v when it is a standard `type` operation of v's graph and
 * v has no other use and is no graph output (an intermediate a fusion may
 * absorb), else NULL. */
Op *match_next(const Var *v, const char *type);
/* v's producer when it is a standard `type` operation of g, else NULL. */
Op *match_producer(const Var *v, const char *type, const Graph *g);
/* The value of a one-element numeric parameter of rank 0 or 1 (seen through
 * Identity): a constant of higher rank could raise the rank of what it is
 * combined with, which the fused node would not. */
bool match_scalar(const Var *v, double *out);
/* Is v a one-element parameter equal to want within a few rounding steps of
 * its type (exporters write constants such as sqrt(2) in float32 or the
 * model's float16)? */
bool match_near(const Var *v, double want);
/* Is op's string attribute `name` equal to want (dflt when absent)? */
bool match_attr_is(const Op *op, const char *name, const char *want, bool dflt);
/* How many trailing axes a ReduceMean keeping dims reduces (axes from the
 * attribute or, from opset 18, the constant input; negative axes as they
 * are, positive ones when the input's rank is known): 0 when not trailing
 * axes or not known. No axes: all of them (rank needed). */
enum { MATCH_MAX_AXES = 8 };
size_t match_trailing_axes(const Op *r, int rank);
/* The single output of op, or NULL. */
Var *match_out(const Op *op);

/* The operations of a matched pattern, in the order they were found. */
enum { CHAIN_MAX = 16 };
typedef struct Chain {
    Op *ops[CHAIN_MAX];
    size_t n;
} Chain;
/* Appends op (a NULL op fails, so a failed match step ends the pattern). */
bool chain_add(Chain *c, Op *op);
/* Removes the chain's operations once a fused node reads their inputs and
 * writes the last one's outputs (graph_replace_op): each goes when nothing
 * reads its outputs any more. -1 if one is still read. */
int chain_remove(Chain *c);

#endif
