/* pass_ctx.c - what a pass does with its PassCtx (passes.h): the walk over
 * the operations of its graph, and the error of a rewrite that ran out of
 * memory half way. Apart from pass.c, which lists the passes, so that a
 * pass does not depend on the list it is in. */
#include "passes.h"

int pass_each_op(PassCtx *pc, PassStep step)
{
    for (size_t i = 0; i < pc->g->n_ops; i++) {
        int rc = step(pc, pc->g->ops[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int pass_failed_on(PassCtx *pc, const char *label)
{
    return diag_set(pc->d, PPQ_EINTERNAL, "pass %s failed on node '%s'", pc->name, label);
}
