/* graph_check.c - topological order and the use-list consistency check.
 *
 * Both see operations inside subgraphs as part of the operation that owns the
 * subgraph: an If whose branch reads outer value x depends on x's producer. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

/* The operation of g that contains op (op itself, or the owner of the
 * subgraph op lives in), or NULL when op is not inside g. */
static Op *op_in_graph(Op *op, const Graph *g)
{
    while (op && op->graph != g)
        op = op->graph->owner;
    return op;
}

typedef struct Heap {
    size_t *a, n;
} Heap;

static void heap_push(Heap *h, size_t v)
{
    size_t i = h->n++;
    while (i && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
}

static size_t heap_pop(Heap *h)
{
    size_t top = h->a[0], last = h->a[--h->n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= last)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

typedef struct Edges {
    size_t *indeg, *start, *succ; /* successors of op i: succ[start[i]..start[i+1]) */
} Edges;

/* Calls fn(ctx, from, to) for each dependency between live ops of g. */
static void for_each_edge(const Graph *g, void (*fn)(void *, size_t, size_t), void *ctx)
{
    for (size_t i = 0; i < g->n_vars; i++) {
        Var *v = g->vars[i];
        if (v->removed || !v->producer)
            continue;
        for (size_t k = 0; k < v->n_uses; k++) {
            Op *c = op_in_graph(v->uses[k].op, g);
            if (c && !c->removed)
                fn(ctx, v->producer->scratch, c->scratch);
        }
    }
}

static void count_edge(void *ctx, size_t from, size_t to)
{
    Edges *e = ctx;
    e->indeg[to]++;
    e->start[from + 1]++;
}

static void fill_edge(void *ctx, size_t from, size_t to)
{
    Edges *e = ctx;
    e->succ[e->start[from]++] = to;
}

/* A predecessor in g of op (through its inputs or its subgraphs' inputs)
 * that the sort could not place, or NULL. */
static Op *unplaced_pred(const Graph *g, const Op *op, const size_t *indeg)
{
    for (size_t s = 0; s < op->n_inputs; s++) {
        Op *p = op->inputs[s] ? op->inputs[s]->producer : NULL;
        if (p && p->graph == g && indeg[p->scratch])
            return p;
    }
    const Graph *sub;
    for (size_t s = 0; (sub = op_subgraph(op, s)); s++)
        for (size_t i = 0; i < sub->n_ops; i++) {
            Op *p = sub->ops[i]->removed ? NULL : unplaced_pred(g, sub->ops[i], indeg);
            if (p)
                return p;
        }
    return NULL;
}

/* Nodes left unplaced are on a cycle or downstream of one: walking back
 * through unplaced predecessors n times surely lands on the cycle. */
static int report_cycle(const Graph *g, const size_t *indeg, Diag *d)
{
    Op *op = NULL;
    for (size_t i = 0; i < g->n_ops && !op; i++)
        if (indeg[i])
            op = g->ops[i];
    for (size_t step = 0; step < g->n_ops; step++) {
        Op *p = unplaced_pred(g, op, indeg);
        if (!p)
            break;
        op = p;
    }
    return diag_set(d, PPQ_EINPUT, "node '%s' (%s) is part of a cycle", op_label(op), op->type);
}

static int topo(Graph *g, Diag *d, bool apply)
{
    graph_compact(g);
    size_t n = g->n_ops;
    for (size_t i = 0; i < n; i++)
        g->ops[i]->scratch = i;
    Edges e = {calloc(n + 1, sizeof(size_t)), calloc(n + 2, sizeof(size_t)), NULL};
    Heap h = {malloc((n + 1) * sizeof(size_t)), 0};
    Op **order = malloc((n + 1) * sizeof *order);
    int rc = -1;
    if (!e.indeg || !e.start || !h.a || !order)
        goto out;
    for_each_edge(g, count_edge, &e);
    for (size_t i = 0; i < n; i++)
        e.start[i + 1] += e.start[i];
    e.succ = malloc((e.start[n] + 1) * sizeof(size_t));
    if (!e.succ)
        goto out;
    for_each_edge(g, fill_edge, &e); /* advances start[i] to the end of i's run */
    for (size_t i = n; i > 0; i--)
        e.start[i] = e.start[i - 1];
    e.start[0] = 0;
    for (size_t i = 0; i < n; i++)
        if (!e.indeg[i])
            heap_push(&h, i);
    size_t done = 0;
    while (h.n) {
        size_t i = heap_pop(&h);
        order[done++] = g->ops[i];
        for (size_t k = e.start[i]; k < e.start[i + 1]; k++)
            if (--e.indeg[e.succ[k]] == 0)
                heap_push(&h, e.succ[k]);
    }
    if (done != n) {
        report_cycle(g, e.indeg, d);
        goto out;
    }
    for (size_t i = 0; apply && i < n; i++)
        if (g->ops[i] != order[i])
            g->changed = true;
    if (apply)
        memcpy(g->ops, order, n * sizeof *order);
    rc = 0;
out:
    if (rc && !d->code)
        diag_set(d, PPQ_EINTERNAL, "out of memory sorting graph '%s'", g->name);
    free(e.indeg);
    free(e.start);
    free(e.succ);
    free(h.a);
    free(order);
    return rc;
}

int graph_topo_sort(Graph *g, Diag *d)
{
    return topo(g, d, true);
}

int graph_check_acyclic(Graph *g, Diag *d)
{
    return topo(g, d, false);
}

/* The check's state over the whole walk: input slots naming a value and use
 * entries (equal when the lists are exact, see graph_verify), and room to
 * sort a copy of one use list. */
typedef struct Verify {
    Diag *d;
    size_t slots, entries;
    Use *sorted;
    size_t cap;
    bool oom;
} Verify;

static size_t count_uses(const Var *v, const Op *op, size_t slot)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n_uses; i++)
        n += v->uses[i].op == op && v->uses[i].slot == slot;
    return n;
}

/* The slot-by-slot check, quadratic in a value's readers: run only to name
 * the operation once the totals disagree. */
static int verify_slots(const Op *op, Diag *d)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        if (op->inputs[s] && count_uses(op->inputs[s], op, s) != 1)
            return diag_set(d, PPQ_EINTERNAL, "value '%s' use list misses node '%s' slot %zu",
                            op->inputs[s]->name, op->name, s);
    return 0;
}

static int verify_op(const Op *op, Verify *c)
{
    for (size_t s = 0; s < op->n_inputs; s++) {
        Var *v = op->inputs[s];
        if (!v)
            continue;
        if (v->removed || (!v->shadowed && graph_find_var(op->graph, v->name) != v))
            return diag_set(c->d, PPQ_EINTERNAL, "node '%s' input '%s' is not a visible value",
                            op->name, v->name);
        c->slots++;
    }
    for (size_t s = 0; s < op->n_outputs; s++) {
        Var *v = op->outputs[s];
        if (v && (v->producer != op || v->producer_slot != s || v->graph != op->graph))
            return diag_set(c->d, PPQ_EINTERNAL, "value '%s' does not name node '%s' as producer",
                            v->name, op->name);
    }
    return 0;
}

static int use_order(const void *a, const void *b)
{
    const Use *x = a, *y = b;
    uintptr_t p = (uintptr_t)x->op, q = (uintptr_t)y->op;
    if (p != q)
        return p < q ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* A use listed twice, found by sorting a copy (the list's order matters). */
static const Use *twice_listed(const Var *v, Verify *c)
{
    if (v->n_uses < 2)
        return NULL;
    if (v->n_uses > c->cap) {
        Use *grown = realloc(c->sorted, v->n_uses * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return NULL;
        }
        c->sorted = grown;
        c->cap = v->n_uses;
    }
    memcpy(c->sorted, v->uses, v->n_uses * sizeof *v->uses);
    qsort(c->sorted, v->n_uses, sizeof *c->sorted, use_order);
    for (size_t i = 1; i < v->n_uses; i++)
        if (!use_order(&c->sorted[i - 1], &c->sorted[i]))
            return &c->sorted[i];
    return NULL;
}

static int verify_var(const Var *v, Verify *c)
{
    if (v->producer && (v->producer->removed || v->producer->outputs[v->producer_slot] != v))
        return diag_set(c->d, PPQ_EINTERNAL, "value '%s' names a stale producer", v->name);
    for (size_t k = 0; k < v->n_uses; k++) {
        const Use *u = &v->uses[k];
        if (u->op->removed || u->slot >= u->op->n_inputs || u->op->inputs[u->slot] != v)
            return diag_set(c->d, PPQ_EINTERNAL, "value '%s' lists a stale use by '%s'", v->name,
                            u->op->name);
    }
    const Use *dup = twice_listed(v, c);
    if (dup)
        return diag_set(c->d, PPQ_EINTERNAL, "value '%s' lists node '%s' slot %zu twice",
                        v->name, dup->op->name, (size_t)dup->slot);
    c->entries += v->n_uses;
    if (!v->shadowed && namemap_get(&v->graph->by_name, v->name) != v)
        return diag_set(c->d, PPQ_EINTERNAL, "value '%s' is not found by its name", v->name);
    return 0;
}

static int verify_one(Graph *g, void *ctx)
{
    Verify *c = ctx;
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed && verify_op(g->ops[i], c))
            return -1;
    for (size_t i = 0; i < g->n_vars; i++)
        if (!g->vars[i]->removed && verify_var(g->vars[i], c))
            return -1;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i].var->removed)
            return diag_set(c->d, PPQ_EINTERNAL, "graph output '%s' was dropped",
                            g->outputs[i].var->name);
    return 0;
}

static int name_missing_use(Graph *g, void *ctx)
{
    for (size_t i = 0; i < g->n_ops; i++)
        if (!g->ops[i]->removed && verify_slots(g->ops[i], ctx))
            return -1;
    return 0;
}

/* Every use entry names a live slot reading its value and no entry is
 * listed twice, so the entries are a subset of the slots: equal counts
 * over the whole model make them the same set, in time linear in the uses
 * (slot by slot, a value with many readers is quadratic). */
int graph_verify(const Graph *g, Diag *d)
{
    Verify c = {d, 0, 0, NULL, 0, false};
    int rc = graph_walk_post((Graph *)g, verify_one, &c) ? -1 : 0;
    free(c.sorted);
    if (!rc && c.oom)
        return diag_set(d, PPQ_EINTERNAL, "out of memory checking the IR");
    if (!rc && c.slots != c.entries) {
        if (!graph_walk_post((Graph *)g, name_missing_use, d))
            diag_set(d, PPQ_EINTERNAL, "%zu input slots but %zu use entries", c.slots,
                     c.entries);
        return -1;
    }
    return rc;
}

/* An initializer's element type, else the declared one (0: none). */
static int32_t var_declared_dtype(const Var *v)
{
    return !v ? 0 : v->param ? v->param->dtype : v->type.elem_type;
}

int op_conv_non_float_input(const Op *op)
{
    if ((op->domain && *op->domain && strcmp(op->domain, "ai.onnx")) ||
        (strcmp(op->type, "Conv") && strcmp(op->type, "ConvTranspose")))
        return -1;
    for (size_t s = 0; s < op->n_inputs && s < 3; s++) {
        int32_t dt = var_declared_dtype(op->inputs[s]);
        if (dt && !dtype_is_float(dt))
            return (int)s;
    }
    return -1;
}

int graph_check_conv_types(const Graph *g, const char *why, Diag *d)
{
    static const char *const ROLE[] = {"input", "weight", "bias"};
    for (size_t i = 0; i < g->n_ops; i++) {
        const Op *op = g->ops[i];
        int s = op->removed ? -1 : op_conv_non_float_input(op);
        if (s >= 0)
            return diag_set(d, PPQ_EINPUT, "node '%s' (%s): %s '%s' is %s%s; %s takes float, "
                            "double, float16 or bfloat16", op_label(op), op->type, ROLE[s],
                            op->inputs[s]->name, dtype_name(var_declared_dtype(op->inputs[s])),
                            why, op->type);
    }
    return 0;
}
