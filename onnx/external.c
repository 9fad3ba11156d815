/* external.c - external data: safe loading by mapping (the write half is
 * external_write.c). */
#include "external.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/ir/mapping.h"


enum { T_EXTERNAL_DATA = 13, KV_KEY = 1, KV_VALUE = 2 };

typedef struct Mapped {
    char *real;  /* resolved path */
    Bytes bytes; /* the whole file, mapped */
    int fd;      /* kept open: the writer copies from it */
} Mapped;

struct External {
    char real_dir[PATH_MAX];
    Mapped *files;
    size_t n, cap;
};

static void external_release(void *ctx)
{
    External *x = ctx;
    for (size_t i = 0; i < x->n; i++) {
        if (x->files[i].bytes.len)
            munmap((void *)x->files[i].bytes.ptr, x->files[i].bytes.len);
        close(x->files[i].fd);
        free(x->files[i].real);
    }
    free(x->files);
    free(x);
}

static External *registry(Loader *L)
{
    if (L->ext)
        return L->ext;
    External *x = calloc(1, sizeof *x);
    if (!x || !realpath(L->dir, x->real_dir)) {
        free(x);
        return NULL;
    }
    L->ext = x;
    L->m->release = external_release;
    L->m->release_ctx = x;
    return x;
}

/* A location must name a file inside the model's folder: a relative path
 * whose ".." components, taken lexically, never climb above the folder
 * ("sub/../x.bin" is "x.bin"). Symlinks leading out are refused once the
 * path is resolved (load_external). */
static int check_location(Loader *L, const Tensor *t, const char *loc)
{
    if (!*loc)
        return loader_error(L, "tensor '%s': external data has no location", t->name);
    if (loc[0] == '/')
        return loader_error(L, "tensor '%s': external data location '%s' is an absolute path",
                            t->name, loc);
    long depth = 0; /* folders below the model's */
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            depth--;
        else if (n && !(n == 1 && p[0] == '.'))
            depth++;
        if (depth < 0)
            return loader_error(L, "tensor '%s': external data location '%s' leaves the "
                                "model's folder", t->name, loc);
        p += n + (p[n] == '/');
    }
    return 0;
}

static int map_file(Loader *L, External *x, const Tensor *t, const char *real, Bytes *out)
{
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->files[i].real, real) == 0) {
            *out = x->files[i].bytes;
            return 0;
        }
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a fifo must not block */
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return loader_error(L, "tensor '%s': cannot read external data file '%s': %s", t->name,
                            t->location, strerror(e));
    }
    void *p = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (p == MAP_FAILED) {
        close(fd);
        return loader_error(L, "tensor '%s': cannot map '%s': %s", t->name, t->location,
                            strerror(errno));
    }
    Mapped f = {strdup(real), {p ? p : (const uint8_t *)"", (size_t)st.st_size}, fd};
    Mapped *files = x->n == x->cap ? realloc(x->files, (x->cap * 2 + 4) * sizeof f) : x->files;
    if (!f.real || !files || (p && model_add_mapping(L->m, p, (size_t)st.st_size, fd))) {
        free(f.real);
        if (p)
            munmap(p, (size_t)st.st_size);
        close(fd);
        if (files)
            x->files = files;
        return loader_oom(L);
    }
    if (x->n == x->cap)
        x->cap = x->cap * 2 + 4;
    x->files = files;
    x->files[x->n++] = f;
    *out = f.bytes;
    return 0;
}

static int parse_number(Loader *L, const Tensor *t, const char *key, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-')
        return loader_error(L, "tensor '%s': external data %s '%s' is not a number", t->name,
                            key, v);
    *out = n;
    return 0;
}

/* Reads the location/offset/length entries of t's external_data. */
static int read_entries(Loader *L, Tensor *t, Bytes wire, uint64_t *offset, uint64_t *length,
                        bool *has_length)
{
    WireReader r = wire_reader(wire);
    WireField f;
    t->location = "";
    while (wire_next(&r, &f) == 1) {
        if (f.num != T_EXTERNAL_DATA || f.wt != WT_LEN)
            continue;
        const char *key = "", *value = "";
        WireReader kr = wire_reader(f.data);
        WireField kv;
        while (wire_next(&kr, &kv) == 1) {
            const char **dst = kv.num == KV_KEY ? &key : kv.num == KV_VALUE ? &value : NULL;
            if (dst && kv.wt == WT_LEN && !(*dst = loader_str(L, kv.data)))
                return -1;
        }
        if (strcmp(key, "location") == 0)
            t->location = value;
        else if (strcmp(key, "offset") == 0 && parse_number(L, t, key, value, offset))
            return -1;
        else if (strcmp(key, "length") == 0) {
            if (parse_number(L, t, key, value, length))
                return -1;
            *has_length = true;
        }
    }
    return 0;
}

int load_external(Loader *L, Tensor *t, Bytes wire)
{
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    if (read_entries(L, t, wire, &offset, &length, &has_length) ||
        check_location(L, t, t->location))
        return -1;
    if (!L->dir)
        return loader_error(L, "tensor '%s': external data needs the model's folder; read the "
                            "model from a file, not standard input", t->name);
    External *x = registry(L);
    char path[2 * PATH_MAX], real[PATH_MAX];
    if (!x)
        return loader_error(L, "cannot resolve the model's folder '%s'", L->dir);
    snprintf(path, sizeof path, "%s/%s", L->dir, t->location);
    if (!realpath(path, real))
        return loader_error(L, "tensor '%s': external data file '%s': %s", t->name,
                            t->location, strerror(errno));
    size_t dl = strlen(x->real_dir);
    if (strncmp(real, x->real_dir, dl) != 0 || (real[dl] != '/' && strcmp(x->real_dir, "/")))
        return loader_error(L, "tensor '%s': external data file '%s' leads out of the model's "
                            "folder", t->name, t->location);
    Bytes file = {0};
    if (map_file(L, x, t, real, &file))
        return -1;
    if (offset > file.len || (has_length && length > file.len - offset))
        return loader_error(L, "tensor '%s': external data range %llu+%llu is past the end of "
                            "'%s' (%zu bytes)", t->name, (unsigned long long)offset,
                            (unsigned long long)length, t->location, file.len);
    if (!has_length)
        length = file.len - offset;
    int64_t numel = tensor_numel(t);
    size_t size = dtype_size(t->dtype);
    if (size && ((uint64_t)numel > UINT64_MAX / size || (uint64_t)numel * size != length))
        return loader_error(L, "tensor '%s': external data has %llu bytes, dims declare %lld x "
                            "%zu", t->name, (unsigned long long)length, (long long)numel, size);
    size_t packed = dtype_packed_bytes(t->dtype, numel); /* 4- and 2-bit types */
    if (!size && dtype_packed_bytes(t->dtype, 1) && packed != length)
        return loader_error(L, "tensor '%s': external data has %llu bytes, %lld %s elements pack "
                            "into %zu", t->name, (unsigned long long)length, (long long)numel,
                            dtype_name(t->dtype), packed);
    t->data = file.ptr + offset;
    t->nbytes = (size_t)length;
    return 0;
}
