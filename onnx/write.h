/* write.h - put an encoded model into a file or onto standard output.
 *
 * A file is written to a temporary name in the target's folder and renamed
 * over the target once complete, so a failure never leaves a partial file. */
#ifndef PPQ_WRITE_H
#define PPQ_WRITE_H

#include "../core/graph.h"
#include "source.h"

/* path "-" means standard output (refused when it is a terminal). */
int onnx_write(const Model *m, const char *path, Diag *d);
/* The encoded model in one malloc'd buffer (for tests and fuzzing). */
int onnx_write_mem(const Model *m, uint8_t **buf, size_t *len, Diag *d);
/* Refuses an output path that names the input file itself. */
int check_output_is_not_input(const char *path, const Source *src, Diag *d);

#endif
