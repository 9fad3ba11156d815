/* eval.h - kernels: an operation's outputs computed from constant inputs, for
 * constant folding (formatter/fold.c).
 *
 * The registry's kernel column: one OpKernel per (domain, type,
 * since-version), resolved against the model's opset as ops_lookup()
 * resolves a rule (ops_kernel() in ops_registry.h). The kernels live in
 * eval_elementwise.c, eval_shape.c, eval_scatter.c, eval_reduce.c, eval_nn.c,
 * eval_conv.c, eval_index.c, eval_attention.c, eval_transformer.c,
 * eval_rnn.c, eval_select.c, eval_activation.c and eval_loss.c, and, for the
 * reference interpreter only (formatter/fold.c never folds their ops),
 * eval_norm.c, eval_resize.c, eval_state.c, eval_sequence.c (sequences
 * and optionals, eval_held.h), eval_string.c, eval_integer.c (bitwise ops,
 * BitShift, BitCast), eval_quant.c (MatMulInteger, ConvInteger, QLinear*,
 * DynamicQuantizeLinear), eval_data.c (NonZero, Compress, Unique,
 * ReverseSequence, TensorScatter), eval_linalg.c (Einsum, Det), eval_grid.c,
 * eval_signal.c, eval_localnorm.c, eval_image.c and eval_roi.c; the
 * helpers they share in eval_ctx.c, and the element plan behind elementwise
 * and data-movement kernels in eval_plan.c. The low-precision types
 * (float8, float4, int4, int2) and Cast/CastLike through them are
 * eval_lowp.c's; the fold leaves those casts to run time.
 *
 * Arithmetic: float inputs are read as double and each result rounded once
 * to the output type. For +, -, *, / and Sqrt that is exactly the float32
 * (or float16, bfloat16) IEEE result onnxruntime computes, because double
 * carries more than twice their precision plus two bits. Sums of many terms
 * (ReduceSum/Mean, MatMul) are accumulated in double and rounded once:
 * onnxruntime's float32 summation order follows its vectorisation, which no
 * fixed order reproduces, and the double sum is the closest to the exact one.
 * Integers compute in int64 and wrap to the output type as C++ does;
 * uint64 is read as its bit pattern and only moved, never computed on.
 * Integer Pow and Mod with fmod=1 go through double as onnxruntime's do;
 * results C++ leaves undefined (a float out of the integer type's range,
 * the minimum divided by -1) decline: onnxruntime's depend on the machine.
 *
 * Exactness: a float result is exact when it is bit for bit what
 * onnxruntime computes (correctly rounded +, -, *, /, Sqrt, data movement,
 * Max/Min/Relu/Abs/Neg of exact inputs), inexact when its rounding may differ
 * (exp, log, tanh, softmax, sums in another order, matmul, pow...; a
 * Tensor's `inexact` flag). An op with a step (Floor, Ceil, Round, Sign,
 * comparisons, float to integer or bool Cast, float Mod, IsInf, ArgMax/ArgMin
 * ties) turns a last-bit difference into a whole one: it declines when an
 * inexact input lies within EVAL_STEP_ULPS units in the last place of the
 * input's type (measured at max(|x|, 1): cancellation near zero leaves an
 * error of that size, not of x's own ulp) of a step, and the fold pass then
 * keeps the inexact chain feeding it for onnxruntime to compute. */
#ifndef PPQ_EVAL_H
#define PPQ_EVAL_H

#include "../ir/graph.h"

enum { EVAL_OK = 0, EVAL_DECLINE = 1, EVAL_OOM = -1 };
enum { EVAL_MAX_RANK = 16, EVAL_MAX_IN = 8 };
/* What a kernel's float results are, given its inputs' exactness (EvalCtx.exact):
 * exact when all inputs are (the default), inexact whatever they are, or
 * exact whatever they are (the kernel checked its inputs lie away from its
 * steps, or it reads only their shapes). */
enum { EVAL_KEEPS = 0, EVAL_ROUNDS = 1, EVAL_CHECKED = 2 };
enum { EVAL_STEP_ULPS = 4 };
/* Why a kernel declined (EvalCtx.refused; EvalCtx.why has the words): the
 * caller reports each its own way, --fold-limit's for a result too large. */
typedef enum EvalRefusal {
    EVAL_REFUSED_OTHER = 0,  /* a dtype, attribute or value the kernel does not handle */
    EVAL_REFUSED_TOO_LARGE,  /* a result, or an input computed while written, over c->limit */
    EVAL_REFUSED_NEAR_STEP,  /* an inexact input lies near a step (eval_decline_step) */
} EvalRefusal;

typedef struct EvalCtx {
    const Op *op;
    int64_t opset; /* of the op's domain */
    const Tensor *const *in; /* n_in entries; NULL for an omitted input */
    size_t n_in;
    Tensor **out; /* n_out entries, NULL on entry; the kernel sets them */
    size_t n_out;
    Arena *arena; /* where results live */
    const Model *model; /* whose mapped input pages a streamed result may let go */
    size_t limit; /* largest result in bytes */
    size_t lazy_from; /* results this large are computed while written, when the kernel can */
    const char *why; /* set by eval_decline */
    int exact; /* EVAL_KEEPS, EVAL_ROUNDS or EVAL_CHECKED, set by the kernel */
    EvalRefusal refused; /* why it declined */
    /* Most multiply-adds a Conv, MatMul or Gemm may do: the fold keeps its
     * results small (EVAL_FOLD_MACS); 0 is no cap, for the interpreter. */
    double max_macs;
    /* Folding, not interpreting: refusals that keep folded values equal to
     * what onnxruntime computes at run time apply (Sigmoid's deep tail). */
    bool folding;
} EvalCtx;

/* The fold's multiply-add cap ("small constants"). */
#define EVAL_FOLD_MACS ((double)(1 << 26))

/* EVAL_OK with every output set, EVAL_DECLINE (c->why says why: a dtype or
 * attribute the kernel does not handle, a result over the limit, a division
 * by zero) or EVAL_OOM. */
typedef int (*OpEvalFn)(EvalCtx *c);

typedef struct OpKernel {
    const char *domain;
    const char *type;
    int since;
    OpEvalFn eval;
} OpKernel;

/* A family of kernels. interpreter_only: the fold pass never runs them
 * (ops_fold_kernel), only the --check interpreter does: ops whose inputs
 * are never constant in a model worth folding, or whose folded values would
 * change what ppqfmt writes for no gain. */
typedef struct OpKernelTable {
    const OpKernel *entries;
    size_t n;
    bool interpreter_only;
} OpKernelTable;

extern const OpKernelTable eval_elementwise_kernels, eval_shape_kernels, eval_reduce_kernels,
    eval_scatter_kernels, eval_nn_kernels, eval_conv_kernels, eval_index_kernels;
extern const OpKernelTable eval_attention_kernels, eval_rnn_kernels, eval_select_kernels,
    eval_loss_kernels, eval_transformer_kernels, eval_activation_kernels;
extern const OpKernelTable eval_norm_kernels, eval_resize_kernels, eval_state_kernels;
extern const OpKernelTable eval_sequence_kernels, eval_string_kernels, eval_integer_kernels;
extern const OpKernelTable eval_quant_kernels, eval_data_kernels, eval_linalg_kernels;
extern const OpKernelTable eval_grid_kernels, eval_signal_kernels, eval_localnorm_kernels;
extern const OpKernelTable eval_image_kernels, eval_roi_kernels;

/* One element: floats as double, integers and bool as int64 (uint64 as its
 * bits). */
typedef union EvalNum {
    double f;
    int64_t i;
} EvalNum;

/* --- shared by the kernels (eval_ctx.c) --- */

/* float, float16, bfloat16, double, int8..int64, uint8..uint64, bool. */
bool eval_dtype_ok(int32_t dt);
/* Element p of type dt, and back (integers keep their low bytes). */
EvalNum eval_load(int32_t dt, const uint8_t *p);
void eval_store(int32_t dt, uint8_t *p, EvalNum v);
/* v (of type from) converted to type to, as a C++ static_cast would:
 * float to integer truncates (saturating; NaN gives 0), anything to bool is
 * "not zero". */
EvalNum eval_convert(EvalNum v, int32_t from, int32_t to);
/* v rounded once to float type dt, as a computation in dt leaves it. */
double eval_round_to(int32_t dt, double v);
/* The lowest and highest value of integer type dt (bool, int2..int64,
 * uint2..uint32); false for any other type. */
bool eval_int_range(int32_t dt, int64_t *lo, int64_t *hi);
int eval_decline(EvalCtx *c, const char *why);
/* Declines because a result would be larger than c->limit. */
int eval_decline_too_large(EvalCtx *c);
/* Are macs multiply-adds more than c->max_macs allows? */
bool eval_over_macs(const EvalCtx *c, double macs);
/* Declines because an inexact input lies near one of the op's steps. */
int eval_decline_step(EvalCtx *c);
/* Does some input of c hold an inexact value? */
bool eval_any_inexact(const EvalCtx *c);
/* Is x, of float type dt and inexact, within EVAL_STEP_ULPS units in the
 * last place (of dt, at max(|x|, |step|, 1)) of step? */
bool eval_near_step(int32_t dt, double x, double step);
/* Input i, when present with a supported dtype (NULL otherwise). */
const Tensor *eval_in(const EvalCtx *c, size_t i);
/* An index tensor: int64 or int32 (Gather, GatherElements, Scatter*). */
bool eval_index_type(const Tensor *t);
/* Element k of index tensor idx (bytes b) for an axis of size d, negative
 * values counted from the end; -1 when out of range. */
int64_t eval_index_at(const Tensor *idx, const uint8_t *b, size_t k, int64_t d);
/* GatherElements/ScatterElements: the element of x (strides xs) that
 * element k of idx (bytes ib, strides is) addresses along axis; -1 when the
 * index is out of range or idx reaches past x on another axis. */
int64_t eval_elements_offset(const Tensor *x, const Tensor *idx, const uint8_t *ib, int axis,
                             size_t k, const int64_t *xs, const int64_t *is);
/* t's element bytes in memory: its data, or a computed tensor's bytes
 * produced now (when at most c->limit). NULL (c->why set) otherwise. */
const uint8_t *eval_bytes(EvalCtx *c, const Tensor *t);
/* t's float elements as doubles in c->arena; NULL when its bytes cannot be
 * had (c->why set) or out of memory. */
double *eval_doubles(EvalCtx *c, const Tensor *t);
/* Input i's integer elements into v (at most cap): the count, or -1 when it
 * is absent, not an integer tensor, or larger. */
long eval_ints(EvalCtx *c, size_t i, int64_t *v, size_t cap);
/* The offset in w (numpy broadcasting, dims aligned on the right) of
 * element e of a tensor of dims[rank]; -1 when w does not broadcast to it. */
int64_t eval_broadcast_offset(const Tensor *w, const int64_t *dims, size_t rank, size_t e);
/* A new in-memory result as output i (zeroed; low-precision types packed);
 * NULL when over the limit (c->why set) or out of memory. */
Tensor *eval_out(EvalCtx *c, size_t i, int32_t dt, size_t rank, const int64_t *dims);
/* EVAL_DECLINE or EVAL_OOM after eval_out returned NULL. */
int eval_out_failed(const EvalCtx *c);
/* The index in names[n] of op's string attribute `name`: 0 when absent
 * (names[0] is the default), n when it is none of them. */
int eval_attr_choice(const Op *op, const char *name, const char *const *names, size_t n);
/* Normalises axis against rank; -1 when out of range. */
int eval_axis(int64_t axis, int rank);
/* Numpy broadcast of n tensors' shapes into dims; its rank, or -1. */
int eval_broadcast(const Tensor *const *ts, size_t n, int64_t *dims);
/* Row-major strides (in elements) of dims. */
void eval_strides(const int64_t *dims, size_t rank, int64_t *strides);

/* The string cases of Equal and Cast/CastLike (eval_string.c), which those
 * kernels hand over; they decline while folding. */
int eval_string_equal(EvalCtx *c);
int eval_string_cast(EvalCtx *c, int32_t to);

/* --- low-precision element types (eval_lowp.c) --- */

/* float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0), float4e2m1, int4, uint4,
 * int2, uint2: held as ONNX stores them (4- and 2-bit ones packed, low bits
 * first). */
bool eval_lowp_type(int32_t dt);
/* The float8 and float4 ones. */
bool eval_lowp_float(int32_t dt);
/* Element k of bytes b of type dt, any type the kernels or eval_lowp_type
 * take: floats as double, integers as int64. */
EvalNum eval_elem(int32_t dt, const uint8_t *b, size_t k);
bool eval_elem_float(int32_t dt);
/* Element k of a low-precision tensor's bytes b, and back: a float encoded
 * to nearest even (saturating or not; round_mode 0 up, 1 down, 2 nearest
 * for E8M0); -1 for a NaN the type cannot hold. An integer keeps its low
 * bits. */
EvalNum eval_lowp_get(int32_t dt, const uint8_t *b, size_t k);
int eval_lowp_put_float(int32_t dt, uint8_t *b, size_t k, double v, bool saturate, int mode);
void eval_lowp_put_int(int32_t dt, uint8_t *b, size_t k, int64_t v);
/* eval_in, low-precision types included. */
const Tensor *eval_in_any(const EvalCtx *c, size_t i);
/* Cast/CastLike of x to `to` when either is a low-precision type (the fold
 * declines them: what it writes stays as before). */
int eval_lowp_cast(EvalCtx *c, const Tensor *x, int32_t to);

/* --- the element plan (eval_plan.c) --- */

/* How output axis a reads input k: coordinate (start + step*j) mod `mod`
 * (no mod when 0) along an input axis of element stride `stride`. */
typedef struct EvalAxis {
    int64_t start, step, mod, stride;
} EvalAxis;

typedef struct EvalPlan EvalPlan;
/* An output element from its inputs' elements (in[k] read with input k's
 * dtype); NULL: output = input 0's element, moved as bytes. */
typedef EvalNum (*EvalElemFn)(const EvalPlan *p, const EvalNum *in);

struct EvalPlan {
    int32_t dtype; /* of the output */
    int rank;
    int64_t dims[EVAL_MAX_RANK];
    size_t n_in;
    const Tensor *in[EVAL_MAX_IN];
    EvalAxis axes[EVAL_MAX_IN][EVAL_MAX_RANK];
    EvalElemFn fn;
    int code;     /* which operation fn computes */
    int64_t attr; /* an attribute fn reads */
    double fattr;
    /* set by eval_plan_run: */
    const uint8_t *bytes[EVAL_MAX_IN];
    size_t in_size[EVAL_MAX_IN], out_size; /* bytes per element */
    bool float0; /* input 0 is a float type */
    const Model *model; /* whose mapped files inputs may be read from */
};

/* Output dims dims[rank] of dtype, with the inputs not set. */
void eval_plan_init(EvalPlan *p, int32_t dtype, int rank, const int64_t *dims, EvalElemFn fn);
/* Adds input t read by numpy broadcasting against the output; -1 when too many. */
int eval_plan_broadcast(EvalPlan *p, const Tensor *t);
/* Adds input t with explicit axis maps; axes[a] for output axis a. */
int eval_plan_mapped(EvalPlan *p, const Tensor *t, const EvalAxis *axes);
/* Output 0 from the plan: in memory, or computed while written when it is
 * at least c->lazy_from bytes. */
int eval_plan_run(EvalCtx *c, const EvalPlan *p);

#endif
