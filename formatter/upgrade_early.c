/* upgrade_early.c - the adaptations from opset 1 to 6 (see upgrade.h):
 * Reshape-5's shape input, Concat-4's required axis, Cast-6's numeric `to`,
 * LpPool-2's integer p, and the `consumed_inputs` attribute (a hint for
 * in-place buffers, no meaning) that opset 6 removed from every operator.
 * Tile-1 (tiles and axis inputs) has no rule: its node blocks the raise. */
#include <string.h>

#include "params.h"
#include "upgrade.h"

static int drop_consumed_inputs(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 6))
        op_remove_attr(op, "consumed_inputs");
    return 0;
}

/* For an operator without a rule of its own that carries consumed_inputs. */
const Upgrade UPGRADE_CONSUMED_INPUTS = {"(consumed_inputs)", NULL, drop_consumed_inputs, NULL,
                                         {6}};

static const char *reshape_check(const Op *op, int64_t from, int64_t to)
{
    const Attr *shape = op_attr(op, "shape");
    if (!upgrade_crosses(from, to, 5) || op->n_inputs >= 2)
        return NULL;
    return shape && shape->type == ATTR_INTS ? NULL : "Reshape-1 without a shape attribute";
}

static int reshape_to_input(Op *op, int64_t from, int64_t to)
{
    drop_consumed_inputs(op, from, to);
    return upgrade_crosses(from, to, 5) ? upgrade_ints_attr_to_input(op, "shape", "_shape") : 0;
}

/* Concat-1's axis defaulted to 1; Concat-4 requires it. */
static int concat_axis(Op *op, int64_t from, int64_t to)
{
    if (upgrade_crosses(from, to, 4) && !op_attr(op, "axis"))
        return op_set_attr_int(op, "axis", 1) ? 0 : -1;
    return 0;
}

/* Cast-1 named its target type as a string (TensorProto's enum names). */
static const char *const CAST_NAMES[] = {
    "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
    "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128",
};

static int cast_name_code(const Attr *to)
{
    for (size_t i = 1; to && to->type == ATTR_STRING && i < sizeof CAST_NAMES / sizeof *CAST_NAMES;
         i++)
        if (to->s.len == strlen(CAST_NAMES[i]) && !memcmp(to->s.ptr, CAST_NAMES[i], to->s.len))
            return (int)i;
    return 0;
}

static const char *cast_check(const Op *op, int64_t from, int64_t to)
{
    const Attr *a = op_attr(op, "to");
    if (!upgrade_crosses(from, to, 6) || (a && a->type == ATTR_INT))
        return NULL;
    return cast_name_code(a) ? NULL : "Cast-1 whose 'to' names no ONNX element type";
}

static int cast_to_code(Op *op, int64_t from, int64_t to)
{
    const Attr *a = op_attr(op, "to");
    if (!upgrade_crosses(from, to, 6) || !a || a->type == ATTR_INT)
        return 0;
    int code = cast_name_code(a);
    op_remove_attr(op, "to");
    return op_set_attr_int(op, "to", code) ? 0 : -1;
}

/* LpPool-1 and GlobalLpPool-1 took p as a float; from opset 2 an int. */
static const char *lp_check(const Op *op, int64_t from, int64_t to)
{
    const Attr *p = op_attr(op, "p");
    if (!upgrade_crosses(from, to, 2) || !p || p->type != ATTR_FLOAT)
        return NULL;
    return p->f == (float)(int64_t)p->f ? NULL : "LpPool-1 with a p that is not a whole number";
}

static int lp_int_p(Op *op, int64_t from, int64_t to)
{
    const Attr *p = op_attr(op, "p");
    drop_consumed_inputs(op, from, to);
    if (!upgrade_crosses(from, to, 2) || !p || p->type != ATTR_FLOAT)
        return 0;
    int64_t v = (int64_t)p->f;
    op_remove_attr(op, "p");
    return op_set_attr_int(op, "p", v) ? 0 : -1;
}

static const char *tile_check(const Op *op, int64_t from, int64_t to)
{
    (void)op;
    return upgrade_crosses(from, to, 6) ? "Tile-1 (tiles and axis inputs; Tile-6 takes repeats)"
                                        : NULL;
}

const Upgrade UPGRADE_RESHAPE = {"Reshape", reshape_check, reshape_to_input, NULL, {5, 6}};
const Upgrade UPGRADE_CONCAT = {"Concat", NULL, concat_axis, NULL, {4}};
const Upgrade UPGRADE_CAST = {"Cast", cast_check, cast_to_code, NULL, {6}};
const Upgrade UPGRADE_LP_POOL = {"LpPool", lp_check, lp_int_p, NULL, {2}};
const Upgrade UPGRADE_GLOBAL_LP_POOL = {"GlobalLpPool", lp_check, lp_int_p, NULL, {2}};
const Upgrade UPGRADE_TILE = {"Tile", tile_check, NULL, NULL, {6}};
