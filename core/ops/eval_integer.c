/* eval_integer.c - kernels on the bits of integers (eval.h): BitwiseAnd,
 * BitwiseOr, BitwiseXor, BitwiseNot, BitShift, and BitCast, which reads a
 * tensor's bytes as another type of the same width. The elementwise ones
 * build an element plan broadcasting their inputs (eval_plan.c), as
 * eval_elementwise.c's do; their results are exact whatever the inputs. */
#include <string.h>

#include "eval.h"

enum BitCode { B_AND, B_OR, B_XOR, B_NOT, B_SHL, B_SHR, B_SHL28, B_SHR28 };

static bool bit_signed_type(int32_t dt)
{
    return dt == DT_INT8 || dt == DT_INT16 || dt == DT_INT32 || dt == DT_INT64;
}

/* BitShift-28: every integer type, and a shift by a negative amount or by
 * the width or more defined: 0, or for a right shift of a negative signed
 * value -1 (the sign filling every bit). A signed right shift is
 * arithmetic. p->attr: the type's width in bits. */
static EvalNum bit_shift28(const EvalPlan *p, int64_t a, int64_t b)
{
    bool sgn = bit_signed_type(p->dtype);
    if (b < 0 || b >= p->attr)
        return (EvalNum){.i = p->code == B_SHR28 && sgn && a < 0 ? -1 : 0};
    if (p->code == B_SHL28)
        return (EvalNum){.i = (int64_t)((uint64_t)a << b)};
    if (!sgn)
        return (EvalNum){.i = (int64_t)((uint64_t)a >> b)};
    return (EvalNum){.i = a < 0 ? ~(~a >> b) : a >> b};
}

/* Integers are loaded sign- or zero-extended to 64 bits (uint64 as its bit
 * pattern) and stored by their low bytes, so the 64-bit operation gives
 * the narrow type's result. */
static EvalNum bit_fn(const EvalPlan *p, const EvalNum *in)
{
    uint64_t a = (uint64_t)in[0].i, b = p->n_in > 1 ? (uint64_t)in[1].i : 0;
    switch (p->code) {
    case B_AND: return (EvalNum){.i = (int64_t)(a & b)};
    case B_OR: return (EvalNum){.i = (int64_t)(a | b)};
    case B_XOR: return (EvalNum){.i = (int64_t)(a ^ b)};
    case B_NOT: return (EvalNum){.i = (int64_t)~a};
    case B_SHL: return (EvalNum){.i = (int64_t)(a << b)};
    case B_SHR: return (EvalNum){.i = (int64_t)(a >> b)};
    default: return bit_shift28(p, in[0].i, p->dtype == DT_UINT64 && in[1].i < 0 ? -1 : in[1].i);
    }
}

/* The integer types of BitwiseAnd/Or/Xor/Not-18 (signed and unsigned, no
 * bool). */
static bool bit_int_type(int32_t dt)
{
    switch (dt) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64:
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64:
        return true;
    default:
        return false;
    }
}

/* BitShift-11 takes the unsigned types only (the signed ones came later). */
static bool bit_unsigned_type(int32_t dt)
{
    return dt == DT_UINT8 || dt == DT_UINT16 || dt == DT_UINT32 || dt == DT_UINT64;
}

/* Does some shift amount reach the type's width? C++ leaves such a shift
 * undefined (x86 takes the amount modulo 32 or 64), so the kernel declines
 * rather than pick numpy's 0. 1 yes, 0 no, -1 when the bytes cannot be had. */
static int bit_shift_too_far(EvalCtx *c, const Tensor *amounts)
{
    const uint8_t *b = eval_bytes(c, amounts);
    if (!b)
        return -1;
    uint64_t bits = 8 * dtype_size(amounts->dtype);
    size_t size = dtype_size(amounts->dtype), n = (size_t)tensor_numel(amounts);
    for (size_t k = 0; k < n; k++)
        if ((uint64_t)eval_load(amounts->dtype, b + k * size).i >= bits)
            return 1;
    return 0;
}

static int bit_run(EvalCtx *c, int code, bool (*takes)(int32_t))
{
    size_t n = code == B_NOT ? 1 : 2;
    const Tensor *ins[2] = {eval_in(c, 0), n > 1 ? eval_in(c, 1) : NULL};
    if (c->n_in != n || !ins[0] || (n > 1 && !ins[1]))
        return eval_decline(c, "an input is absent or of an unsupported type");
    if (!takes(ins[0]->dtype) || (n > 1 && ins[1]->dtype != ins[0]->dtype))
        return eval_decline(c, "the operation does not take this element type");
    int rc = code == B_SHL || code == B_SHR ? bit_shift_too_far(c, ins[1]) : 0;
    if (rc)
        return rc < 0 ? eval_out_failed(c)
                      : eval_decline(c, "a shift by the type's width or more, which C++ "
                                        "leaves undefined");
    int64_t dims[EVAL_MAX_RANK];
    int rank = eval_broadcast(ins, n, dims);
    if (rank < 0)
        return eval_decline(c, "the inputs do not broadcast");
    EvalPlan p;
    eval_plan_init(&p, ins[0]->dtype, rank, dims, bit_fn);
    p.code = code;
    p.attr = 8 * (int64_t)dtype_size(ins[0]->dtype);
    for (size_t k = 0; k < n; k++)
        eval_plan_broadcast(&p, ins[k]);
    c->exact = EVAL_KEEPS;
    return eval_plan_run(c, &p);
}

static int eval_bitwise_and(EvalCtx *c) { return bit_run(c, B_AND, bit_int_type); }
static int eval_bitwise_or(EvalCtx *c) { return bit_run(c, B_OR, bit_int_type); }
static int eval_bitwise_xor(EvalCtx *c) { return bit_run(c, B_XOR, bit_int_type); }
static int eval_bitwise_not(EvalCtx *c) { return bit_run(c, B_NOT, bit_int_type); }

/* BitShift-11, or with v28 BitShift-28's rules (bit_shift28). */
static int bit_shift_run(EvalCtx *c, bool v28)
{
    int dir = eval_attr_choice(c->op, "direction", (const char *const[]){"", "LEFT", "RIGHT"}, 3);
    if (dir != 1 && dir != 2)
        return eval_decline(c, "BitShift's direction is neither LEFT nor RIGHT");
    if (v28)
        return bit_run(c, dir == 1 ? B_SHL28 : B_SHR28, bit_int_type);
    return bit_run(c, dir == 1 ? B_SHL : B_SHR, bit_unsigned_type);
}

static int eval_bit_shift(EvalCtx *c) { return bit_shift_run(c, false); }
static int eval_bit_shift28(EvalCtx *c) { return bit_shift_run(c, true); }

/* BitCast: the input's bytes as type `to`, of the same width. A float
 * input that may be off in its last bit would give a wholly different
 * integer, so an inexact one declines (eval.h, Exactness). */
static int eval_bit_cast(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int32_t to = (int32_t)op_attr_int(c->op, "to", 0);
    if (!x || !eval_dtype_ok(to))
        return eval_decline(c, "a bit cast from or to an unsupported element type");
    if (dtype_size(to) != dtype_size(x->dtype))
        return eval_decline(c, "a bit cast between types of different widths");
    if (dtype_is_float(x->dtype) && !dtype_is_float(to) && eval_any_inexact(c))
        return eval_decline_step(c);
    const uint8_t *b = eval_bytes(c, x);
    if (!b)
        return eval_out_failed(c);
    Tensor *y = eval_out(c, 0, to, x->ndims, x->dims);
    if (!y)
        return eval_out_failed(c);
    memcpy((uint8_t *)y->data, b, y->nbytes);
    c->exact = dtype_is_float(x->dtype) ? EVAL_KEEPS : EVAL_CHECKED;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "BitwiseAnd", 18, eval_bitwise_and}, {"", "BitwiseOr", 18, eval_bitwise_or},
    {"", "BitwiseXor", 18, eval_bitwise_xor}, {"", "BitwiseNot", 18, eval_bitwise_not},
    {"", "BitShift", 11, eval_bit_shift},     {"", "BitShift", 28, eval_bit_shift28},
    {"", "BitCast", 26, eval_bit_cast},
};

const OpKernelTable eval_integer_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
