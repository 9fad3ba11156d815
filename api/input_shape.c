/* input_shape.c - --input-shape (input_shape.h). */
#include "input_shape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry of the dims list: N, -1 or ?, or SYM:N. */
static int parse_dim(const char *tok, size_t len, InputShape *s, Diag *d)
{
    size_t i = s->rank;
    const char *colon = memchr(tok, ':', len);
    s->syms[i] = colon ? tok : NULL;
    s->sym_lens[i] = colon ? (size_t)(colon - tok) : 0;
    const char *num = colon ? colon + 1 : tok;
    size_t num_len = len - (size_t)(num - tok);
    if ((num_len == 2 && !strncmp(num, "-1", 2)) || (num_len == 1 && *num == '?')) {
        s->dims[i] = -1;
    } else {
        char buf[32], *end;
        snprintf(buf, sizeof buf, "%.*s", (int)num_len, num);
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        if (!num_len || num_len >= sizeof buf || *end || errno || v < 0 || buf[0] == '+' ||
            buf[0] == ' ')
            return diag_set(d, PPQ_EUSAGE,
                            "--input-shape '%s': '%.*s' is not a size (N, -1 or SYM:N)", s->arg,
                            (int)len, tok);
        s->dims[i] = v;
    }
    if (colon && (!s->sym_lens[i] || s->dims[i] < 0))
        return diag_set(d, PPQ_EUSAGE, "--input-shape '%s': '%.*s' needs a symbol and a size",
                        s->arg, (int)len, tok);
    s->rank++;
    return 0;
}

int input_shape_parse(const char *arg, InputShape *out, Diag *d)
{
    memset(out, 0, sizeof *out);
    out->arg = arg;
    const char *eq = strrchr(arg, '='), *list = eq ? eq + 1 : arg;
    if (eq) {
        out->name = arg;
        out->name_len = (size_t)(eq - arg);
        if (!out->name_len)
            return diag_set(d, PPQ_EUSAGE, "--input-shape '%s': no input name before '='", arg);
    }
    if (!*list)
        return diag_set(d, PPQ_EUSAGE, "--input-shape '%s': no dims (NAME=1,3,224,224)", arg);
    for (const char *tok = list; tok; tok = strchr(tok, ',') ? strchr(tok, ',') + 1 : NULL) {
        if (out->rank == INPUT_SHAPE_MAX_RANK)
            return diag_set(d, PPQ_EUSAGE, "--input-shape '%s': more than %d dims", arg,
                            INPUT_SHAPE_MAX_RANK);
        if (parse_dim(tok, strcspn(tok, ","), out, d))
            return PPQ_EUSAGE;
    }
    return 0;
}

/* --- applying --- */

typedef struct Binding {
    const char *sym;
    int64_t value;
} Binding;

typedef struct Fixer {
    Model *m;
    TypeInfo *types; /* the new type per graph input */
    bool *given;     /* an --input-shape names it */
    Binding *bind;   /* symbols fixed so far */
    size_t n_bind;
    Diag *d;
} Fixer;

static const char *dim_sym(const TypeInfo *t, size_t i)
{
    return t->dim_params && t->dim_params[i] ? t->dim_params[i] : NULL;
}

/* Records that sym is value; PPQ_EUSAGE if it was fixed to another. */
static int bind(Fixer *f, const char *sym, int64_t value)
{
    for (size_t i = 0; i < f->n_bind; i++)
        if (!strcmp(f->bind[i].sym, sym)) {
            if (f->bind[i].value == value)
                return 0;
            return diag_set(f->d, PPQ_EUSAGE,
                            "--input-shape: symbol '%s' is fixed to %lld and to %lld", sym,
                            (long long)f->bind[i].value, (long long)value);
        }
    f->bind[f->n_bind++] = (Binding){sym, value};
    return 0;
}

/* The index of the graph input s names (or the only one), or -1. */
static long find_input(const Fixer *f, const InputShape *s)
{
    const Graph *g = f->m->graph;
    long found = -1, runtime = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const Var *v = g->inputs[i].var;
        if (!v || g->inputs[i].removed)
            continue;
        runtime += !v->param;
        if (s->name ? strlen(v->name) == s->name_len && !strncmp(v->name, s->name, s->name_len)
                    : !v->param)
            found = (long)i;
    }
    if (!s->name && runtime != 1) {
        diag_set(f->d, PPQ_EUSAGE,
                 "--input-shape '%s': the model has %ld inputs; name one (NAME=dims)", s->arg,
                 runtime);
        return -1;
    }
    if (found < 0)
        diag_set(f->d, PPQ_EUSAGE, "--input-shape '%s': the model has no input '%.*s'", s->arg,
                 (int)s->name_len, s->name);
    else if (g->inputs[found].var->param)
        diag_set(f->d, PPQ_EUSAGE, "--input-shape '%s': input '%s' is an initializer", s->arg,
                 g->inputs[found].var->name);
    return found >= 0 && !g->inputs[found].var->param ? found : -1;
}

/* Fixes dim i of input v (type t) to value, checking what was declared. */
static int fix_dim(Fixer *f, const Var *v, TypeInfo *t, size_t i, int64_t value)
{
    const char *sym = dim_sym(t, i);
    if (t->dims[i] >= 0 && t->dims[i] != value)
        return diag_set(f->d, PPQ_EUSAGE, "--input-shape: input '%s' dim %zu is %lld, not %lld",
                        v->name, i, (long long)t->dims[i], (long long)value);
    t->dims[i] = value;
    if (sym) {
        t->dim_params[i] = NULL;
        return bind(f, sym, value);
    }
    return 0;
}

/* A copy of v's declared type with room for rank dims, in the arena. */
static int copy_type(Arena *a, const Var *v, size_t rank, TypeInfo *out)
{
    const TypeInfo *t = &v->type;
    *out = (TypeInfo){t->elem_type, (int)rank, arena_array(a, rank, sizeof(int64_t)),
                      arena_array(a, rank, sizeof(const char *))};
    if (rank && (!out->dims || !out->dim_params))
        return -1;
    for (size_t i = 0; i < rank; i++) {
        out->dims[i] = t->rank >= 0 ? t->dims[i] : -1;
        out->dim_params[i] = t->rank >= 0 ? dim_sym(t, i) : NULL;
    }
    return 0;
}

static int apply_one(Fixer *f, const InputShape *s)
{
    long k = find_input(f, s);
    if (k < 0)
        return PPQ_EUSAGE;
    const Var *v = f->m->graph->inputs[k].var;
    if (f->given[k])
        return diag_set(f->d, PPQ_EUSAGE, "--input-shape: input '%s' is given twice", v->name);
    f->given[k] = true;
    if (v->type.rank >= 0 && (size_t)v->type.rank != s->rank)
        return diag_set(f->d, PPQ_EUSAGE, "--input-shape '%s': input '%s' has rank %d, not %zu",
                        s->arg, v->name, v->type.rank, s->rank);
    TypeInfo *t = &f->types[k];
    if (copy_type(&f->m->arena, v, s->rank, t))
        return diag_set(f->d, PPQ_EINTERNAL, "out of memory");
    for (size_t i = 0; i < s->rank; i++) {
        const char *sym = dim_sym(t, i);
        if (s->syms[i] && (!sym || strlen(sym) != s->sym_lens[i] ||
                           strncmp(sym, s->syms[i], s->sym_lens[i])))
            return diag_set(f->d, PPQ_EUSAGE, "--input-shape '%s': input '%s' dim %zu is %s%s%s, not '%.*s'",
                            s->arg, v->name, i, sym ? "'" : "not symbolic", sym ? sym : "",
                            sym ? "'" : "", (int)s->sym_lens[i], s->syms[i]);
        if (s->dims[i] >= 0 && fix_dim(f, v, t, i, s->dims[i]))
            return PPQ_EUSAGE;
    }
    return 0;
}

/* Fixes the dims of every input declared with a symbol fixed elsewhere. */
static int apply_bindings(Fixer *f)
{
    Graph *g = f->m->graph;
    for (size_t k = 0; k < g->n_inputs; k++) {
        const Var *v = g->inputs[k].var;
        if (!v || v->param || g->inputs[k].removed || v->type.rank < 0)
            continue;
        TypeInfo *t = &f->types[k];
        if (!f->given[k] && copy_type(&f->m->arena, v, (size_t)v->type.rank, t))
            return diag_set(f->d, PPQ_EINTERNAL, "out of memory");
        for (size_t i = 0; i < (size_t)t->rank; i++)
            for (size_t b = 0; dim_sym(t, i) && b < f->n_bind; b++)
                if (!strcmp(dim_sym(t, i), f->bind[b].sym)) {
                    f->given[k] = true;
                    if (fix_dim(f, v, t, i, f->bind[b].value))
                        return PPQ_EUSAGE;
                }
    }
    return 0;
}

int input_shape_apply(Model *m, const InputShape *s, size_t n, Diag *d)
{
    Graph *g = m->graph;
    if (!n)
        return 0;
    size_t max_bind = 0;
    for (size_t i = 0; i < n; i++)
        max_bind += s[i].rank;
    Fixer f = {m, calloc(g->n_inputs + 1, sizeof *f.types), calloc(g->n_inputs + 1, sizeof *f.given),
               calloc(max_bind + 1, sizeof *f.bind), 0, d};
    int rc = f.types && f.given && f.bind ? 0 : diag_set(d, PPQ_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n && !rc; i++)
        rc = apply_one(&f, &s[i]);
    if (!rc)
        rc = apply_bindings(&f);
    for (size_t k = 0; k < g->n_inputs && !rc; k++)
        if (f.given[k])
            graph_retype_input(g, k, f.types[k]);
    free(f.types);
    free(f.given);
    free(f.bind);
    return rc;
}
