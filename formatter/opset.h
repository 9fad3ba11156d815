/* opset.h - raising a legacy model (opset 7..10) to opset 11.
 *
 * Clip-6, Pad-2, Slice-1 and Resize-10 keep their operands in attributes or
 * lack inputs their opset-11 forms take. Their input forms are valid only
 * under opset 11, so rewriting one means raising the model's default-domain
 * opset to 11, and then every node whose definition changed on the way must be
 * adapted too. The upgrade is all or nothing: every node is checked first, and
 * if one cannot be adapted nothing changes and a warning names it. Passes
 * slice, clip, pad and resize each start the upgrade when the model holds
 * their legacy operator; the first to do so converts the whole model. */
#ifndef PPQ_OPSET_H
#define PPQ_OPSET_H

#include "pass.h"

enum { OPSET_TARGET = 11, IR_FOR_OPSET_TARGET = 6 };

/* One operator's adaptation from version `from` (the model's opset) to 11. */
typedef struct Upgrade {
    const char *op;
    /* NULL when op can be adapted, else why not. */
    const char *(*check)(const Op *op, int64_t from);
    /* Rewrites op; -1 when out of memory. NULL: nothing to rewrite. */
    int (*apply)(Op *op, int64_t from);
} Upgrade;

/* The model's default-domain opset version (0 when none is imported). */
int64_t model_opset(const Model *m);
/* Runs from a pass on the main graph: when the model is below opset 11 and
 * holds a node of type `op`, upgrades the whole model (or warns). */
int opset_upgrade_for(Graph *g, const char *op, Diag *d);

/* The element type of v when it can be told: declared, a parameter's, or
 * carried through from the first input of a type-preserving operator. */
int32_t value_dtype(const Var *v);
/* A new scalar or 1-D parameter for op's graph. */
Var *new_float_param(Op *op, const char *suffix, int32_t dtype, const double *v, size_t n,
                     bool scalar);
Var *new_int64_param(Op *op, const char *suffix, const int64_t *v, size_t n);

/* The per-operator rules, one file each (clip.c, pad.c, slice.c, resize.c). */
extern const Upgrade UPGRADE_CLIP, UPGRADE_PAD, UPGRADE_SLICE, UPGRADE_RESIZE,
    UPGRADE_UPSAMPLE;

#endif
