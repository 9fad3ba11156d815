/* npy.h - NumPy .npy files as core tensors, for --check-inputs. */
#ifndef PPQ_NPY_H
#define PPQ_NPY_H

#include "../core/ir/graph.h"

/* Reads path (numpy.save's format) into a tensor in a, named "" (it goes to
 * a graph input by position). Little-endian numbers and bool in C order;
 * PPQ_EINPUT naming the file for anything else or a malformed file. */
int npy_read_file(const char *path, Arena *a, Tensor **out, Diag *d);

#endif
