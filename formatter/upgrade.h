/* upgrade.h - raising a model's default-domain opset (1..25 -> up to 26).
 *
 * Raising the opset changes the definition every node is read by, so every
 * node whose operator changed between the model's opset `from` and the new
 * one `to` is adapted on the way (attributes that became inputs, renamed or
 * deprecated operators, defaults that changed meaning). The raise is all or
 * nothing: every node is checked first, and if one cannot be adapted nothing
 * changes. Two callers (opset.c):
 *  - --target-opset=N raises the model to N before the passes run
 *    (opset_raise_to in opset.h); a node that cannot be adapted is an error;
 *  - the legacy-form passes slice, clip, pad and resize each raise the model
 *    to the lowest opset where their operator's input form exists (Slice 10,
 *    the others 11) when the model holds their legacy operator; a node that
 *    cannot be adapted leaves the model as it is, with a warning.
 * The rules for the legacy operators live in clip.c, pad.c, slice.c and
 * resize.c, those of opsets 1 to 6 in upgrade_early.c, those up to opset 11
 * in opset.c, those of 12 to 17 in upgrade_late.c and the later ones in
 * upgrade_modern.c. */
#ifndef PPQ_UPGRADE_H
#define PPQ_UPGRADE_H

#include "../core/ir/graph.h"

/* One operator's adaptation from opset `from` (the model's) to `to`. Each
 * function looks at the versions where its operator changed and does
 * nothing for a step that is not crossed. */
typedef struct Upgrade {
    const char *op;
    /* NULL when op can be adapted, else why not. */
    const char *(*check)(const Op *op, int64_t from, int64_t to);
    /* Rewrites op; -1 when out of memory. NULL: nothing to rewrite. */
    int (*apply)(Op *op, int64_t from, int64_t to);
    /* Optional: prefetches what apply will touch (the name-map slots of the
     * parameters it adds), called a few nodes ahead so that a million
     * rewrites do not each wait on cache misses. */
    void (*prefetch)(const Op *op);
    /* The opsets where the operator changed in a way check and apply adapt
     * (the versions they pass to upgrade_crosses), ascending, 0 after the
     * last: a raise crossing none of them leaves the node as it is. */
    int16_t at[4];
} Upgrade;

/* Does the raise from `from` to `to` cross opset `at` (the version where a
 * definition changed)? */
static inline bool upgrade_crosses(int64_t from, int64_t to, int64_t at)
{
    return from < at && at <= to;
}

/* Does the raise from `from` to `to` cross any opset where u's operator
 * changed? */
static inline bool upgrade_crosses_any(const Upgrade *u, int64_t from, int64_t to)
{
    for (size_t i = 0; i < sizeof u->at / sizeof *u->at && u->at[i]; i++)
        if (upgrade_crosses(from, to, u->at[i]))
            return true;
    return false;
}

/* The per-operator rules (clip.c, pad.c, slice.c, resize.c, upgrade_late.c). */
extern const Upgrade UPGRADE_CLIP, UPGRADE_PAD, UPGRADE_SLICE, UPGRADE_RESIZE,
    UPGRADE_UPSAMPLE;
extern const Upgrade UPGRADE_SPLIT, UPGRADE_SQUEEZE, UPGRADE_UNSQUEEZE, UPGRADE_REDUCE_SUM,
    UPGRADE_SOFTMAX, UPGRADE_LOG_SOFTMAX, UPGRADE_HARDMAX, UPGRADE_ROI_ALIGN;
/* The opset 1..6 rules (upgrade_early.c); UPGRADE_CONSUMED_INPUTS is that of
 * every other operator carrying consumed_inputs. */
extern const Upgrade UPGRADE_RESHAPE, UPGRADE_CONCAT, UPGRADE_CAST, UPGRADE_LP_POOL,
    UPGRADE_GLOBAL_LP_POOL, UPGRADE_TILE, UPGRADE_CONSUMED_INPUTS;
/* The opset 18 to 26 rules (upgrade_modern.c): one per Reduce* operator
 * whose axes became an input at 18 (ReduceSum's is UPGRADE_REDUCE_SUM). */
extern const Upgrade UPGRADE_REDUCE18[], UPGRADE_GRID_SAMPLE, UPGRADE_DFT, UPGRADE_GROUP_NORM;
extern const size_t UPGRADE_REDUCE18_N;
/* The ints attribute `name` of op as a new int64 input after its others (an
 * absent attribute stays an absent input: the same meaning for Split,
 * Squeeze, ReduceSum and Reshape); -1 when out of memory. */
int upgrade_ints_attr_to_input(Op *op, const char *name, const char *suffix);
/* Dropout-12 takes ratio as an input (upgrade_late.c). */
int upgrade_dropout_ratio(Op *op, int64_t from, int64_t to);
/* BatchNormalization-14 chose training mode with an attribute instead of
 * the number of outputs (upgrade_late.c). */
const char *upgrade_bn_outputs_check(const Op *op, int64_t from, int64_t to);

#endif
