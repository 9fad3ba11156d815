/* check_inputs.h - the data sets of --check-inputs=DIR: DIR's own
 * input_0.pb, input_1.pb, ... or, when DIR holds test_data_set_*
 * subfolders (the ONNX backend test layout), each of those in turn. */
#ifndef PPQ_CHECK_INPUTS_H
#define PPQ_CHECK_INPUTS_H

#include "../core/ir/graph.h"

enum { CHECK_MAX_INPUTS = 256, CHECK_MAX_SETS = 1000 };

typedef struct CheckDataSets {
    size_t n;
    char **dirs; /* in numeric order of their suffix; arena-owned */
} CheckDataSets;

/* One data set read: its files' tensors in file order, and their paths;
 * the expected outputs (output_K.pb) only when asked for. */
typedef struct CheckData {
    size_t n, n_out;
    Tensor *t[CHECK_MAX_INPUTS], *out[CHECK_MAX_INPUTS];
    char *path[CHECK_MAX_INPUTS], *out_path[CHECK_MAX_INPUTS];
} CheckData;

/* What the graph declares the value of input_K.pb (output_K.pb) to be: in[K]
 * (out[K]) for K below n_in (n_out), a TYPE_* of graph.h; a tensor past
 * them. A sequence or optional file is read as one only where declared so:
 * its bytes could also pass for a TensorProto's. */
typedef struct CheckKinds {
    const int *in, *out;
    size_t n_in, n_out;
} CheckKinds;

/* The data sets under dir; PPQ_EINPUT when dir cannot be listed. */
int check_data_sets(const char *dir, Arena *a, CheckDataSets *out, Diag *d);
/* The input_K.pb files of one set, K = 0, 1, ... until one is missing;
 * with outputs, its output_K.pb files too; each read as kinds declares. */
int check_data_read(const char *dir, bool outputs, const CheckKinds *kinds, Arena *a,
                    CheckData *out, Diag *d);

#endif
