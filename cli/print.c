/* print.c - --print: the graph as an aligned table, in the spirit of
 * torch.fx's print_tabular. One row per graph input, initializer, node and
 * graph output; subgraphs follow their owner, each under a heading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

enum { COLS = 5, CELL = 96 };
typedef struct Row {
    char cell[COLS][CELL];
} Row;

typedef struct Table {
    Row *rows;
    size_t n, cap;
} Table;

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

/* Appends names to a cell, shortening with "..." when it is full. */
static void join_names(char *cell, Var *const *vars, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n && len < CELL; i++) {
        const char *name = vars[i] ? vars[i]->name : "";
        int w = snprintf(cell + len, CELL - len, "%s%s", i ? ", " : "", name);
        len += w > 0 ? (size_t)w : 0;
    }
    if (len >= CELL)
        memcpy(cell + CELL - 4, "...", 4);
}

static void type_text(char *cell, const TypeInfo *t, const Tensor *value)
{
    int32_t dt = value ? value->dtype : t->elem_type;
    size_t len = (size_t)snprintf(cell, CELL, "%s", dt ? dtype_name(dt) : "?");
    int rank = value ? (int)value->ndims : t->rank;
    const int64_t *dims = value ? value->dims : t->dims;
    if (rank < 0)
        return;
    for (int i = 0; i < rank && len < CELL; i++) {
        int w = dims[i] >= 0 ? snprintf(cell + len, CELL - len, "%s%lld", i ? "," : "[",
                                        (long long)dims[i])
                             : snprintf(cell + len, CELL - len, "%s?", i ? "," : "[");
        len += w > 0 ? (size_t)w : 0;
    }
    if (len < CELL)
        snprintf(cell + len, CELL - len, "%s", rank ? "]" : "[]");
}

static void fill(Row *r, const char *kind, const char *name, const char *type)
{
    snprintf(r->cell[0], CELL, "%s", kind);
    snprintf(r->cell[1], CELL, "%s", name);
    snprintf(r->cell[2], CELL, "%s", type);
}

static int build(Table *t, const Graph *g)
{
    Row *r = add_row(t);
    if (!r)
        return -1;
    fill(r, "kind", "name", "type");
    snprintf(r->cell[3], CELL, "inputs");
    snprintf(r->cell[4], CELL, "outputs");
    for (size_t i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i].removed || !(r = add_row(t)))
            continue;
        fill(r, "input", g->inputs[i].var->name, "");
        type_text(r->cell[2], &g->inputs[i].var->type, NULL);
    }
    for (size_t i = 0; i < g->n_params; i++) {
        if (!(r = add_row(t)))
            return -1;
        fill(r, "param", g->params[i]->name, "");
        type_text(r->cell[2], &g->params[i]->type, g->params[i]->param);
    }
    for (size_t i = 0; i < g->n_ops; i++) {
        const Op *op = g->ops[i];
        if (op->removed || !(r = add_row(t)))
            continue;
        fill(r, "node", op->name, op->type);
        join_names(r->cell[3], op->inputs, op->n_inputs);
        join_names(r->cell[4], op->outputs, op->n_outputs);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        if (!(r = add_row(t)))
            return -1;
        fill(r, "output", g->outputs[i].var->name, "");
        type_text(r->cell[2], &g->outputs[i].var->type, NULL);
    }
    return 0;
}

static void print_table(const Table *t, FILE *f)
{
    size_t width[COLS] = {0};
    for (size_t i = 0; i < t->n; i++)
        for (int c = 0; c < COLS; c++) {
            size_t w = strlen(t->rows[i].cell[c]);
            width[c] = w > width[c] ? w : width[c];
        }
    for (size_t i = 0; i < t->n; i++) {
        for (int c = 0; c < COLS; c++)
            if (c < COLS - 1)
                fprintf(f, "%-*s  ", (int)width[c], t->rows[i].cell[c]);
            else
                fprintf(f, "%s\n", t->rows[i].cell[c]);
        if (i == 0) {
            for (int c = 0; c < COLS; c++)
                for (size_t k = 0; k < width[c] + (c < COLS - 1 ? 2 : 0); k++)
                    fputc(k < width[c] ? '-' : ' ', f);
            fputc('\n', f);
        }
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
