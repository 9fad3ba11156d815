/* check_inputs.c - finding and reading the data sets of --check-inputs
 * (check_inputs.h). The TensorProto files are read by the onnx layer, the
 * .npy files by npy.c; this file only walks folders. */
#include "check_inputs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../onnx/load_input.h"
#include "npy.h"

static const char SET_PREFIX[] = "test_data_set_";

/* The number after test_data_set_, or -1 when name is not a data set. */
static long set_number(const char *name)
{
    size_t p = sizeof SET_PREFIX - 1;
    if (strncmp(name, SET_PREFIX, p) != 0 || !name[p])
        return -1;
    char *end;
    long v = strtol(name + p, &end, 10);
    return *end || v < 0 ? -1 : v;
}

static int by_set_number(const void *x, const void *y)
{
    const char *a = strrchr(*(char *const *)x, '/') + 1, *b = strrchr(*(char *const *)y, '/') + 1;
    long u = set_number(a), v = set_number(b);
    return u < v ? -1 : u > v;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int check_data_sets(const char *dir, Arena *a, CheckDataSets *out, Diag *d)
{
    DIR *h = opendir(dir);
    if (!h)
        return diag_set(d, PPQ_EINPUT, "--check-inputs: cannot open the folder '%s'", dir);
    out->n = 0;
    out->dirs = arena_array(a, CHECK_MAX_SETS, sizeof *out->dirs);
    struct dirent *e;
    int rc = out->dirs ? 0 : diag_set(d, PPQ_EINTERNAL, "out of memory");
    while (!rc && (e = readdir(h))) {
        if (set_number(e->d_name) < 0)
            continue;
        char *path = arena_concat(a, dir, strlen(dir), "/", 1);
        path = path ? arena_concat(a, path, strlen(path), e->d_name, strlen(e->d_name)) : NULL;
        if (!path)
            rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
        else if (!is_dir(path))
            continue;
        else if (out->n == CHECK_MAX_SETS)
            rc = diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' holds more than %d data sets",
                          dir, CHECK_MAX_SETS);
        else
            out->dirs[out->n++] = path;
    }
    closedir(h);
    if (rc)
        return rc;
    if (out->n) {
        qsort(out->dirs, out->n, sizeof *out->dirs, by_set_number);
        return 0;
    }
    out->dirs[0] = arena_strdup(a, dir); /* the folder is itself the one data set */
    out->n = 1;
    return out->dirs[0] ? 0 : diag_set(d, PPQ_EINTERNAL, "out of memory");
}

/* dir/prefix_K.pb, else dir/prefix_K.npy, into path; false when neither is. */
static bool numbered_file(const char *dir, const char *prefix, size_t k, char *path,
                          size_t size, bool *npy)
{
    struct stat st;
    for (int i = 0; i < 2; i++) {
        *npy = i == 1;
        if ((size_t)snprintf(path, size, "%s/%s_%zu.%s", dir, prefix, k, *npy ? "npy" : "pb") <
                size && stat(path, &st) == 0)
            return true;
    }
    return false;
}

/* The files prefix_K.pb (or .npy) of dir, K = 0, 1, ... until one is missing. */
static int read_numbered(const char *dir, const char *prefix, const int *kinds,
                         size_t n_kinds, Arena *a, Tensor **t, char **paths, size_t *n, Diag *d)
{
    *n = 0;
    for (size_t k = 0;; k++) {
        char path[4096];
        bool npy;
        if (strlen(dir) + 64 > sizeof path)
            return diag_set(d, PPQ_EINPUT, "--check-inputs: path too long under '%s'", dir);
        if (!numbered_file(dir, prefix, k, path, sizeof path, &npy))
            return 0;
        if (k == CHECK_MAX_INPUTS)
            return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' holds more than %d %ss",
                            dir, CHECK_MAX_INPUTS, prefix);
        if (!(paths[k] = arena_strdup(a, path)))
            return diag_set(d, PPQ_EINTERNAL, "out of memory");
        int rc = npy ? npy_read_file(path, a, &t[k], d)
                     : onnx_read_value_file(path, k < n_kinds ? kinds[k] : TYPE_TENSOR, a,
                                            &t[k], d);
        if (rc)
            return rc;
        *n = k + 1;
    }
}

int check_data_read(const char *dir, bool outputs, const CheckKinds *kinds, Arena *a,
                    CheckData *out, Diag *d)
{
    out->n_out = 0;
    int rc = read_numbered(dir, "input", kinds->in, kinds->n_in, a, out->t, out->path, &out->n,
                           d);
    if (!rc && outputs)
        rc = read_numbered(dir, "output", kinds->out, kinds->n_out, a, out->out, out->out_path,
                           &out->n_out, d);
    return rc;
}
