/* print.c - --print: the graph as an aligned table, in the spirit of
 * torch.fx's print_tabular. One row per graph input, initializer, node and
 * graph output; subgraphs follow their owner, each under a heading. Model text
 * goes through term_safe: escapes made visible, long names cut. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "term.h"

enum { COLS = 6, CELL_COLS = 96, RAW = 1024, MAX_LIST = 8 };
typedef struct Row {
    char *cell[COLS]; /* NULL: empty (or out of memory) */
    size_t width[COLS];
} Row;

typedef struct Table {
    Row *rows;
    size_t n, cap;
} Table;

/* A cell's raw text being built; appends stop when it is full. RAW bytes hold
 * more than CELL_COLS columns, so term_safe cuts it before the raw text ends. */
typedef struct Cell {
    char s[RAW];
    size_t len;
} Cell;

static void cell_add(Cell *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cell_add(Cell *c, const char *fmt, ...)
{
    if (c->len >= RAW - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(c->s + c->len, RAW - c->len, fmt, ap);
    va_end(ap);
    c->len += w > 0 ? (size_t)w : 0;
    if (c->len > RAW - 1)
        c->len = RAW - 1;
}

/* Row r's cell col becomes c's text, made safe and cut to CELL_COLS. */
static void cell_store(Row *r, int col, const Cell *c)
{
    char buf[4 * CELL_COLS + 8];
    r->width[col] = term_safe(buf, sizeof buf, c->s, CELL_COLS);
    r->cell[col] = strdup(buf);
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

static void join_names(Row *r, int col, Var *const *vars, size_t n)
{
    Cell c = {.len = 0};
    for (size_t i = 0; i < n; i++)
        cell_add(&c, "%s%s", i ? ", " : "", vars[i] ? vars[i]->name : "");
    cell_store(r, col, &c);
}

/* "float[N,3,?,?]": dtype and shape, a symbolic dim by its name, "?" where
 * unknown. */
static void type_text(Cell *c, const TypeInfo *t, const Tensor *value)
{
    int32_t dt = value ? value->dtype : t->elem_type;
    int rank = value ? (int)value->ndims : t->rank;
    const int64_t *dims = value ? value->dims : t->dims;
    const char *const *syms = value ? NULL : t->dim_params;
    cell_add(c, "%s", dt ? dtype_name(dt) : "?");
    for (int i = 0; i < rank; i++)
        if (dims[i] >= 0)
            cell_add(c, "%s%lld", i ? "," : "[", (long long)dims[i]);
        else
            cell_add(c, "%s%s", i ? "," : "[", syms && syms[i] ? syms[i] : "?");
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
            type_text(c, &(TypeInfo){0, -1, NULL, NULL}, a->tensors[0]);
        break;
    case ATTR_GRAPH:
    case ATTR_GRAPHS: cell_add(c, "<subgraph>"); break;
    default: cell_add(c, "<%d>", (int)a->type); break;
    }
}

static void fill_text(Row *r, int col, const char *text)
{
    Cell c = {.len = 0};
    cell_add(&c, "%s", text);
    cell_store(r, col, &c);
}

static void fill_value(Row *r, const char *kind, const Var *v)
{
    Cell c = {.len = 0};
    fill_text(r, 0, kind);
    fill_text(r, 1, v->name);
    type_text(&c, &v->type, v->param);
    cell_store(r, 2, &c);
}

static void fill_op(Row *r, const Op *op)
{
    Cell c = {.len = 0};
    fill_text(r, 0, "node");
    fill_text(r, 1, op->name);
    fill_text(r, 2, op->type);
    join_names(r, 3, op->inputs, op->n_inputs);
    join_names(r, 4, op->outputs, op->n_outputs);
    for (size_t k = 0; k < op->n_attrs; k++)
        attr_text(&c, &op->attrs[k]);
    cell_store(r, 5, &c);
}

static int build(Table *t, const Graph *g)
{
    static const char *const head[COLS] = {"kind", "name", "type", "inputs", "outputs",
                                           "attributes"};
    Row *r = add_row(t);
    if (!r)
        return -1;
    for (int c = 0; c < COLS; c++)
        fill_text(r, c, head[c]);
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

/* One row, each cell padded to its column's width but the last non-empty one
 * (no trailing blanks). */
static void print_row(char *const *cell, const size_t *cell_width, const size_t *width, FILE *f)
{
    int last = COLS - 1;
    while (last > 0 && (!cell[last] || !*cell[last]))
        last--;
    for (int c = 0; c < last; c++)
        fprintf(f, "%s%*s  ", cell[c] ? cell[c] : "", (int)(width[c] - cell_width[c]), "");
    fprintf(f, "%s\n", cell[last] ? cell[last] : "");
}

static void print_table(const Table *t, FILE *f)
{
    size_t width[COLS] = {0};
    char rule[COLS][CELL_COLS + 1];
    char *rule_cell[COLS];
    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < COLS; c++)
            if (t->rows[i].width[c] > width[c])
                width[c] = t->rows[i].width[c];
    for (int c = 0; c < COLS; c++) {
        memset(rule[c], '-', width[c]);
        rule[c][width[c]] = '\0';
        rule_cell[c] = rule[c];
    }
    for (size_t i = 0; i < t->n; i++) {
        print_row(t->rows[i].cell, t->rows[i].width, width, f);
        if (i == 0)
            print_row(rule_cell, width, width, f);
    }
}

static void table_free(Table *t)
{
    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < COLS; c++)
            free(t->rows[i].cell[c]);
    free(t->rows);
}

/* "subgraph conv.then_branch (If 'then'):", each name made safe. */
static void print_heading(const Op *op, const Attr *a, const Graph *sub, FILE *f)
{
    fputs("\nsubgraph ", f);
    term_put(f, op_label(op), TERM_NAME_COLS);
    fputc('.', f);
    term_put(f, a->name, TERM_NAME_COLS);
    fputs(" (", f);
    term_put(f, op->type, TERM_NAME_COLS);
    fputs(" '", f);
    term_put(f, sub->name, TERM_NAME_COLS);
    fputs("'):\n", f);
}

void print_graph(const Graph *g, FILE *f)
{
    Table t = {0};
    if (build(&t, g) == 0)
        print_table(&t, f);
    table_free(&t);
    for (size_t i = 0; i < g->n_ops; i++) {
        const Op *op = g->ops[i];
        for (size_t k = 0; !op->removed && k < op->n_attrs; k++)
            for (size_t s = 0; op->attrs[k].graphs && s < op->attrs[k].n; s++) {
                print_heading(op, &op->attrs[k], op->attrs[k].graphs[s], f);
                print_graph(op->attrs[k].graphs[s], f);
            }
    }
}
