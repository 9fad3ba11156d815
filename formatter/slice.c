/* slice.c - pass "slice": Slice-1 (starts, ends, axes attributes) becomes
 * Slice-11 with int64 inputs. Absent axes mean 0..len(starts)-1 and are
 * written out as such (PPQ's default is wrong). Raises the model to opset 10,
 * where the input form begins (see upgrade.h). */
#include <stdlib.h>

#include "params.h"
#include "upgrade.h"

static const char *slice_check(const Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 10))
        return NULL; /* Slice-10 takes inputs */
    Attr *s = op_attr(op, "starts"), *e = op_attr(op, "ends"), *a = op_attr(op, "axes");
    if (!s || !e || s->n != e->n || (a && a->n != s->n))
        return "Slice whose starts, ends and axes disagree";
    return NULL;
}

static int slice_to_inputs(Op *op, int64_t from, int64_t to)
{
    if (!upgrade_crosses(from, to, 10))
        return 0;
    Attr *s = op_attr(op, "starts"), *e = op_attr(op, "ends"), *a = op_attr(op, "axes");
    int64_t *axes = a ? a->ints : calloc(s->n + 1, sizeof *axes);
    if (!axes)
        return -1;
    for (size_t i = 0; !a && i < s->n; i++)
        axes[i] = (int64_t)i;
    Var *sv = new_int64_param(op, "_starts", s->ints, s->n);
    Var *ev = new_int64_param(op, "_ends", e->ints, e->n);
    Var *av = new_int64_param(op, "_axes", axes, s->n);
    if (!a)
        free(axes);
    if (!sv || !ev || !av || op_append_input(op, sv) || op_append_input(op, ev) ||
        op_append_input(op, av))
        return -1;
    op_remove_attr(op, "starts");
    op_remove_attr(op, "ends");
    op_remove_attr(op, "axes");
    return 0;
}

const Upgrade UPGRADE_SLICE = {"Slice", slice_check, slice_to_inputs, NULL, {10}};
