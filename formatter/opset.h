/* opset.h - --target-opset: raising or lowering the whole model to a chosen
 * default-domain opset before the passes run (opset.c; the adaptations are
 * in upgrade.h, the lowering in downgrade.h). */
#ifndef PPQ_OPSET_H
#define PPQ_OPSET_H

#include "../core/ir/graph.h"

/* The opsets --target-opset accepts. 26 is the newest default-domain opset
 * both the pinned onnx (1.23.2, which defines up to 28) and the pinned
 * onnxruntime (1.31.1, which runs up to 26) know: every rule in upgrade.h was
 * checked against the operator changelog up to it, and a raised model can be
 * verified by both. Opset 7 is where numpy-style broadcasting and the
 * inference-only BatchNormalization/Dropout begin. */
enum { OPSET_TARGET_MIN = 7, OPSET_TARGET_MAX = 26 };
/* The stage its changes and warnings are logged under (--report). */
#define OPSET_STAGE "target-opset"

/* Raises or lowers m's default-domain opset to target, adapting every node
 * (subgraphs included). A model already at target is left as it is. A node
 * that cannot be adapted: PPQ_EINPUT naming it, and the model unchanged. */
int opset_raise_to(Model *m, int64_t target, Diag *d);

#endif
