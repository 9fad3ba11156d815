/* fuse_matmul_add.c - pass "fuse-matmul-add": MatMul(x, constant W) ->
 * Add(constant b) becomes Gemm(x, W, b).
 *
 * Gemm is 2-D: x must be of rank 2 (declared) and W a rank-2 parameter
 * [K, N]; b must be one value per output column ([N] or [1, N]) or a single
 * value, so that Gemm's C broadcasts as the Add did. Float types only (what
 * a quantizer reads as a Gemm), b of W's type, opset 7 or later (Gemm-6
 * needs `broadcast`). A MatMul whose output is read elsewhere or is a graph
 * output stays; the Add's output name is kept, written by the Gemm. A higher
 * rank x stays MatMul + Add (Gemm would need a Reshape on each side). */
#include "match.h"
#include "params.h"
#include "passes.h"

/* Does b broadcast against [M, N] as one value per column (or one value)? */
static bool column_bias(const Tensor *b, int64_t n)
{
    int64_t count = tensor_numel(b);
    if (b->ndims > 2 || (count != 1 && count != n))
        return false;
    return b->ndims < 2 || b->dims[0] == 1;
}

static bool float_type(int32_t dt)
{
    return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_FLOAT16;
}

/* Is x known to be of rank 2? */
static bool rank_two(const Var *x)
{
    return x->param ? x->param->ndims == 2 : x->type.rank == 2;
}

/* The Gemm computing add's output from mm's inputs and the addend b. */
static int replace(Op *mm, Op *add, Var *b)
{
    Op *gemm = graph_insert_op(mm->graph, add, "Gemm", mm->name);
    if (!gemm || op_append_input(gemm, mm->inputs[0]) || op_append_input(gemm, mm->inputs[1]) ||
        op_append_input(gemm, b) || graph_replace_op(add, gemm))
        return -1;
    return graph_remove_op(mm, NULL);
}

int pass_fuse_matmul_add(Graph *g, Diag *d)
{
    if (model_opset(g->model) < 7)
        return 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *mm = g->ops[i];
        Var *y = op_is(mm, "MatMul") && mm->n_inputs == 2 ? match_out(mm) : NULL;
        Op *add = y ? match_next(y, "Add") : NULL;
        Var *bv = add && add->n_outputs == 1 ? match_other(add, y) : NULL;
        if (!bv || !mm->inputs[0] || !rank_two(mm->inputs[0]))
            continue;
        const Tensor *w = param_numeric(mm->inputs[1]), *b = param_numeric(bv);
        if (!w || !b || w->ndims != 2 || !float_type(w->dtype) || b->dtype != w->dtype ||
            !column_bias(b, w->dims[1]))
            continue;
        const char *label = op_label(add);
        if (replace(mm, add, bv))
            return diag_set(d, PPQ_EINTERNAL, "pass fuse-matmul-add failed on node '%s'", label);
        model_note(g->model, "fused", label);
    }
    return 0;
}
