/* upgrade.h - raising a legacy model (opset 6..10) to opset 11.
 *
 * Clip-6, Pad-2, Slice-1 and Resize-10 keep their operands in attributes or
 * lack inputs their opset-11 forms take. Their input forms are valid only
 * under opset 11, so rewriting one means raising the model's default-domain
 * opset to 11, and then every node whose definition changed on the way must be
 * adapted too. The upgrade is all or nothing: every node is checked first, and
 * if one cannot be adapted nothing changes and a warning names it. Passes
 * slice, clip, pad and resize each start the upgrade when the model holds
 * their legacy operator (opset.c); the first to do so converts the whole
 * model. The rules for those four live in clip.c, pad.c, slice.c and
 * resize.c, the other adaptations in opset.c. */
#ifndef PPQ_UPGRADE_H
#define PPQ_UPGRADE_H

#include "../core/graph.h"

enum { OPSET_TARGET = 11, IR_FOR_OPSET_TARGET = 6 };

/* One operator's adaptation from version `from` (the model's opset) to 11. */
typedef struct Upgrade {
    const char *op;
    /* NULL when op can be adapted, else why not. */
    const char *(*check)(const Op *op, int64_t from);
    /* Rewrites op; -1 when out of memory. NULL: nothing to rewrite. */
    int (*apply)(Op *op, int64_t from);
} Upgrade;

/* The per-operator rules, one file each (clip.c, pad.c, slice.c, resize.c). */
extern const Upgrade UPGRADE_CLIP, UPGRADE_PAD, UPGRADE_SLICE, UPGRADE_RESIZE,
    UPGRADE_UPSAMPLE;

#endif
