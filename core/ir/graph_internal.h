/* graph_internal.h - what graph.c shares with the other core files that
 * edit the IR's lists directly (graph_inline.c; the lists grow with
 * LIST_GROW, arena.h). Passes edit through graph.h:
 * these two bypass the checks its functions make. (No #include of graph.h:
 * graph.c includes this header, and the two would form a module cycle.) */
#ifndef PPQ_GRAPH_INTERNAL_H
#define PPQ_GRAPH_INTERNAL_H

#include <stddef.h>

struct Graph;
struct Op;
struct Var;

/* op is to be encoded from the IR (its names or attributes changed); counts
 * as an edit for model_op_edits. */
void op_mark_changed(struct Op *op);

/* Moves the definition of v to `to`'s name: `to` (which must have no
 * producer, not be an input or parameter) takes v's producer slot and all of
 * v's uses, and v is dropped. -1 (nothing changed) when `to` does not qualify
 * or v is not produced by a node. */
int var_take_over(struct Var *to, struct Var *v);

/* Removes a variable nothing produces or uses, that is no input, output or
 * parameter (-1 otherwise, nothing changed), with its value_info entry. */
int graph_drop_var(struct Var *v);

/* graph_compact on g and every graph nested in it. */
void graph_compact_nested(struct Graph *g);

/* For graph_walk_post over a subgraph going away: it no longer reads outer
 * values, as inputs of its nodes or as its outputs (ctx unused). */
int detach_graph(struct Graph *g, void *ctx);

/* v no longer holds its name (dropped or renamed; name is the one it
 * held): the latest earlier write of that name still present becomes its
 * only write. */
void var_unshadow_earlier(struct Var *v, const char *name);

/* v, a parameter, takes t's element type and shape as its declared type. */
void param_take_type(struct Var *v, const struct Tensor *t);

/* Forgets the names an If's inlined branches gave out (graph_inline_subgraph)
 * once the model is compacted. */
void inline_names_drop(struct Model *m);

#endif
