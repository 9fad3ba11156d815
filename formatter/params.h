/* params.h - what the passes share: reading parameters and BatchNormalization
 * factors, what is known about a value (value.c) and new small parameters
 * (params.c). The Conv/ConvTranspose/Gemm a fusion folds into is affine.h's. */
#ifndef PPQ_PARAMS_H
#define PPQ_PARAMS_H

#include <stdbool.h>
#include <string.h>

#include "../core/infer/facts.h"
#include "../core/ir/graph.h"

/* Is v, stored as a dt element, still a finite number? Folds check their
 * results with it: a value that overflows float16 (or float) would become
 * inf where the model computed a finite number. */
bool dtype_holds(int32_t dt, double v);
/* Are all BatchNormalization factors (bn_factors) finite numbers? */
bool factors_finite(const double *k, const double *s, int64_t channels);
/* Is v an initializer that is also a graph input in an IR >= 4 model: the
 * default of an input a caller may feed, so its value is not the model's to
 * fold? (In IR < 4 every initializer is listed as an input: those are the
 * weights.) */
bool param_overridable(const Var *v);
/* The name of the first input of op from slot `first` on that is such a
 * default (param_overridable), or NULL: a fold declining for it says so. */
const char *overridable_input(const Op *op, size_t first);
/* v's value when v is a parameter (possibly through Identity nodes) whose
 * numeric bytes are available and that no caller can override. */
const Tensor *param_numeric(const Var *v);
/* Does an input of op from slot `first` on read a sparse initializer? Then
 * a fold that needs its values is skipped (it stays sparse), with a warning
 * "<what>: ..." naming op. */
bool sparse_input_blocks(Op *op, size_t first, const char *what);
/* Does an input of op from slot `first` on read a default a caller may
 * override (overridable_input)? Then a fold that needs its value is skipped,
 * with a warning "<what>: '<input>' is a graph input with a default, ..."
 * naming op, so a user sees why the node stayed. */
bool default_input_blocks(Op *op, size_t first, const char *what);
/* The input of the two-input op that is not x; NULL when op does not have
 * exactly two inputs or reads x twice (or not at all). */
Var *match_other(const Op *op, const Var *x);
/* For folding next, an Add or Mul of lin's output and an initializer, into
 * lin (Conv/ConvTranspose/Gemm): default_input_blocks on both. No warning
 * where next's other operand is no initializer (a residual Add): there was
 * nothing to fold. */
bool operand_default_blocks(Op *lin, Op *next);
/* An operator of a quantized graph (QuantizeLinear, DequantizeLinear,
 * QLinear*, ConvInteger, MatMulInteger, MatMulNBits, any domain): the
 * initializers it reads (scales, zero points, quantized weights) stay as the
 * quantizer wrote them, never split, merged or folded. */
bool op_is_quantized(const Op *op);
/* Is v read by such an operator? */
bool param_read_by_quantized(const Var *v);
/* Conv, ConvTranspose or Gemm: the operators fusions fold into. */
bool op_is_linear(const Op *op);
/* The one operation reading v, when v has one use and is no graph output. */
Op *sole_consumer(const Var *v);
/* Gives op's input slot the value t: in place when op is the parameter's only
 * reader, else as a new parameter (named after the old one, or base). */
int op_update_param(Op *op, size_t slot, Tensor *t, const char *base);
/* Inference-form BatchNormalization: one output, no training mode. */
bool bn_inference_form(const Op *bn);
/* y = scale * x + shift per channel, from BN's parameters and epsilon. */
int bn_factors(Arena *a, const Op *bn, int64_t channels, double **scale, double **shift);
/* The words for why a node writing a graph output from its input cannot
 * hand the output name to the input's producer (graph_output_move_refusal). */
const char *kept_output_reason(OutputMoveRefusal why);
/* Whether a reader may be moved to x: not when a later node writes x's name
 * again (a model that is not SSA, de-inplace off), since in the written file
 * a reader placed after that write would read the later value. */
bool readers_may_move_to(const Var *x);
/* The warning text for a node kept because readers_may_move_to failed. */
#define REWRITTEN_LATER "its input's name is written again by a later node (not SSA; " \
                        "de-inplace renames it)"
/* The warning text for a fusion declined because graph_output_move_keeps_order failed. */
#define WRITTEN_BETWEEN "its output's name is also written between the node it folds into " \
                        "and it (not SSA; de-inplace renames it)"
/* "<node name><suffix>" as a base for a new parameter's name. */
const char *param_base_name(const Op *op, const char *suffix);
/* Starts fetching the name-map slots that defining param_base_name(op,
 * suffix) will probe (graph_prefetch_name): a pass converting many
 * operations calls it a few operations ahead. */
void param_base_name_prefetch(const Op *op, const char *suffix);


/* What shape inference knows about v (element type, rank, dims, small
 * integer contents) when the pipeline round began, or NULL: a value a pass
 * made since has none until the next round. */
const InferFact *value_fact(const Var *v);
/* v's element type (0 unknown), rank (-1 unknown) and the size of one axis
 * (-1 unknown or symbolic): from its fact, else its parameter or declared
 * type. */
int32_t value_dtype(const Var *v);
int value_rank(const Var *v);
int64_t value_dim(const Var *v, int axis);
/* A number, known (not symbolic, not negative). */
bool dim_known(Dim d);
/* The dim_param for a symbolic dim: a model symbol's own name, else the
 * expression written into buf. */
const char *dim_param_text(const DimTable *dt, Dim d, char *buf, size_t size);
/* The declared type fact f stands for (symbolic dims named by
 * dim_param_text), in arena a; -1 when out of memory. */
int value_type_from_fact(Arena *a, const DimTable *dt, const InferFact *f, TypeInfo *t);
/* A new scalar or 1-D parameter for op's graph. */
Var *new_float_param(Op *op, const char *suffix, int32_t dtype, const double *v, size_t n,
                     bool scalar);
Var *new_int64_param(Op *op, const char *suffix, const int64_t *v, size_t n);

#endif
