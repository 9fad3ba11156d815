/* print.c - --print: the graph as an aligned table, in the spirit of
 * torch.fx's print_tabular. One row per graph input, initializer, node and
 * graph output; subgraphs follow their owner, each under a heading. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

enum { COLS = 6, CELL = 96, MAX_LIST = 8 };
typedef struct Row {
    char cell[COLS][CELL];
} Row;

typedef struct Table {
    Row *rows;
    size_t n, cap;
} Table;

/* A cell being filled: appends stop when it is full, and "..." marks the cut. */
typedef struct Cell {
    char *s;
    size_t len;
} Cell;

static void cell_add(Cell *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell_add(Cell *c, const char *fmt, ...)
{
    if (c->len >= CELL - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(c->s + c->len, CELL - c->len, fmt, ap);
    va_end(ap);
    c->len += w > 0 ? (size_t)w : 0;
    if (c->len >= CELL - 1) {
        c->len = CELL - 1;
        memcpy(c->s + CELL - 4, "...", 4);
    }
}

static Row *add_row(Table *t)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        Row *r = realloc(t->rows, cap * sizeof *r);
        if (!r)
            return NULL;
        t->rows = r;
        t->cap = cap;
    }
    Row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static void join_names(char *cell, Var *const *vars, size_t n)
{
    Cell c = {cell, 0};
    for (size_t i = 0; i < n; i++)
        cell_add(&c, "%s%s", i ? ", " : "", vars[i] ? vars[i]->name : "");
}

/* "float[1,3,?,?]": dtype and shape, "?" where unknown. */
static void type_text(Cell *c, const TypeInfo *t, const Tensor *value)
{
    int32_t dt = value ? value->dtype : t->elem_type;
    int rank = value ? (int)value->ndims : t->rank;
    const int64_t *dims = value ? value->dims : t->dims;
    cell_add(c, "%s", dt ? dtype_name(dt) : "?");
    for (int i = 0; i < rank; i++)
        if (dims[i] >= 0)
            cell_add(c, "%s%lld", i ? "," : "[", (long long)dims[i]);
        else
            cell_add(c, "%s?", i ? "," : "[");
    if (rank >= 0)
        cell_add(c, "%s", rank ? "]" : "[]");
}

/* Shorter names for long attribute names that people look for. */
static const char *attr_short(const char *name)
{
    static const char *const names[][2] = {
        {"kernel_shape", "kernel"},
        {"coordinate_transformation_mode", "coord"},
        {"nearest_mode", "nearest"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i][0]) == 0)
            return names[i][1];
    return name;
}

/* "[1,1,2,2]", at most MAX_LIST elements. */
static void attr_list(Cell *c, const Attr *a)
{
    size_t show = a->n < MAX_LIST ? a->n : MAX_LIST;
    cell_add(c, "[");
    for (size_t i = 0; i < show; i++)
        if (a->type == ATTR_INTS)
            cell_add(c, "%s%lld", i ? "," : "", (long long)a->ints[i]);
        else if (a->type == ATTR_FLOATS)
            cell_add(c, "%s%g", i ? "," : "", a->floats[i]);
        else
            cell_add(c, "%s%.*s", i ? "," : "", (int)a->strings[i].len,
                     (const char *)a->strings[i].ptr);
    cell_add(c, "%s]", a->n > show ? ",..." : "");
}

/* "name=value"; tensors show their type, subgraphs are tabled after this one. */
static void attr_text(Cell *c, const Attr *a)
{
    cell_add(c, "%s%s=", c->len ? " " : "", attr_short(a->name));
    switch (a->type) {
    case ATTR_INT: cell_add(c, "%lld", (long long)a->i); break;
    case ATTR_FLOAT: cell_add(c, "%g", a->f); break;
    case ATTR_STRING: cell_add(c, "%.*s", (int)a->s.len, (const char *)a->s.ptr); break;
    case ATTR_INTS:
    case ATTR_FLOATS:
    case ATTR_STRINGS: attr_list(c, a); break;
    case ATTR_TENSOR:
        if (a->n && a->tensors)
            type_text(c, &(TypeInfo){0, -1, NULL}, a->tensors[0]);
        break;
    case ATTR_GRAPH:
    case ATTR_GRAPHS: cell_add(c, "<subgraph>"); break;
    default: cell_add(c, "<%d>", (int)a->type); break;
    }
}

static void fill(Row *r, const char *kind, const char *name, const char *type)
{
    const char *text[] = {kind, name, type};
    for (int c = 0; c < 3; c++)
        cell_add(&(Cell){r->cell[c], 0}, "%s", text[c]);
}

static void fill_value(Row *r, const char *kind, const Var *v)
{
    fill(r, kind, v->name, "");
    type_text(&(Cell){r->cell[2], 0}, &v->type, v->param);
}

static void fill_op(Row *r, const Op *op)
{
    fill(r, "node", op->name, op->type);
    join_names(r->cell[3], op->inputs, op->n_inputs);
    join_names(r->cell[4], op->outputs, op->n_outputs);
    Cell c = {r->cell[5], 0};
    for (size_t k = 0; k < op->n_attrs; k++)
        attr_text(&c, &op->attrs[k]);
}

static int build(Table *t, const Graph *g)
{
    static const char *const head[COLS] = {"kind", "name", "type", "inputs", "outputs",
                                           "attributes"};
    Row *r = add_row(t);
    if (!r)
        return -1;
    for (int c = 0; c < COLS; c++)
        snprintf(r->cell[c], CELL, "%s", head[c]);
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!g->inputs[i].removed && (r = add_row(t)))
            fill_value(r, "input", g->inputs[i].var);
    for (size_t i = 0; i < g->n_params; i++)
        if ((r = add_row(t)))
            fill_value(r, "param", g->params[i]);
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed && (r = add_row(t)))
            fill_op(r, g->ops[i]);
    for (size_t i = 0; i < g->n_outputs; i++)
        if ((r = add_row(t)))
            fill_value(r, "output", g->outputs[i].var);
    return 0;
}

/* Control characters in a name or string would break the alignment. */
static void clean(Table *t)
{
    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < COLS; c++)
            for (char *p = t->rows[i].cell[c]; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                    *p = '?';
}

/* One row, each cell padded to its column's width but the last non-empty one
 * (no trailing blanks). */
static void print_row(const char (*cell)[CELL], const size_t *width, FILE *f)
{
    int last = COLS - 1;
    while (last > 0 && !cell[last][0])
        last--;
    for (int c = 0; c < last; c++)
        fprintf(f, "%-*s  ", (int)width[c], cell[c]);
    fprintf(f, "%s\n", cell[last]);
}

static void print_table(Table *t, FILE *f)
{
    size_t width[COLS] = {0};
    Row rule;
    clean(t);
    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < COLS; c++) {
            size_t w = strlen(t->rows[i].cell[c]);
            width[c] = w > width[c] ? w : width[c];
        }
    for (int c = 0; c < COLS; c++) {
        memset(rule.cell[c], '-', width[c]);
        rule.cell[c][width[c]] = '\0';
    }
    for (size_t i = 0; i < t->n; i++) {
        print_row(t->rows[i].cell, width, f);
        if (i == 0)
            print_row(rule.cell, width, f);
    }
}

static void print_one(const Graph *g, const char *heading, FILE *f)
{
    Table t = {0};
    if (heading)
        fprintf(f, "\n%s\n", heading);
    if (build(&t, g) == 0)
        print_table(&t, f);
    free(t.rows);
    for (size_t i = 0; i < g->n_ops; i++) {
        const Op *op = g->ops[i];
        for (size_t k = 0; !op->removed && k < op->n_attrs; k++)
            for (size_t s = 0; op->attrs[k].graphs && s < op->attrs[k].n; s++) {
                char head[256];
                snprintf(head, sizeof head, "subgraph %s.%s (%s '%s'):", op_label(op),
                         op->attrs[k].name, op->type, op->attrs[k].graphs[s]->name);
                print_one(op->attrs[k].graphs[s], head, f);
            }
    }
}

void print_graph(const Graph *g, FILE *f)
{
    print_one(g, NULL, f);
}
