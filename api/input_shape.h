/* input_shape.h - --input-shape: fixing the dynamic dims of graph inputs.
 *
 * "NAME=1,3,224,224" gives input NAME that shape; "1,3,224,224" names no
 * input and needs a model with one. An entry of -1 (or ?) keeps that dim as
 * declared; "SYM:N" is N for a dim declared as the symbol SYM (checked). A
 * fixed dim whose declaration named a symbol (batch) fixes that symbol in
 * every graph input, since one name is one size. Shape inference then
 * carries the sizes through the graph. */
#ifndef PPQ_INPUT_SHAPE_H
#define PPQ_INPUT_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/ir/graph.h"

enum { INPUT_SHAPE_MAX_RANK = 64 };

typedef struct InputShape {
    const char *arg;  /* the option's argument, for messages */
    const char *name; /* NULL: the model's only input */
    size_t name_len;
    size_t rank;
    int64_t dims[INPUT_SHAPE_MAX_RANK];      /* -1: keep */
    const char *syms[INPUT_SHAPE_MAX_RANK];  /* "SYM:N": SYM (not terminated) */
    size_t sym_lens[INPUT_SHAPE_MAX_RANK];
} InputShape;

/* Parses one --input-shape argument; PPQ_EUSAGE with a message on error. */
int input_shape_parse(const char *arg, InputShape *out, Diag *d);
/* Applies the shapes to m's graph inputs. PPQ_EUSAGE naming the input when
 * one is unknown, the rank differs, or a fixed dim contradicts a static one
 * (or a dim fixed twice differently). */
int input_shape_apply(Model *m, const InputShape *s, size_t n, Diag *d);

#endif
