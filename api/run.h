/* run.h - format one model as the options say (load, cut, raise the opset,
 * run the passes, write), for the command line and the library alike. */
#ifndef PPQ_RUN_H
#define PPQ_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "../core/ir/tensor.h"
#include "options.h"

/* The formatted model in one malloc'd buffer. */
typedef struct RunBuffer {
    uint8_t *buf;
    size_t len;
} RunBuffer;

/* Where the model comes from and where it and the report go. */
typedef struct RunIO {
    const Bytes *in_mem; /* the model's bytes; NULL: the file o->input */
    RunBuffer *out_mem;  /* the model into memory; NULL: to options_output(o) */
    FILE *report;        /* warnings and the report (stderr for the command line); NULL: none */
} RunIO;

/* Formats one model; 0 or the exit code, with the message in d (it starts
 * with the input's name when the model is at fault). Thread-safe for
 * separate options and models. */
int run_format(const Options *o, const RunIO *io, Diag *d);

#endif
