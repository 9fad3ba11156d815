/* load_input.c - TensorProto files for --check-inputs (load_input.h). The
 * file is read whole, decoded by the model loader's load_tensor into a
 * scratch model, and the result copied into the caller's arena so that
 * nothing points into the file's bytes once it is freed. */
#include "load_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_tensor.h"

enum { INPUT_FILE_MAX = 1 << 30 }; /* a test input past 1 GiB is a mistake */

/* The whole file in malloc'd memory; NULL (d set) when it cannot be read. */
static uint8_t *read_whole(const char *path, size_t *len, Diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_set(d, PPQ_EINPUT, "--check-inputs: cannot open '%s'", path);
        return NULL;
    }
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    uint8_t *buf = size >= 0 && size <= INPUT_FILE_MAX ? malloc((size_t)size + 1) : NULL;
    if (!buf || fseek(f, 0, SEEK_SET) || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        diag_set(d, PPQ_EINPUT, "--check-inputs: cannot read '%s'%s", path,
                 size > INPUT_FILE_MAX ? " (over 1 GiB)" : "");
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)(size > 0 ? size : 0);
    return buf;
}

static Tensor *copy_tensor(const Tensor *t, Arena *a)
{
    Tensor *c = tensor_new_packed(a, t->dtype, t->ndims, t->dims);
    if (!c)
        return NULL;
    if (t->nbytes)
        memcpy((void *)c->data, t->data, t->nbytes);
    c->name = arena_strdup(a, t->name);
    return c->name ? c : NULL;
}

static int decode(const char *path, Bytes wire, Arena *a, Tensor **out, Diag *d)
{
    Model *m = model_new();
    if (!m)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    Diag ld = {0};
    Loader L = {.m = m, .d = &ld}; /* no dir: external data is refused */
    Tensor *t = NULL;
    int rc = 0;
    if (load_tensor(&L, wire, &t))
        rc = diag_set(d, ld.code, "--check-inputs: '%s': %s", path, ld.msg);
    else if (t->external || !dtype_packed_bytes(t->dtype, 1) || (t->nbytes && !t->data) ||
             t->nbytes != dtype_packed_bytes(t->dtype, tensor_numel(t)))
        rc = diag_set(d, PPQ_EINPUT, "--check-inputs: '%s': not a tensor --check can use (%s; "
                      "external data, strings, types of no known packing or data that do not match the "
                      "dims: a sequence or map file reads so)", path, dtype_name(t->dtype));
    else if (!(*out = copy_tensor(t, a)))
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
    model_free(m);
    return rc;
}

int onnx_read_tensor_file(const char *path, Arena *a, Tensor **out, Diag *d)
{
    size_t len;
    uint8_t *buf = read_whole(path, &len, d);
    if (!buf)
        return d->code;
    int rc = decode(path, (Bytes){.ptr = buf, .len = len}, a, out, d);
    free(buf);
    return rc;
}
