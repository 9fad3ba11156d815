/* ops.h - the op rules of shape inference, as tables: one OpSchema row per
 * (domain, type, since-version) with the bounds on its input and output
 * counts and infer(), which reads the input facts and the attributes and
 * sets each output's fact through the rule context (core/infer/rule.h).
 * Each ops_*.c file holds one family of rules and exports its table;
 * ops_registry.c gathers them and gives the driver each row as an
 * InferRule (ops_rule()). */
#ifndef PPQ_OPS_H
#define PPQ_OPS_H

#include "../infer/rule.h"

enum { OPS_VARIADIC = INFER_VARIADIC };

struct OpSchema {
    const char *domain; /* "" for the default domain (ai.onnx) */
    const char *type;
    int since;
    uint16_t min_in, max_in, min_out, max_out;
    OpInferFn infer; /* NULL: the rule of the same op's previous version (ops_versions.c) */
};
typedef struct OpSchema OpSchema;

typedef struct OpTable {
    const OpSchema *entries;
    size_t n;
} OpTable;

/* The families (one file each). */
extern const OpTable ops_elementwise_table, ops_conv_table, ops_shape_table,
    ops_reduce_table, ops_pad_resize_table, ops_control_table, ops_quant_rnn_table,
    ops_generate_table, ops_select_table, ops_sequence_table, ops_signal_table,
    ops_text_train_table, ops_contrib_table, ops_versions_table, ops_attention_table,
    ops_image_table;

#endif
