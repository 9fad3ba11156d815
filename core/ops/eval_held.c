/* eval_held.c - making, copying and naming the interpreter's sequence and
 * optional values (eval_held.h). */
#include <string.h>

#include "eval_held.h"

const EvalHeld *eval_held(const Tensor *t)
{
    return t && (t->dtype == EVAL_DT_SEQUENCE || t->dtype == EVAL_DT_OPTIONAL) ? t->data : NULL;
}

Tensor *eval_held_new(Arena *a, int32_t kind, int32_t elem_type, size_t n)
{
    Tensor *t = arena_alloc(a, sizeof *t);
    EvalHeld *h = arena_alloc(a, sizeof *h);
    const Tensor **items = arena_array(a, n ? n : 1, sizeof *items);
    if (!t || !h || !items)
        return NULL;
    memset(t, 0, sizeof *t);
    memset(items, 0, (n ? n : 1) * sizeof *items);
    *h = (EvalHeld){elem_type, n, items};
    t->dtype = kind;
    t->data = h;
    t->name = "";
    return t;
}

Tensor *eval_value_copy(Arena *a, const Tensor *t)
{
    const EvalHeld *h = eval_held(t);
    if (!h)
        return tensor_copy(a, t);
    Tensor *c = eval_held_new(a, t->dtype, h->elem_type, h->n);
    EvalHeld *ch = c ? (EvalHeld *)c->data : NULL;
    for (size_t i = 0; ch && i < h->n; i++)
        if (!(ch->items[i] = eval_value_copy(a, h->items[i])))
            return NULL;
    return c;
}

const char *eval_value_kind(const Tensor *t)
{
    return !t ? "nothing" : t->dtype == EVAL_DT_SEQUENCE ? "sequence"
           : t->dtype == EVAL_DT_OPTIONAL ? "optional" : "tensor";
}
