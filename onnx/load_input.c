/* load_input.c - TensorProto, SequenceProto and OptionalProto files for
 * --check-inputs (load_input.h). The file is read whole, each TensorProto
 * decoded by the model loader's load_tensor into a scratch model, and the
 * result copied into the caller's arena so that nothing points into the
 * file's bytes once it is freed. */
#include "load_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/ops/eval_held.h"
#include "load_tensor.h"
#include "wire.h"

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

/* t copied into a, with its name. */
static Tensor *copy_named(const Tensor *t, Arena *a)
{
    Tensor *c = tensor_copy(a, t);
    if (c && !(c->name = arena_strdup(a, t->name)))
        return NULL;
    return c;
}

/* Strings: usable when there are as many as the dims say. */
static bool usable_strings(const Tensor *t)
{
    return t->dtype == DT_STRING && !t->external && (int64_t)t->n_strings == tensor_numel(t);
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
    else if (!usable_strings(t) &&
             (t->external || !dtype_packed_bytes(t->dtype, 1) || (t->nbytes && !t->data) ||
              t->nbytes != dtype_packed_bytes(t->dtype, tensor_numel(t))))
        rc = diag_set(d, PPQ_EINPUT, "--check-inputs: '%s': not a tensor --check can use (%s; "
                      "external data, types of no known packing or data that do not match the "
                      "dims: a sequence or map file reads so)", path, dtype_name(t->dtype));
    else if (!(*out = copy_named(t, a)))
        rc = diag_set(d, PPQ_EINTERNAL, "out of memory");
    model_free(m);
    return rc;
}

/* SequenceProto and OptionalProto share their field numbers: 1 name,
 * 2 elem_type, 3 tensor(s), 4 sparse tensor(s), 5 sequence(s), 6 map(s),
 * 7 optional(s). */
enum { HELD_NAME = 1, HELD_ELEM_TYPE = 2, HELD_TENSOR = 3, HELD_SEQUENCE = 5 };

static int decode_value(const char *path, Bytes wire, int kind, Arena *a, Tensor **out, Diag *d);

/* The fields of a SequenceProto (or an OptionalProto) wire: its name, and
 * its values (field `field`, at most cap of them) into vals; the count, or
 * -1 when malformed or holding values of another kind. */
static long held_fields(Bytes wire, uint32_t field, Bytes *name, Bytes *vals, size_t cap)
{
    WireReader r = wire_reader(wire);
    WireField f;
    long n = 0;
    int more;
    *name = (Bytes){0};
    while ((more = wire_next(&r, &f)) == 1) {
        if (f.num == HELD_NAME && f.wt == WT_LEN)
            *name = f.data;
        else if (f.num == field && f.wt == WT_LEN && (size_t)n < cap)
            vals[n++] = f.data;
        else if (f.num != HELD_ELEM_TYPE)
            return -1; /* sparse tensors, maps, nested optionals, or too many values */
    }
    return more < 0 ? -1 : n;
}

enum { HELD_MAX_VALUES = 1 << 16 };

/* A SequenceProto of TensorProtos (kind TYPE_SEQUENCE), or an OptionalProto
 * holding a TensorProto or such a SequenceProto (TYPE_OPTIONAL,
 * TYPE_OPTIONAL_SEQUENCE). */
static int decode_held(const char *path, Bytes wire, int kind, Arena *a, Tensor **out, Diag *d)
{
    bool seq = kind == TYPE_SEQUENCE;
    size_t cap = seq ? HELD_MAX_VALUES : 1;
    Bytes name, *vals = malloc(cap * sizeof *vals);
    if (!vals)
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    long n = held_fields(wire, seq || kind == TYPE_OPTIONAL ? HELD_TENSOR : HELD_SEQUENCE, &name,
                         vals, cap);
    Tensor *t = n >= 0 ? eval_held_new(a, seq ? EVAL_DT_SEQUENCE : EVAL_DT_OPTIONAL, 0,
                                       (size_t)n) : NULL;
    int rc = n < 0 ? diag_set(d, PPQ_EINPUT, "--check-inputs: '%s': not a %s of tensors --check "
                              "can read", path, seq ? "SequenceProto" : "OptionalProto")
                   : t ? 0 : diag_set(d, PPQ_EINTERNAL, "out of memory");
    EvalHeld *h = t ? (EvalHeld *)t->data : NULL;
    for (long i = 0; !rc && i < n; i++)
        rc = decode_value(path, vals[i], seq || kind == TYPE_OPTIONAL ? TYPE_TENSOR : TYPE_SEQUENCE,
                          a, (Tensor **)&h->items[i], d);
    free(vals);
    if (rc)
        return rc;
    const EvalHeld *inner = n ? eval_held(h->items[0]) : NULL;
    h->elem_type = !n ? 0 : inner ? inner->elem_type : h->items[0]->dtype;
    t->name = arena_strndup(a, name.len ? (const char *)name.ptr : "", name.len);
    *out = t;
    return t->name ? 0 : diag_set(d, PPQ_EINTERNAL, "out of memory");
}

static int decode_value(const char *path, Bytes wire, int kind, Arena *a, Tensor **out, Diag *d)
{
    return kind == TYPE_TENSOR ? decode(path, wire, a, out, d)
                               : decode_held(path, wire, kind, a, out, d);
}

int onnx_read_value_file(const char *path, int kind, Arena *a, Tensor **out, Diag *d)
{
    size_t len;
    uint8_t *buf = read_whole(path, &len, d);
    if (!buf)
        return d->code;
    int rc = decode_value(path, (Bytes){.ptr = buf, .len = len}, kind, a, out, d);
    free(buf);
    return rc;
}

int onnx_read_tensor_file(const char *path, Arena *a, Tensor **out, Diag *d)
{
    return onnx_read_value_file(path, TYPE_TENSOR, a, out, d);
}
