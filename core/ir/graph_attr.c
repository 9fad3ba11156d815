/* graph_attr.c - an operation's attributes: reading them with their
 * defaults, and setting or removing one (which marks the node for
 * re-encoding). */
#include "graph.h"
#include "graph_internal.h"

#include <string.h>

Attr *op_attr(const Op *op, const char *name)
{
    for (size_t i = 0; i < op->n_attrs; i++)
        if (strcmp(op->attrs[i].name, name) == 0)
            return &op->attrs[i];
    return NULL;
}

int64_t op_attr_int(const Op *op, const char *name, int64_t fallback)
{
    Attr *a = op_attr(op, name);
    return a && a->type == ATTR_INT ? a->i : fallback;
}

long op_attr_ints(const Op *op, const char *name, int64_t *v, size_t cap)
{
    const Attr *a = op_attr(op, name);
    if (!a || a->type != ATTR_INTS || a->n > cap)
        return -1;
    attr_copy_ints(a, v);
    return (long)a->n;
}

int op_attr_ints_or(const Op *op, const char *name, int64_t *v, size_t n, int64_t fallback)
{
    const Attr *a = op_attr(op, name);
    for (size_t i = 0; i < n; i++)
        v[i] = fallback;
    if (!a)
        return 0;
    if (a->type != ATTR_INTS || a->n != n)
        return -1;
    attr_copy_ints(a, v);
    return 0;
}

void attr_copy_ints(const Attr *a, int64_t *v)
{
    if (a->n)
        memcpy(v, a->ints, a->n * sizeof *v);
}

float op_attr_float(const Op *op, const char *name, float fallback)
{
    Attr *a = op_attr(op, name);
    return a && a->type == ATTR_FLOAT ? a->f : fallback;
}

/* The attribute called name, emptied for a new value, or a new one. */
static Attr *attr_for_update(Op *op, const char *name, AttrType type)
{
    Attr *a = op_attr(op, name);
    if (!a) {
        a = op_add_attr(op, name, type);
    } else {
        const char *keep = a->name;
        memset(a, 0, sizeof *a);
        a->name = keep;
        a->type = type;
    }
    if (a)
        op_mark_changed(op);
    return a;
}

Attr *op_set_attr_int(Op *op, const char *name, int64_t v)
{
    Attr *a = attr_for_update(op, name, ATTR_INT);
    if (a)
        a->i = v;
    return a;
}

Attr *op_set_attr_float(Op *op, const char *name, float v)
{
    Attr *a = attr_for_update(op, name, ATTR_FLOAT);
    if (a)
        a->f = v;
    return a;
}

Attr *op_set_attr_ints(Op *op, const char *name, const int64_t *v, size_t n)
{
    Attr *a = attr_for_update(op, name, ATTR_INTS);
    int64_t *copy = a ? arena_array(&op->graph->model->arena, n, sizeof *copy) : NULL;
    if (!copy && n)
        return NULL;
    if (n)
        memcpy(copy, v, n * sizeof *copy);
    a->ints = copy;
    a->n = n;
    return a;
}

Attr *op_set_attr_string(Op *op, const char *name, const char *v)
{
    Attr *a = attr_for_update(op, name, ATTR_STRING);
    const char *copy = a ? arena_strdup(&op->graph->model->arena, v) : NULL;
    if (!copy)
        return NULL;
    a->s = (Bytes){(const uint8_t *)copy, strlen(copy)};
    return a;
}

void op_remove_attr(Op *op, const char *name)
{
    Attr *a = op_attr(op, name);
    if (!a)
        return;
    size_t i = (size_t)(a - op->attrs);
    memmove(op->attrs + i, op->attrs + i + 1, (op->n_attrs - i - 1) * sizeof *op->attrs);
    op->n_attrs--;
    op_mark_changed(op);
}
