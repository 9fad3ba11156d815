/* fuse_matmul_add.c - passes "fuse-matmul-add" and "fuse-matmul-add-nd":
 * MatMul(x, constant W) -> Add(constant b) becomes Gemm(x, W, b).
 *
 * W must be a rank-2 float parameter [K, N] and b, of W's type, one value
 * per output column ([N] or [1, N]) or a single value, so that Gemm's C
 * broadcasts as the Add did; opset 7 or later (Gemm-6 needs `broadcast`). A
 * MatMul whose output is read elsewhere or is a graph output stays; the
 * Add's output name is kept.
 *
 * Gemm is 2-D: fuse-matmul-add takes an x of declared rank 2. For a higher
 * rank, fuse-matmul-add-nd (off by default: it adds two Reshapes, as
 * onnxruntime's optimizer does) writes Reshape(x, [-1, K]) -> Gemm ->
 * Reshape(.., [d0, .., N]) when x's declared dims are known but for at most
 * one (which becomes -1 in the second shape). */
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

/* The Add after MatMul mm that the fusion absorbs, with its constant in *bv
 * and mm's weight in *w; NULL when the pattern does not hold. */
static Op *mm_add(Op *mm, Var **bv, const Tensor **w)
{
    Var *y = op_is(mm, "MatMul") && mm->n_inputs == 2 && mm->inputs[0] ? match_out(mm) : NULL;
    Op *add = y ? match_next(y, "Add") : NULL;
    *bv = add && add->n_outputs == 1 ? match_other(add, y) : NULL;
    *w = *bv ? param_numeric(mm->inputs[1]) : NULL;
    const Tensor *b = *w ? param_numeric(*bv) : NULL;
    if (!b || (*w)->ndims != 2 || !float_type((*w)->dtype) || b->dtype != (*w)->dtype ||
        !column_bias(b, (*w)->dims[1]))
        return NULL;
    return add;
}

/* A Gemm(x, W, b) inserted after `after`; with y, writing y. */
static Op *gemm_new(Op *mm, Op *after, Var *x, Var *b, Var *y)
{
    Op *gemm = graph_insert_op(mm->graph, after, "Gemm", mm->name);
    if (!gemm || op_append_input(gemm, x) || op_append_input(gemm, mm->inputs[1]) ||
        op_append_input(gemm, b) || (y && op_append_output(gemm, y)))
        return NULL;
    return gemm;
}

/* Is x known to be of rank 2? */
static bool rank_two(const Var *x)
{
    return value_rank(x) == 2;
}

/* Fuses one matched MatMul + Add: 0 done, 1 when the variant does not
 * apply (kept), -1 on failure. */
typedef int (*MmFuse)(Op *mm, Op *add, Var *bv, const Tensor *w);

static int fuse_2d(Op *mm, Op *add, Var *bv, const Tensor *w)
{
    (void)w;
    if (!rank_two(mm->inputs[0]))
        return 1;
    Op *gemm = gemm_new(mm, add, mm->inputs[0], bv, NULL);
    if (!gemm || graph_replace_op(add, gemm))
        return -1;
    return graph_remove_op(mm, NULL);
}

enum { ND_MAX_RANK = 8 };

/* The output shape [d0, .., d(r-2), N] of the MatMul, -1 for the one
 * unknown dim; false when x's rank is not in 3..8 or more dims are unknown. */
static bool nd_shape(const Var *x, int64_t n, int64_t *shape, size_t *rank)
{
    int r = value_rank(x);
    if (r < 3 || r > ND_MAX_RANK)
        return false;
    int unknown = 0;
    *rank = (size_t)r;
    for (size_t i = 0; i + 1 < *rank; i++) {
        shape[i] = value_dim(x, (int)i);
        unknown += shape[i] < 0;
    }
    shape[*rank - 1] = n;
    return unknown <= 1;
}

/* A new value of mm's graph named after mm. */
static Var *value_new(Op *mm, const char *sfx)
{
    const char *base = param_base_name(mm, sfx);
    const char *name = base ? model_fresh_value_name(mm->graph->model, base) : NULL;
    return name ? graph_new_var(mm->graph, name) : NULL;
}

/* Reshape(in, shape) inserted after `after`, without outputs yet. */
static Op *reshape_new(Op *mm, Op *after, Var *in, const int64_t *shape, size_t n,
                       const char *sfx)
{
    Graph *g = mm->graph;
    Var *sv = new_int64_param(mm, sfx, shape, n);
    const char *base = sv ? param_base_name(mm, sfx) : NULL;
    const char *name = base ? model_fresh_node_name(g->model, base) : NULL;
    Op *r = name ? graph_insert_op(g, after, "Reshape", name) : NULL;
    return r && !op_append_input(r, in) && !op_append_input(r, sv) ? r : NULL;
}

/* x -> Reshape [-1, K] -> Gemm -> Reshape [.., N] -> add's output. */
static int nd_replace(Op *mm, Op *add, Var *bv, const Tensor *w, const int64_t *shape,
                      size_t rank)
{
    int64_t flat[2] = {-1, w->dims[0]};
    Var *x2 = value_new(mm, "_flat"), *y2 = x2 ? value_new(mm, "_gemm") : NULL;
    Op *r1 = y2 ? reshape_new(mm, add, mm->inputs[0], flat, 2, "_flat") : NULL;
    Op *gemm = r1 && !op_append_output(r1, x2) ? gemm_new(mm, r1, x2, bv, y2) : NULL;
    Op *r2 = gemm ? reshape_new(mm, gemm, y2, shape, rank, "_shape") : NULL;
    if (!r2 || graph_replace_op(add, r2))
        return -1;
    return graph_remove_op(mm, NULL);
}

static int fuse_nd(Op *mm, Op *add, Var *bv, const Tensor *w)
{
    int64_t shape[ND_MAX_RANK];
    size_t rank;
    if (!nd_shape(mm->inputs[0], w->dims[1], shape, &rank))
        return 1;
    if (!graph_takes_new_params(mm->graph)) {
        model_warn(mm->graph->model, op_label(add), "not fused: %s", NO_NEW_PARAMS);
        return 1;
    }
    return nd_replace(mm, add, bv, w, shape, rank);
}

/* One MatMul: fused by `fuse` when a constant-bias Add alone reads it. */
static int mm_step(PassCtx *pc, Op *mm, MmFuse fuse)
{
    Var *bv;
    const Tensor *w;
    Op *add = mm_add(mm, &bv, &w);
    const char *label = add ? op_label(add) : NULL;
    int rc = add ? fuse(mm, add, bv, w) : 1;
    if (rc < 0)
        return pass_failed_on(pc, label);
    if (rc == 0)
        model_note(pc->g->model, "fused", label);
    return 0;
}

static int step_2d(PassCtx *pc, Op *mm)
{
    return mm_step(pc, mm, fuse_2d);
}

static int step_nd(PassCtx *pc, Op *mm)
{
    return mm_step(pc, mm, fuse_nd);
}

static int pass_fuse_matmul_add(PassCtx *pc)
{
    return model_opset(pc->g->model) < 7 ? 0 : pass_each_op(pc, step_2d);
}

const Pass fuse_matmul_add_pass = {
    .name = "fuse-matmul-add",
    .help = "MatMul(rank-2 x, constant W) + Add(constant b) to Gemm",
    .on_by_default = true,
    .run = pass_fuse_matmul_add,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"MatMul", NULL},
};

static int pass_fuse_matmul_add_nd(PassCtx *pc)
{
    return model_opset(pc->g->model) < 7 ? 0 : pass_each_op(pc, step_nd);
}

const Pass fuse_matmul_add_nd_pass = {
    .name = "fuse-matmul-add-nd",
    .help = "the same for rank > 2 x: Reshape -> Gemm -> Reshape (static shape)",
    .on_by_default = false,
    .run = pass_fuse_matmul_add_nd,
    .facts = FACTS_ROUND,
    .acts_on = (const char *const[]){"MatMul", NULL},
};
