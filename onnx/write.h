/* write.h - put an encoded model into a file or onto standard output.
 *
 * A file is written to a temporary name in the target's folder and renamed
 * over the target once complete, so a failure never leaves a partial file.
 * Tensors stored as external data stay where they are: when the output goes
 * to another folder, the data files they name are copied (copy_file_range)
 * or hard-linked beside it, so the model keeps working. --external-data moves
 * large initializers into one new data file beside the output instead. Data
 * files are written the same way as the model and renamed before it; see
 * staging.h and, for which existing files may be replaced, external_write.h. */
#ifndef PPQ_WRITE_H
#define PPQ_WRITE_H

#include "../core/ir/graph.h"
#include "source.h"
#include "write_options.h"

/* Why a model is not written to standard output when it is a terminal. */
#define STDOUT_TERMINAL_MSG "refusing to write a binary model to a terminal (use -o FILE or a pipe)"

int onnx_write(const Model *m, const WriteOptions *o, Diag *d);
/* The encoded model in one malloc'd buffer (for tests and fuzzing). */
int onnx_write_mem(const Model *m, uint8_t **buf, size_t *len, Diag *d);
/* Refuses an output path that names the input file itself. */
int check_output_is_not_input(const char *path, const Source *src, Diag *d);

#endif
