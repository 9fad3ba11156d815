/* external_write.c - which data files an output needs, whether it may
 * replace the files already there, and copying or linking them. */
#include "external_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int external_name_ok(const char *name, Diag *d)
{
    if (!*name || name[0] == '/' || strstr(name, "..") || strchr(name, '/'))
        return diag_set(d, PPQ_EUSAGE, "--external-data takes a file name, written beside the "
                        "output ('%s' is not one)", name);
    return 0;
}

/* --- the input's data files the output still names --- */

typedef struct Refs {
    const EncodeOptions *opt;
    const char **locations; /* distinct files the output still names */
    size_t n, cap;
    Arena *arena;
    bool oom;
} Refs;

static void add_location(Refs *r, const Tensor *t, bool initializer)
{
    bool moves = initializer && r->opt && tensor_moves_out(t, r->opt);
    if (!t->external || !t->wire.len || t->changed || moves)
        return;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->locations[i], t->location) == 0)
            return;
    if (arena_grow(r->arena, (void **)&r->locations, &r->cap, r->n + 1, sizeof *r->locations))
        r->oom = true;
    else
        r->locations[r->n++] = t->location;
}

static int collect(Graph *g, void *ctx)
{
    Refs *r = ctx;
    for (size_t i = 0; i < g->n_params; i++)
        add_location(r, g->params[i]->param, true);
    for (size_t i = 0; i < g->n_ops; i++)
        for (size_t k = 0; !g->ops[i]->removed && k < g->ops[i]->n_attrs; k++) {
            const Attr *a = &g->ops[i]->attrs[k];
            for (size_t j = 0; a->tensors && j < a->n; j++)
                add_location(r, a->tensors[j], false);
        }
    return 0;
}

static int referenced_files(const Model *m, const EncodeOptions *opt, Arena *a, Refs *r, Diag *d)
{
    *r = (Refs){opt, NULL, 0, 0, a, false};
    graph_walk_post(m->graph, collect, r);
    return r->oom ? diag_set(d, PPQ_EINTERNAL, "out of memory") : 0;
}

static int find_new(Graph *g, void *ctx)
{
    bool *found = ctx;
    for (size_t i = 0; i < g->n_params; i++) {
        const Tensor *t = g->params[i]->param;
        *found |= t->external && t->changed && tensor_has_bytes(t);
    }
    return 0;
}

bool model_has_new_external(const Model *m)
{
    bool found = false;
    graph_walk_post(m->graph, find_new, &found);
    return found;
}

int external_check_target(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                          Diag *d)
{
    Arena a = {0};
    Refs r;
    int rc = referenced_files(m, opt, &a, &r, d);
    if (!rc && strcmp(wo->path, "-") == 0 && (r.n || wo->external_data || model_has_new_external(m)))
        rc = diag_set(d, PPQ_EUSAGE, "the model uses external data files, which cannot go to "
                      "standard output; use -o FILE");
    arena_free(&a);
    return rc;
}

/* --- ownership: the data files the model now at the output path names --- */

typedef struct FileId {
    dev_t dev;
    ino_t ino;
} FileId;

typedef struct Owned {
    const char *dir; /* the output's folder: locations are relative to it */
    FileId *ids;
    size_t n, cap;
    Arena *arena;
} Owned;

/* The fields on the way from a ModelProto to a TensorProto's external_data
 * (onnx.proto numbers): graphs, nodes, attributes, sparse tensors, training
 * info and functions hold tensors; T_EXTERNAL leads to a location entry. */
enum MsgKind { K_MODEL, K_GRAPH, K_NODE, K_ATTR, K_TENSOR, K_SPARSE, K_TRAINING, K_FUNCTION,
               K_ENTRY };
static const struct {
    unsigned char from;
    unsigned char field;
    unsigned char to;
} owned_paths[] = {
    {K_MODEL, 7, K_GRAPH},    {K_MODEL, 20, K_TRAINING}, {K_MODEL, 25, K_FUNCTION},
    {K_TRAINING, 1, K_GRAPH}, {K_TRAINING, 2, K_GRAPH},  {K_FUNCTION, 7, K_NODE},
    {K_GRAPH, 1, K_NODE},     {K_GRAPH, 5, K_TENSOR},    {K_GRAPH, 15, K_SPARSE},
    {K_NODE, 5, K_ATTR},      {K_ATTR, 5, K_TENSOR},     {K_ATTR, 6, K_GRAPH},
    {K_ATTR, 10, K_TENSOR},   {K_ATTR, 11, K_GRAPH},     {K_ATTR, 22, K_SPARSE},
    {K_ATTR, 23, K_SPARSE},   {K_SPARSE, 1, K_TENSOR},   {K_SPARSE, 2, K_TENSOR},
    {K_TENSOR, 13, K_ENTRY},
};
enum { OWNED_MAX_DEPTH = 512 }; /* message levels: 64 nested graphs take about 200 */

static void owned_add_location(Owned *o, Bytes entry)
{
    WireReader r = wire_reader(entry);
    WireField f;
    Bytes key = {0}, value = {0};
    while (wire_next(&r, &f) == 1)
        if (f.wt == WT_LEN && (f.num == 1 || f.num == 2))
            *(f.num == 1 ? &key : &value) = f.data;
    char path[2 * PATH_MAX];
    struct stat st;
    if (key.len != 8 || memcmp(key.ptr, "location", 8) || value.len >= PATH_MAX ||
        memchr(value.ptr, 0, value.len))
        return;
    snprintf(path, sizeof path, "%s/%.*s", o->dir, (int)value.len, (const char *)value.ptr);
    if (stat(path, &st) == 0 &&
        !arena_grow(o->arena, (void **)&o->ids, &o->cap, o->n + 1, sizeof *o->ids))
        o->ids[o->n++] = (FileId){st.st_dev, st.st_ino};
}

/* Walks one message of the given kind; stops quietly at malformed bytes
 * (the existing file then owns fewer files, which only refuses more). */
static void owned_walk(Owned *o, Bytes msg, enum MsgKind kind, int depth)
{
    if (kind == K_ENTRY) {
        owned_add_location(o, msg);
        return;
    }
    WireReader r = wire_reader(msg);
    WireField f;
    while (depth < OWNED_MAX_DEPTH && wire_next(&r, &f) == 1)
        for (size_t i = 0; f.wt == WT_LEN && i < sizeof owned_paths / sizeof *owned_paths; i++)
            if (owned_paths[i].from == kind && owned_paths[i].field == f.num)
                owned_walk(o, f.data, (enum MsgKind)owned_paths[i].to, depth + 1);
}

/* The files the model at path (if any) names as external data. */
static void owned_files(Owned *o, const char *path, const char *dir, Arena *a)
{
    *o = (Owned){dir, NULL, 0, 0, a};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            owned_walk(o, (Bytes){p, (size_t)st.st_size}, K_MODEL, 0);
            munmap(p, (size_t)st.st_size);
        }
    }
    close(fd);
}

static bool owned_has(const Owned *o, const struct stat *st)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->ids[i].dev == st->st_dev && o->ids[i].ino == st->st_ino)
            return true;
    return false;
}

/* --- the plan --- */

static int plan_add(DataPlan *p, Arena *a, const char *name, const char *dir, const char *src_dir,
                    Diag *d)
{
    if (arena_grow(a, (void **)&p->t, &p->cap, p->n + 1, sizeof *p->t))
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    DataTarget *t = &p->t[p->n++];
    size_t len = strlen(dir) + strlen(name) + 2;
    *t = (DataTarget){name, arena_alloc(a, len), NULL, false};
    if (src_dir)
        t->src = arena_alloc(a, strlen(src_dir) + strlen(name) + 2);
    if (!t->path || (src_dir && !t->src))
        return diag_set(d, PPQ_EINTERNAL, "out of memory");
    snprintf(t->path, len, "%s/%s", dir, name);
    if (src_dir)
        sprintf(t->src, "%s/%s", src_dir, name);
    return 0;
}

/* Do the files at a and b hold the same bytes? */
static bool same_bytes(const char *a, const char *b)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sa, sb;
    bool same = fa >= 0 && fb >= 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 &&
                S_ISREG(sb.st_mode) && sa.st_size == sb.st_size;
    enum { BLOCK = 1 << 20 };
    char *buf = same ? malloc(2 * BLOCK) : NULL;
    same = same && buf;
    for (ssize_t n = 1; same && n > 0;) {
        n = read(fa, buf, BLOCK);
        same = n >= 0 && read(fb, buf + BLOCK, (size_t)(n > 0 ? n : 0)) == n &&
               memcmp(buf, buf + BLOCK, (size_t)(n > 0 ? n : 0)) == 0;
    }
    free(buf);
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return same;
}

/* May the output put t in place? An existing file there is replaced only
 * when the output owns it; a copy target that already holds the source's
 * bytes (the same file, or equal bytes) is kept. */
static int plan_check_target(DataTarget *t, const Owned *own, Diag *d)
{
    struct stat st, src;
    if (stat(t->path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode))
        return diag_set(d, PPQ_EOUTPUT, "%s: is a directory; the output's data file cannot go "
                        "there", t->path);
    if (S_ISREG(st.st_mode) && owned_has(own, &st))
        return 0;
    if (t->src && stat(t->src, &src) == 0 && src.st_dev == st.st_dev && src.st_ino == st.st_ino)
        t->keep = true;
    else if (t->src && S_ISREG(st.st_mode) && same_bytes(t->src, t->path))
        t->keep = true;
    if (t->keep)
        return 0;
    return diag_set(d, PPQ_EOUTPUT, "%s: exists and is not a data file of the output (another "
                    "model's?); not replacing it: remove it, or write elsewhere%s", t->path,
                    t->src ? "" : " or choose another --external-data name");
}

/* Two targets with one name, or a data file named like the output itself,
 * would overwrite each other. */
static int plan_check_distinct(const DataPlan *p, const WriteOptions *wo, Diag *d)
{
    const char *base = strrchr(wo->path, '/') ? strrchr(wo->path, '/') + 1 : wo->path;
    struct stat out, st;
    bool out_exists = stat(wo->path, &out) == 0;
    for (size_t i = 0; i < p->n; i++) {
        const DataTarget *t = &p->t[i];
        bool same = strcmp(t->name, base) == 0 ||
                    (out_exists && stat(t->path, &st) == 0 && st.st_dev == out.st_dev &&
                     st.st_ino == out.st_ino);
        if (same && !t->src && wo->external_data)
            return diag_set(d, PPQ_EUSAGE, "--external-data=%s names the output file itself; "
                            "give the data file another name", t->name);
        if (same)
            return diag_set(d, PPQ_EOUTPUT, "%s: the input's data file '%s' would overwrite "
                            "the output; choose another output name", wo->path, t->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->t[j].name, t->name) == 0)
                return diag_set(d, wo->external_data ? PPQ_EUSAGE : PPQ_EOUTPUT,
                                "the data file '%s' for the output is also the name of an "
                                "input data file it still uses; %s", t->name,
                                wo->external_data ? "choose another --external-data name"
                                                  : "use --external-data=FILE");
    }
    return 0;
}

/* --link-external needs the data files and the output's folder on one
 * filesystem. */
static int plan_check_links(const DataPlan *p, const char *out_dir, Diag *d)
{
    struct stat dir, src;
    for (size_t i = 0; i < p->n; i++) {
        const DataTarget *t = &p->t[i];
        if (!t->src || t->keep || stat(out_dir, &dir) || stat(t->src, &src))
            continue;
        if (src.st_dev != dir.st_dev)
            return diag_set(d, PPQ_EOUTPUT, "--link-external: '%s' is on another filesystem "
                            "than '%s'; hard links cannot cross them (copy: drop "
                            "--link-external)", t->src, out_dir);
    }
    return 0;
}

/* Adds the input's data files the output names, when the output goes to
 * another folder (in the same folder they are shared as they are). */
static int plan_copies(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                       const char *out_dir, DataPlan *p, Arena *a, Diag *d)
{
    char in_real[PATH_MAX], out_real[PATH_MAX];
    Refs r;
    int rc = referenced_files(m, opt, a, &r, d);
    if (rc || !r.n || strcmp(wo->path, "-") == 0)
        return rc;
    if (!wo->in_dir || !realpath(wo->in_dir, in_real) || !realpath(out_dir, out_real))
        return diag_set(d, PPQ_EOUTPUT, "cannot resolve the input or output folder");
    for (size_t i = 0; !rc && i < r.n && strcmp(in_real, out_real) != 0; i++) {
        if (strchr(r.locations[i], '/')) /* keep the layout simple and contained */
            return diag_set(d, PPQ_EOUTPUT, "external data '%s' is in a subfolder; write the "
                            "output into the input's folder or use --external-data",
                            r.locations[i]);
        char *src_dir = arena_strdup(a, in_real);
        rc = src_dir ? plan_add(p, a, r.locations[i], out_dir, src_dir, d)
                     : diag_set(d, PPQ_EINTERNAL, "out of memory");
    }
    return rc;
}

int external_plan(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                  const char *out_dir, DataPlan *p, Arena *a, Diag *d)
{
    *p = (DataPlan){NULL, 0, 0};
    Owned own;
    int rc = opt->location ? plan_add(p, a, opt->location, out_dir, NULL, d) : 0;
    if (!rc)
        rc = plan_copies(m, wo, opt, out_dir, p, a, d);
    if (rc || !p->n)
        return rc;
    rc = plan_check_distinct(p, wo, d);
    owned_files(&own, wo->path, out_dir, a);
    for (size_t i = 0; !rc && i < p->n; i++)
        rc = plan_check_target(&p->t[i], &own, d);
    if (!rc && wo->link_external)
        rc = plan_check_links(p, out_dir, d);
    return rc;
}

/* --- copying --- */

static int copy_fd(int in, int out)
{
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0)
            continue;
        if (errno == EINTR)
            continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
            return -1;
        break; /* not supported between these files: plain copy */
    }
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno != EINTR)
                return -1;
            off += w > 0 ? w : 0;
        }
    }
}

static int stage_copy(const DataTarget *t, Staging *s, Diag *d)
{
    int in = open(t->src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return diag_set(d, PPQ_EOUTPUT, "%s: cannot read: %s", t->src, strerror(errno));
    mode_t mask = umask(0);
    umask(mask);
    int out = staging_create(s, t->path, 0666 & ~mask, d), rc = out < 0 ? d->code : 0;
    if (!rc) {
        bool bad = copy_fd(in, out) != 0;
        int e = errno;
        if (close(out) && !bad)
            bad = true, e = errno;
        if (bad)
            rc = diag_set(d, PPQ_EOUTPUT, "%s: cannot copy external data: %s", t->path,
                          strerror(e));
    }
    close(in);
    return rc;
}

int external_stage_copies(const DataPlan *p, bool link, Staging *s, Diag *d)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < p->n; i++) {
        const DataTarget *t = &p->t[i];
        if (t->src && !t->keep)
            rc = link ? staging_link(s, t->src, t->path, d) : stage_copy(t, s, d);
    }
    return rc;
}
