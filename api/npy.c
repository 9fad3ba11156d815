/* npy.c - a NumPy .npy file (numpy.save's format, versions 1 to 3) as a
 * core tensor, for --check-inputs: the magic, a little-endian header length,
 * a Python dict literal giving 'descr', 'fortran_order' and 'shape', then the
 * elements in C order. Only little-endian (or byte-sized) numeric and bool
 * element types are read; anything else is refused, naming the file. */
#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NPY_MAX_HEADER = 1 << 16, NPY_MAX_RANK = 32 };

static const struct {
    const char *descr;
    int32_t dtype;
} NPY_TYPES[] = {
    {"<f4", DT_FLOAT},  {"<f8", DT_DOUBLE}, {"<f2", DT_FLOAT16}, {"|b1", DT_BOOL},
    {"|i1", DT_INT8},   {"|u1", DT_UINT8},  {"<i2", DT_INT16},   {"<u2", DT_UINT16},
    {"<i4", DT_INT32},  {"<u4", DT_UINT32}, {"<i8", DT_INT64},   {"<u8", DT_UINT64},
};

static int npy_bad(Diag *d, const char *path, const char *why)
{
    return diag_set(d, PPQ_EINPUT, "--check-inputs: '%s' is not a .npy file ppqfmt reads: %s",
                    path, why);
}

/* The value after 'key': in the header dict, or NULL. */
static const char *npy_field(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s':", key);
    const char *p = strstr(header, quoted);
    if (!p)
        return NULL;
    p += strlen(quoted);
    while (*p == ' ')
        p++;
    return p;
}

static int32_t npy_dtype(const char *descr)
{
    for (size_t i = 0; i < sizeof NPY_TYPES / sizeof *NPY_TYPES; i++) {
        size_t n = strlen(NPY_TYPES[i].descr);
        if (descr[0] == '\'' && strncmp(descr + 1, NPY_TYPES[i].descr, n) == 0 &&
            descr[n + 1] == '\'')
            return NPY_TYPES[i].dtype;
    }
    return DT_UNDEFINED;
}

/* The dims of "(2, 3)", "(5,)" or "()" into dims; their count, -1 if malformed. */
static int npy_shape(const char *p, int64_t *dims)
{
    if (*p++ != '(')
        return -1;
    int n = 0;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            return n;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || n == NPY_MAX_RANK)
            return -1;
        dims[n++] = v;
        p = end;
    }
}

/* The header dict of the file's first bytes (at most NPY_MAX_HEADER), and
 * where the elements start. */
static int npy_header(FILE *f, const char *path, char *header, long *data_at, Diag *d)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return npy_bad(d, path, "no \\x93NUMPY magic");
    size_t len = pre[8] | (size_t)pre[9] << 8, at = 10;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, f) != 2)
            return npy_bad(d, path, "cut short in its header");
        len |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        at = 12;
    }
    if (len >= NPY_MAX_HEADER || fread(header, 1, len, f) != len)
        return npy_bad(d, path, "a header cut short or over 64 KiB");
    header[len] = 0;
    *data_at = (long)(at + len);
    return 0;
}

int npy_read_file(const char *path, Arena *a, Tensor **out, Diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return diag_set(d, PPQ_EINPUT, "--check-inputs: cannot open '%s'", path);
    char *header = malloc(NPY_MAX_HEADER);
    long data_at = 0;
    int rc = header ? npy_header(f, path, header, &data_at, d)
                    : diag_set(d, PPQ_EINTERNAL, "out of memory");
    const char *descr = rc ? NULL : npy_field(header, "descr");
    const char *order = rc ? NULL : npy_field(header, "fortran_order");
    const char *shape = rc ? NULL : npy_field(header, "shape");
    int64_t dims[NPY_MAX_RANK];
    int nd = shape ? npy_shape(shape, dims) : -1;
    int32_t dtype = descr ? npy_dtype(descr) : DT_UNDEFINED;
    if (!rc && (!descr || !order || nd < 0))
        rc = npy_bad(d, path, "its header lacks descr, fortran_order or shape");
    else if (!rc && strncmp(order, "False", 5) != 0)
        rc = npy_bad(d, path, "Fortran order (save a C-contiguous array)");
    else if (!rc && dtype == DT_UNDEFINED)
        rc = npy_bad(d, path, "an element type other than little-endian numbers or bool");
    Tensor *t = rc ? NULL : tensor_new(a, dtype, (size_t)nd, dims);
    if (!rc && !t)
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
    if (!rc && (fseek(f, data_at, SEEK_SET) != 0 ||
                fread((void *)t->data, 1, t->nbytes, f) != t->nbytes || fgetc(f) != EOF))
        rc = npy_bad(d, path, "its data is not exactly the size its shape says");
    fclose(f);
    free(header);
    if (rc)
        return rc;
    t->name = "";
    *out = t;
    return 0;
}
