/* downgrade.h - lowering a model's default-domain opset for --target-opset
 * (downgrade.c; the raise is in upgrade.h and opset.c). */
#ifndef PPQ_DOWNGRADE_H
#define PPQ_DOWNGRADE_H

#include "../core/ir/graph.h"

/* Lowers m from default-domain opset `from` to `to` (to < from), adapting
 * the nodes whose operator changed in between; shape facts must be current
 * (the checks read element types and dims). A node without an exact form at
 * `to`, a tensor type newer than `to` or a model-local function whose
 * operators changed: PPQ_EINPUT naming it, and the model unchanged. */
int opset_lower(Model *m, int64_t from, int64_t to, Diag *d);

#endif
