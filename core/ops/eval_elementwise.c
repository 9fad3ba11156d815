/* eval_elementwise.c - kernels of elementwise operations: arithmetic,
 * comparisons, logic, Where, Cast/CastLike and Identity (eval.h). Each
 * builds an element plan broadcasting its inputs against the output; one
 * element function computes every operation, switching on the plan's code. */
#include <math.h>
#include <string.h>

#include "eval.h"

enum ElemCode {
    E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_MOD, E_MIN, E_MAX, E_SUM, E_MEAN,
    E_NEG, E_ABS, E_SQRT, E_RECIP, E_EXP, E_LOG, E_FLOOR, E_CEIL, E_RELU, E_SIGN,
    E_EQ, E_LT, E_GT, E_LE, E_GE, E_AND, E_OR, E_XOR, E_NOT, E_WHERE, E_CAST,
    /* float functions (elem_math) */
    E_SIN, E_COS, E_TAN, E_ASIN, E_ACOS, E_ATAN, E_SINH, E_COSH, E_ASINH, E_ACOSH, E_ATANH,
    E_TANH, E_SIGMOID, E_ERF, E_SOFTSIGN, E_SOFTPLUS, E_ROUND, E_ISNAN, E_ISINF,
};

/* Integer arithmetic wraps as the machine (and onnxruntime) does: computed
 * on uint64 so that C sees no signed overflow, stored in the low bytes. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Truncating division (C++ semantics); the kernel ruled out b == 0 and
 * the type's minimum divided by -1 (elem_undefined). */
static int64_t int_div(int64_t a, int64_t b, bool u64)
{
    if (u64)
        return (int64_t)((uint64_t)a / (uint64_t)b);
    return b == -1 ? wrap_sub(0, a) : a / b;
}

/* fmod = 0: the remainder takes the divisor's sign (Python's %). fmod = 1:
 * onnxruntime's std::fmod of the integers converted to double (beyond 2^53
 * they round first: fmod(2^62 + 1, 3) is 1, not 2). */
static int64_t int_mod(int64_t a, int64_t b, bool fmod_sign, bool u64)
{
    if (fmod_sign && u64)
        return (int64_t)(uint64_t)fmod((double)(uint64_t)a, (double)(uint64_t)b);
    if (fmod_sign)
        return (int64_t)fmod((double)a, (double)b);
    if (u64)
        return (int64_t)((uint64_t)a % (uint64_t)b);
    int64_t r = b == -1 ? 0 : a % b;
    if (!fmod_sign && r && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

/* onnxruntime's integer Pow: std::pow in double, converted to the type
 * (3^39 is 4052555153018976256, the double nearest the exact power); the
 * kernel ruled out results outside the type (elem_undefined). */
static double int_pow(const EvalPlan *p, const EvalNum *in)
{
    double e = dtype_is_float(p->in[1]->dtype) ? in[1].f : (double)in[1].i;
    return pow((double)in[0].i, e);
}

static int cmp_int(int64_t a, int64_t b, bool u64)
{
    if (u64)
        return ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
    return (a > b) - (a < b);
}

/* Min, Max, Sum, Mean over every input (float: NaN propagates). */
static EvalNum elem_fold_float(const EvalPlan *p, const EvalNum *in)
{
    double r = in[0].f;
    for (size_t k = 1; k < p->n_in; k++) {
        double x = in[k].f;
        if (p->code == E_SUM || p->code == E_MEAN)
            r += x;
        else if (x != x || (p->code == E_MIN ? x < r : x > r))
            r = r != r ? r : x;
    }
    return (EvalNum){.f = p->code == E_MEAN ? r / (double)p->n_in : r};
}

static EvalNum elem_fold_int(const EvalPlan *p, const EvalNum *in, bool u64)
{
    int64_t r = in[0].i;
    for (size_t k = 1; k < p->n_in; k++) {
        int c = cmp_int(in[k].i, r, u64);
        if (p->code == E_SUM || p->code == E_MEAN)
            r = wrap_add(r, in[k].i);
        else if (p->code == E_MIN ? c < 0 : c > 0)
            r = in[k].i;
    }
    return (EvalNum){.i = p->code == E_MEAN ? r / (int64_t)p->n_in : r};
}

static double elem_as_double(const EvalPlan *p, size_t k, EvalNum v)
{
    return dtype_is_float(p->in[k]->dtype) ? v.f : (double)v.i;
}

/* The float functions of one argument, in double (glibc's are within an
 * ulp of exact), rounded once to the output type. IsNaN and IsInf give
 * bools; IsInf's attr: bit 0 detects -inf, bit 1 +inf. */
static EvalNum elem_math(const EvalPlan *p, double a)
{
    switch (p->code) {
    case E_SIN: return (EvalNum){.f = sin(a)};
    case E_COS: return (EvalNum){.f = cos(a)};
    case E_TAN: return (EvalNum){.f = tan(a)};
    case E_ASIN: return (EvalNum){.f = asin(a)};
    case E_ACOS: return (EvalNum){.f = acos(a)};
    case E_ATAN: return (EvalNum){.f = atan(a)};
    case E_SINH: return (EvalNum){.f = sinh(a)};
    case E_COSH: return (EvalNum){.f = cosh(a)};
    case E_ASINH: return (EvalNum){.f = asinh(a)};
    case E_ACOSH: return (EvalNum){.f = acosh(a)};
    case E_ATANH: return (EvalNum){.f = atanh(a)};
    case E_TANH: return (EvalNum){.f = tanh(a)};
    case E_SIGMOID: return (EvalNum){.f = 1.0 / (1.0 + exp(-a))};
    case E_ERF: return (EvalNum){.f = erf(a)};
    case E_SOFTSIGN: return (EvalNum){.f = a / (1.0 + fabs(a))};
    case E_SOFTPLUS: return (EvalNum){.f = log1p(exp(a))};
    case E_ROUND: return (EvalNum){.f = nearbyint(a)}; /* halves to even */
    case E_ISNAN: return (EvalNum){.i = a != a};
    default: return (EvalNum){.i = isinf(a) && (a < 0 ? p->attr & 1 : p->attr & 2)};
    }
}

static EvalNum elem_float(const EvalPlan *p, const EvalNum *in)
{
    if (p->code >= E_SIN)
        return elem_math(p, in[0].f);
    double a = in[0].f, b = p->n_in > 1 ? elem_as_double(p, 1, in[1]) : 0;
    switch (p->code) {
    case E_ADD: return (EvalNum){.f = a + b};
    case E_SUB: return (EvalNum){.f = a - b};
    case E_MUL: return (EvalNum){.f = a * b};
    case E_DIV: return (EvalNum){.f = a / b};
    case E_POW: return (EvalNum){.f = pow(a, b)};
    case E_MOD: return (EvalNum){.f = fmod(a, b)};
    case E_NEG: return (EvalNum){.f = -a};
    case E_ABS: return (EvalNum){.f = fabs(a)};
    case E_SQRT: return (EvalNum){.f = sqrt(a)};
    case E_RECIP: return (EvalNum){.f = 1.0 / a};
    case E_EXP: return (EvalNum){.f = exp(a)};
    case E_LOG: return (EvalNum){.f = log(a)};
    case E_FLOOR: return (EvalNum){.f = floor(a)};
    case E_CEIL: return (EvalNum){.f = ceil(a)};
    case E_RELU: return (EvalNum){.f = a > 0 ? a : a != a ? a : 0.0};
    case E_SIGN: return (EvalNum){.f = a > 0 ? 1.0 : a < 0 ? -1.0 : a};
    case E_EQ: return (EvalNum){.i = a == b};
    case E_LT: return (EvalNum){.i = a < b};
    case E_GT: return (EvalNum){.i = a > b};
    case E_LE: return (EvalNum){.i = a <= b};
    case E_GE: return (EvalNum){.i = a >= b};
    default: return elem_fold_float(p, in);
    }
}

static EvalNum elem_int(const EvalPlan *p, const EvalNum *in)
{
    bool u64 = p->in[0]->dtype == DT_UINT64;
    int64_t a = in[0].i, b = p->n_in > 1 ? in[1].i : 0;
    switch (p->code) {
    case E_ADD: return (EvalNum){.i = wrap_add(a, b)};
    case E_SUB: return (EvalNum){.i = wrap_sub(a, b)};
    case E_MUL: return (EvalNum){.i = wrap_mul(a, b)};
    case E_DIV: return (EvalNum){.i = int_div(a, b, u64)};
    case E_POW: return (EvalNum){.i = (int64_t)int_pow(p, in)};
    case E_MOD: return (EvalNum){.i = int_mod(a, b, p->attr != 0, u64)};
    case E_NEG: return (EvalNum){.i = wrap_sub(0, a)};
    case E_ABS: return (EvalNum){.i = a < 0 && !u64 ? wrap_sub(0, a) : a};
    case E_RELU: return (EvalNum){.i = a > 0 || u64 ? a : 0};
    case E_SIGN: return (EvalNum){.i = u64 ? a != 0 : (a > 0) - (a < 0)};
    case E_EQ: return (EvalNum){.i = a == b};
    case E_LT: return (EvalNum){.i = cmp_int(a, b, u64) < 0};
    case E_GT: return (EvalNum){.i = cmp_int(a, b, u64) > 0};
    case E_LE: return (EvalNum){.i = cmp_int(a, b, u64) <= 0};
    case E_GE: return (EvalNum){.i = cmp_int(a, b, u64) >= 0};
    case E_AND: return (EvalNum){.i = a && b};
    case E_OR: return (EvalNum){.i = a || b};
    case E_XOR: return (EvalNum){.i = !a != !b};
    case E_NOT: return (EvalNum){.i = !a};
    default: return elem_fold_int(p, in, u64);
    }
}

static EvalNum elem_fn(const EvalPlan *p, const EvalNum *in)
{
    if (p->code == E_WHERE)
        return in[0].i ? in[1] : in[2];
    if (p->code == E_CAST)
        return eval_convert(in[0], p->in[0]->dtype, p->dtype);
    return p->float0 ? elem_float(p, in) : elem_int(p, in);
}

/* Which element types an operation takes. */
typedef enum { TAKES_NUMBERS, TAKES_FLOATS, TAKES_BOOLS, TAKES_ANY } ElemTakes;

static bool elem_takes(ElemTakes k, int32_t dt)
{
    switch (k) {
    case TAKES_FLOATS: return dtype_is_float(dt);
    case TAKES_BOOLS: return dt == DT_BOOL;
    case TAKES_NUMBERS: return dt != DT_BOOL;
    default: return true;
    }
}

/* Does some element of t satisfy is? 1 yes, 0 no, -1 when t's bytes cannot
 * be had (c->why set). */
static int any_element(EvalCtx *c, const Tensor *t, bool (*is)(EvalNum))
{
    const uint8_t *bytes = eval_bytes(c, t);
    if (!bytes)
        return -1;
    size_t size = dtype_size(t->dtype), n = (size_t)tensor_numel(t);
    for (size_t i = 0; i < n; i++)
        if (is(eval_load(t->dtype, bytes + i * size)))
            return 1;
    return 0;
}

static bool int_is_zero(EvalNum v) { return !v.i; }

/* Does an integer divisor (input 1) hold a zero? Then the model divides by
 * zero, which folding must not decide. */
static int divisor_has_zero(EvalCtx *c, const Tensor *b)
{
    return dtype_is_float(b->dtype) ? 0 : any_element(c, b, int_is_zero);
}

static bool below_minus_17(EvalNum v) { return v.f < -17; }

/* Does a float32 (float16, bfloat16) Sigmoid input hold a value below -17?
 * There the exact result is below 5e-8 and onnxruntime's approximation comes
 * out 0 or a few 1e-8 (0 from about -17.9 on, not monotonically): a folded
 * exact value would turn a later x > 0 or NonZero the other way (seed
 * 696189314411). Double is computed exactly on both sides. */
static int sigmoid_input_deep(EvalCtx *c, const Tensor *x)
{
    return x->dtype == DT_DOUBLE ? 0 : any_element(c, x, below_minus_17);
}

/* The largest finite value of float type dt (IsInf's step). */
static double elem_float_max(int32_t dt)
{
    switch (dt) {
    case DT_FLOAT16: return 65504.0;
    case DT_BFLOAT16: return 0x1.fep127;
    case DT_DOUBLE: return 0x1.fffffffffffffp1023;
    default: return 0x1.fffffep127;
    }
}

/* Does float x truncate to a value of integer type dt? C++ leaves the
 * conversion undefined otherwise (NaN, inf, out of range): onnxruntime
 * then gives what the machine's instruction gives (x86: the type's minimum
 * for int32/int64, low bytes of an int32 conversion for narrower types). */
static bool elem_fits(int32_t dt, double x)
{
    double t = trunc(x);
    switch (dt) {
    case DT_INT8: return t >= -128 && t <= 127;
    case DT_INT16: return t >= -32768 && t <= 32767;
    case DT_INT32: return t >= -2147483648.0 && t <= 2147483647.0;
    case DT_INT64: return t >= -0x1p63 && t < 0x1p63;
    case DT_UINT8: return t >= 0 && t <= 255;
    case DT_UINT16: return t >= 0 && t <= 65535;
    case DT_UINT32: return t >= 0 && t <= 4294967295.0;
    case DT_UINT64: return t >= 0 && t < 0x1p64;
    default: return true;
    }
}

/* Is the element's result one C++ leaves undefined (elem_fits; the type's
 * minimum divided by -1, where onnxruntime dies of SIGFPE)? fattr holds the
 * operation's output type (elem_flags). */
static EvalNum elem_undefined(const EvalPlan *p, const EvalNum *in)
{
    int32_t to = (int32_t)p->fattr, dt = p->in[0]->dtype;
    switch (p->code) {
    case E_CAST: return (EvalNum){.i = !elem_fits(to, in[0].f)};
    case E_POW: return (EvalNum){.i = !elem_fits(to, int_pow(p, in))};
    default: /* Div, Mod with fmod 0 */
        return (EvalNum){.i = in[1].i == -1 && dt != DT_UINT64 &&
                              in[0].i == (dt == DT_INT64 ? INT64_MIN : -(1LL << (8 * dtype_size(dt) - 1)))};
    }
}

/* Can a signed integer operation hit a result C++ leaves undefined? */
static bool elem_may_be_undefined(int code, const EvalPlan *p)
{
    bool float_in = dtype_is_float(p->in[0]->dtype), int_out = !dtype_is_float(p->dtype);
    if (code == E_CAST)
        return float_in && int_out && p->dtype != DT_BOOL;
    if (code == E_POW)
        return int_out;
    return !float_in && (code == E_DIV || (code == E_MOD && !p->attr));
}

/* Is the element near a step of the plan's operation (eval.h, Exactness)?
 * The output is bool: one per element, for elem_flags to scan. */
static EvalNum elem_near(const EvalPlan *p, const EvalNum *in)
{
    int32_t dt = p->in[0]->dtype, to = (int32_t)p->fattr;
    double a = in[0].f, b = p->n_in > 1 ? in[1].f : 0, n;
    switch (p->code) {
    case E_FLOOR: case E_CEIL: return (EvalNum){.i = eval_near_step(dt, a, nearbyint(a))};
    case E_ROUND: return (EvalNum){.i = eval_near_step(dt, a, floor(a) + 0.5)};
    case E_SIGN: return (EvalNum){.i = eval_near_step(dt, a, 0)};
    case E_CAST: /* truncation jumps at every integer but 0 */
        n = nearbyint(a);
        return (EvalNum){.i = to == DT_BOOL ? eval_near_step(dt, a, 0)
                                            : n != 0 && eval_near_step(dt, a, n)};
    case E_MOD: /* fmod jumps where a is a multiple of b */
        n = fmod(a, b);
        return (EvalNum){.i = eval_near_step(dt, a, a - n) ||
                              eval_near_step(dt, a, a - n + copysign(fabs(b), a))};
    case E_ISINF: return (EvalNum){.i = isinf(a) || eval_near_step(dt, fabs(a), elem_float_max(dt))};
    case E_POW: /* an integer base to an inexact float power, truncated */
        dt = p->in[1]->dtype;
        n = pow((double)in[0].i, b);
        return (EvalNum){.i = nearbyint(n) != 0 && eval_near_step(dt, n, nearbyint(n))};
    default: return (EvalNum){.i = eval_near_step(dt, a, b)}; /* comparisons */
    }
}

/* Does fn flag some element of the plan's operation (elem_near,
 * elem_undefined)? 1 yes, 0 no, <0 when the scan failed (-1 out of memory,
 * else c->why set). The flags are computed in memory whatever their size
 * (the scan reads them at once), as output 0, which is then cleared. */
static int elem_flags(EvalCtx *c, const EvalPlan *p, EvalElemFn fn)
{
    EvalPlan q = *p;
    q.dtype = DT_BOOL;
    q.fn = fn;
    q.fattr = p->dtype; /* the operation's output type: Cast's target */
    size_t lazy_from = c->lazy_from;
    c->lazy_from = SIZE_MAX;
    int rc = eval_plan_run(c, &q);
    c->lazy_from = lazy_from;
    const Tensor *flags = c->out[0];
    c->out[0] = NULL;
    if (rc)
        return rc == EVAL_OOM ? -1 : -2;
    const uint8_t *f = flags->data;
    for (size_t i = 0; i < flags->nbytes; i++)
        if (f[i])
            return 1;
    return 0;
}

/* Which kernel results are exact (eval.h, Exactness): the operations with a
 * step check their inputs; +, -, *, /, Sqrt, Reciprocal are correctly
 * rounded on both sides, as are Sum and Mean of two; the float functions,
 * Pow and longer sums round otherwise. */
static int elem_exactness(int code, const EvalPlan *p)
{
    bool float_in = p->float0 || (p->n_in > 1 && dtype_is_float(p->in[1]->dtype));
    switch (code) {
    case E_FLOOR: case E_CEIL: case E_ROUND: case E_SIGN: case E_EQ: case E_LT: case E_GT:
    case E_LE: case E_GE: case E_ISINF:
        return EVAL_CHECKED;
    case E_CAST: case E_MOD:
        return float_in && (code == E_MOD || !dtype_is_float(p->dtype)) ? EVAL_CHECKED
                                                                        : EVAL_KEEPS;
    case E_POW:
        return dtype_is_float(p->dtype) ? EVAL_ROUNDS : EVAL_CHECKED;
    case E_SUM: case E_MEAN:
        return p->n_in > 2 ? EVAL_ROUNDS : EVAL_KEEPS;
    case E_EXP: case E_LOG:
        return EVAL_ROUNDS;
    default:
        return code >= E_SIN && code != E_ISNAN ? EVAL_ROUNDS : EVAL_KEEPS;
    }
}

/* The inputs from `first` on, all present and supported, into ins. */
static int elem_inputs(EvalCtx *c, const Tensor **ins)
{
    if (c->n_in > EVAL_MAX_IN || !c->n_in)
        return eval_decline(c, "too many inputs");
    for (size_t k = 0; k < c->n_in; k++)
        if (!(ins[k] = eval_in(c, k)))
            return eval_decline(c, "an input is absent or of an unsupported type");
    return EVAL_OK;
}

/* out_dt 0: the first input's type. Inputs from same_from on share the type
 * of input same_from (Where's x and y; every input of Add). */
static int elem_run(EvalCtx *c, int code, ElemTakes takes, int32_t out_dt, size_t same_from)
{
    const Tensor *ins[EVAL_MAX_IN];
    int rc = elem_inputs(c, ins);
    if (rc)
        return rc;
    if (!elem_takes(takes, ins[same_from]->dtype))
        return eval_decline(c, "the operation does not take this element type");
    for (size_t k = same_from + 1; k < c->n_in; k++)
        if (ins[k]->dtype != ins[same_from]->dtype && code != E_POW)
            return eval_decline(c, "inputs of different element types");
    if ((code == E_DIV || code == E_MOD) && c->n_in == 2 && (rc = divisor_has_zero(c, ins[1])))
        return rc < 0 ? eval_out_failed(c) : eval_decline(c, "an integer division by zero");
    if (code == E_SIGMOID && c->folding && (rc = sigmoid_input_deep(c, ins[0])))
        return rc < 0 ? eval_out_failed(c)
                      : eval_decline(c, "an input below -17, where onnxruntime's Sigmoid "
                                        "approximation gives 0 or not");
    int64_t dims[EVAL_MAX_RANK];
    int rank = eval_broadcast(ins, c->n_in, dims);
    if (rank < 0)
        return eval_decline(c, "the inputs do not broadcast");
    EvalPlan p;
    eval_plan_init(&p, out_dt ? out_dt : ins[same_from]->dtype, rank, dims, elem_fn);
    p.code = code;
    p.attr = code != E_ISINF ? op_attr_int(c->op, "fmod", 0)
                             : (op_attr_int(c->op, "detect_negative", 1) != 0) |
                                   (op_attr_int(c->op, "detect_positive", 1) != 0) << 1;
    for (size_t k = 0; k < c->n_in; k++)
        eval_plan_broadcast(&p, ins[k]);
    p.float0 = dtype_is_float(ins[0]->dtype);
    c->exact = elem_exactness(code, &p);
    if (elem_may_be_undefined(code, &p) && (rc = elem_flags(c, &p, elem_undefined)))
        return rc == 1 ? eval_decline(c, "a result C++ leaves undefined (a float out of the "
                                         "integer type's range, the minimum divided by -1)")
               : rc == -1 ? EVAL_OOM : EVAL_DECLINE;
    if (c->exact == EVAL_CHECKED && eval_any_inexact(c) && (rc = elem_flags(c, &p, elem_near)))
        return rc == 1 ? eval_decline_step(c) : rc == -1 ? EVAL_OOM : EVAL_DECLINE;
    return eval_plan_run(c, &p);
}

#define ELEM_KERNEL(name, code, takes, out_dt) \
    static int name(EvalCtx *c) { return elem_run(c, code, takes, out_dt, 0); }

ELEM_KERNEL(eval_add, E_ADD, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_sub, E_SUB, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_mul, E_MUL, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_div, E_DIV, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_pow, E_POW, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_min, E_MIN, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_max, E_MAX, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_sum, E_SUM, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_mean, E_MEAN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_neg, E_NEG, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_abs, E_ABS, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_sqrt, E_SQRT, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_reciprocal, E_RECIP, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_exp, E_EXP, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_log, E_LOG, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_floor, E_FLOOR, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_ceil, E_CEIL, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_relu, E_RELU, TAKES_NUMBERS, 0)
ELEM_KERNEL(eval_sign, E_SIGN, TAKES_NUMBERS, 0)
/* Strings compare in eval_string.c. */
static int eval_equal(EvalCtx *c)
{
    if (c->n_in == 2 && c->in[0] && c->in[0]->dtype == DT_STRING)
        return eval_string_equal(c);
    return elem_run(c, E_EQ, TAKES_ANY, DT_BOOL, 0);
}
ELEM_KERNEL(eval_less, E_LT, TAKES_NUMBERS, DT_BOOL)
ELEM_KERNEL(eval_greater, E_GT, TAKES_NUMBERS, DT_BOOL)
ELEM_KERNEL(eval_less_equal, E_LE, TAKES_NUMBERS, DT_BOOL)
ELEM_KERNEL(eval_greater_equal, E_GE, TAKES_NUMBERS, DT_BOOL)
ELEM_KERNEL(eval_and, E_AND, TAKES_BOOLS, DT_BOOL)
ELEM_KERNEL(eval_or, E_OR, TAKES_BOOLS, DT_BOOL)
ELEM_KERNEL(eval_xor, E_XOR, TAKES_BOOLS, DT_BOOL)
ELEM_KERNEL(eval_not, E_NOT, TAKES_BOOLS, DT_BOOL)
ELEM_KERNEL(eval_sin, E_SIN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_cos, E_COS, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_tan, E_TAN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_asin, E_ASIN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_acos, E_ACOS, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_atan, E_ATAN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_sinh, E_SINH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_cosh, E_COSH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_asinh, E_ASINH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_acosh, E_ACOSH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_atanh, E_ATANH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_tanh, E_TANH, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_sigmoid, E_SIGMOID, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_erf, E_ERF, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_softsign, E_SOFTSIGN, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_softplus, E_SOFTPLUS, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_round, E_ROUND, TAKES_FLOATS, 0)
ELEM_KERNEL(eval_isnan, E_ISNAN, TAKES_FLOATS, DT_BOOL)
ELEM_KERNEL(eval_isinf, E_ISINF, TAKES_FLOATS, DT_BOOL)

static int eval_mod(EvalCtx *c)
{
    const Tensor *a = eval_in(c, 0);
    if (a && dtype_is_float(a->dtype) && !op_attr_int(c->op, "fmod", 0))
        return eval_decline(c, "float Mod needs fmod=1");
    return elem_run(c, E_MOD, TAKES_NUMBERS, 0, 0);
}

static int eval_where(EvalCtx *c)
{
    const Tensor *cond = eval_in(c, 0);
    if (c->n_in != 3 || !cond || cond->dtype != DT_BOOL)
        return eval_decline(c, "Where needs a bool condition and two values");
    return elem_run(c, E_WHERE, TAKES_ANY, 0, 1);
}

static int cast_to(EvalCtx *c, int32_t to)
{
    if (c->n_in == 1 && c->in[0] && (to == DT_STRING || c->in[0]->dtype == DT_STRING))
        return eval_string_cast(c, to); /* text: eval_string.c */
    const Tensor *x = c->n_in == 1 ? c->in[0] : NULL;
    if (eval_lowp_type(to) || (x && eval_lowp_type(x->dtype)))
        return eval_lowp_cast(c, x, to);
    if (c->n_in != 1 || !eval_dtype_ok(to))
        return eval_decline(c, "a cast from or to an unsupported element type");
    return elem_run(c, E_CAST, TAKES_ANY, to, 0);
}

static int eval_cast(EvalCtx *c)
{
    return cast_to(c, (int32_t)op_attr_int(c->op, "to", 0));
}

static int eval_cast_like(EvalCtx *c)
{
    const Tensor *like = c->n_in > 1 && c->in[1] &&
                                 (c->in[1]->dtype == DT_STRING || eval_lowp_type(c->in[1]->dtype))
                             ? c->in[1] : eval_in(c, 1);
    if (!like)
        return eval_decline(c, "CastLike's target type is not a supported tensor");
    c->n_in = 1;
    return cast_to(c, like->dtype);
}

/* The output is the input: its bytes are written again under the new name. */
static int eval_identity(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    if (!x)
        return eval_decline(c, "the input is absent or of an unsupported type");
    c->out[0] = tensor_share(c->arena, x);
    return c->out[0] ? EVAL_OK : EVAL_OOM;
}

/* Does Dropout drop anything: training mode (opset 12's input 2, or
 * is_test = 0 before opset 7) with a ratio above 0? Then it draws random
 * numbers, which no check can compare. -1 when the inputs cannot be read. */
static int dropout_drops(EvalCtx *c)
{
    if (c->opset < 7)
        return op_attr_int(c->op, "is_test", 0) == 0 && op_attr_float(c->op, "ratio", 0.5f) > 0;
    if (c->opset < 12 || c->n_in < 3 || !c->in[2])
        return 0;
    const Tensor *mode = c->in[2];
    const uint8_t *mb = tensor_numel(mode) == 1 ? eval_bytes(c, mode) : NULL;
    if (!mb || mode->dtype != DT_BOOL)
        return -1;
    bool training = eval_load(DT_BOOL, mb).i != 0;
    const Tensor *r = c->n_in > 1 ? c->in[1] : NULL;
    const uint8_t *rb = r && tensor_numel(r) == 1 ? eval_bytes(c, r) : NULL;
    double ratio = !r ? 0.5 : rb ? eval_load(r->dtype, rb).f : -1;
    return training ? (ratio < 0 ? -1 : ratio > 0) : 0;
}

/* Dropout that drops nothing: the input, and a mask of ones (bool from
 * opset 10, the input's type before). */
static int eval_dropout(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    int drops = x ? dropout_drops(c) : -1;
    if (drops)
        return eval_decline(c, drops < 0 ? "unreadable inputs" : "training mode drops values "
                                                                 "at random");
    if (!(c->out[0] = tensor_share(c->arena, x)))
        return EVAL_OOM;
    if (c->n_out < 2)
        return EVAL_OK;
    int32_t mt = c->opset >= 10 ? DT_BOOL : x->dtype;
    Tensor *m = eval_out(c, 1, mt, x->ndims, x->dims);
    if (!m)
        return eval_out_failed(c);
    size_t n = (size_t)tensor_numel(m), size = dtype_size(mt);
    EvalNum one = dtype_is_float(mt) ? (EvalNum){.f = 1} : (EvalNum){.i = 1};
    for (size_t k = 0; k < n; k++)
        eval_store(mt, (uint8_t *)m->data + k * size, one);
    return EVAL_OK;
}

/* Since 7: numpy broadcasting (earlier versions broadcast by attribute). */
static const OpKernel kernels[] = {
    {"", "Add", 7, eval_add}, {"", "Sub", 7, eval_sub}, {"", "Mul", 7, eval_mul},
    {"", "Div", 7, eval_div}, {"", "Pow", 7, eval_pow}, {"", "Mod", 10, eval_mod},
    {"", "Min", 8, eval_min}, {"", "Max", 8, eval_max}, {"", "Sum", 8, eval_sum},
    {"", "Mean", 8, eval_mean}, {"", "Neg", 6, eval_neg}, {"", "Abs", 6, eval_abs},
    {"", "Sqrt", 6, eval_sqrt}, {"", "Reciprocal", 6, eval_reciprocal},
    {"", "Exp", 6, eval_exp}, {"", "Log", 6, eval_log}, {"", "Floor", 6, eval_floor},
    {"", "Ceil", 6, eval_ceil}, {"", "Relu", 6, eval_relu}, {"", "Sign", 9, eval_sign},
    {"", "Equal", 7, eval_equal}, {"", "Less", 7, eval_less}, {"", "Greater", 7, eval_greater},
    {"", "LessOrEqual", 12, eval_less_equal}, {"", "GreaterOrEqual", 12, eval_greater_equal},
    {"", "And", 7, eval_and}, {"", "Or", 7, eval_or}, {"", "Xor", 7, eval_xor},
    {"", "Not", 1, eval_not}, {"", "Where", 9, eval_where}, {"", "Cast", 6, eval_cast},
    {"", "CastLike", 15, eval_cast_like}, {"", "Identity", 1, eval_identity},
    {"", "Dropout", 1, eval_dropout},
    {"", "Sin", 7, eval_sin}, {"", "Cos", 7, eval_cos}, {"", "Tan", 7, eval_tan},
    {"", "Asin", 7, eval_asin}, {"", "Acos", 7, eval_acos}, {"", "Atan", 7, eval_atan},
    {"", "Sinh", 9, eval_sinh}, {"", "Cosh", 9, eval_cosh}, {"", "Asinh", 9, eval_asinh},
    {"", "Acosh", 9, eval_acosh}, {"", "Atanh", 9, eval_atanh}, {"", "Tanh", 6, eval_tanh},
    {"", "Sigmoid", 6, eval_sigmoid}, {"", "Erf", 9, eval_erf},
    {"", "Softsign", 1, eval_softsign}, {"", "Softplus", 1, eval_softplus},
    {"", "Round", 11, eval_round}, {"", "IsNaN", 9, eval_isnan}, {"", "IsInf", 10, eval_isinf},
};

const OpKernelTable eval_elementwise_kernels = {kernels, sizeof kernels / sizeof *kernels, false};
