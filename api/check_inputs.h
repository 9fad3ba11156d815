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

/* The data sets under dir; PPQ_EINPUT when dir cannot be listed. */
int check_data_sets(const char *dir, Arena *a, CheckDataSets *out, Diag *d);
/* The input_K.pb files of one set, K = 0, 1, ... until one is missing;
 * with outputs, its output_K.pb files too. */
int check_data_read(const char *dir, bool outputs, Arena *a, CheckData *out, Diag *d);

#endif
