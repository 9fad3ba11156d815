/* test_graph.c - unit tests for the BaseGraph edit API (core/ir/graph.h) and the
 * tensor helpers (core/ir/tensor.h).
 *
 * Each check builds a small model, edits it, and returns NULL on success or a
 * reason on failure; the runner prints "ok NAME" / "FAIL NAME: reason" and
 * frees the model. After every edit the whole model is run through
 * graph_verify(), so each check also proves the use lists stayed exact.
 * The last line is "test_graph: N passed, M failed"; exit status 1 on failure. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/ir/graph.h"
#include "../core/ir/graph_internal.h" /* graph_drop_var, var_take_over */
#include "../core/infer/infer.h"
#include "../core/ops/ops_registry.h"
#include "../formatter/params.h"
#include "../formatter/pass.h"

#include "check.h"


/* graph_verify over the whole model (it recurses into subgraphs). */
#define VERIFY(m)                                                           \
    do {                                                                    \
        Diag d_ = {0};                                                      \
        if (graph_verify((m)->graph, &d_) != 0)                             \
            return failf(__LINE__, "graph_verify failed: %s", d_.msg);      \
    } while (0)

typedef const char *(*CheckFn)(Model *m);

static void run(const char *name, CheckFn fn)
{
    Model *m = model_new();
    /* A current model; model_new() leaves ir_version 0, which selects the
     * pre-IR-4 rules (initializers are also inputs) tested explicitly below. */
    if (m)
        m->ir_version = 8;
    const char *err = m ? fn(m) : "model_new failed";
    if (err) {
        printf("FAIL %s: %s\n", name, err);
        n_failed++;
    } else {
        printf("ok %s\n", name);
        n_passed++;
    }
    fflush(stdout);
    model_free(m);
}

#define RUN(name) run(#name, check_##name)

/* --- building helpers (setup failures abort: they are bugs of the test) --- */

static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "test setup failed: %s\n", what);
        exit(2);
    }
    return p;
}

static void must_ok(int rc, const char *what)
{
    if (rc != 0)
        must(NULL, what);
}

static Var *var(Graph *g, const char *name)
{
    return must(graph_new_var(g, name), name);
}

static Var *input(Graph *g, const char *name)
{
    Var *v = var(g, name);
    must_ok(graph_add_input(g, v, (Bytes){0}), "graph_add_input");
    return v;
}

static Var *output(Graph *g, Var *v)
{
    must_ok(graph_add_output(g, v, (Bytes){0}), "graph_add_output");
    return v;
}

static Tensor *tensor2(Model *m)
{
    return must(tensor_new(&m->arena, DT_FLOAT, 1, (int64_t[]){2}), "tensor_new");
}

static Var *param(Graph *g, const char *name)
{
    return must(graph_add_param(g, name, tensor2(g->model)), "graph_add_param");
}

/* Appends op `name` of `type` to g reading a, b (each optional) and writing
 * a new variable named out (optional). */
static Op *node(Graph *g, const char *type, const char *name, Var *a, Var *b, const char *out)
{
    Op *op = must(graph_insert_op(g, NULL, type, name), "graph_insert_op");
    if (a)
        must_ok(op_append_input(op, a), "op_append_input");
    if (b)
        must_ok(op_append_input(op, b), "op_append_input");
    if (out)
        must_ok(op_append_output(op, var(g, out)), "op_append_output");
    return op;
}

static Var *out(const Op *op)
{
    return op->outputs[0];
}

/* A new subgraph held by attribute attr (ATTR_GRAPH) of owner. */
static Graph *branch(Op *owner, const char *attr)
{
    Model *m = owner->graph->model;
    Graph *sub = must(graph_new(m, owner->graph, owner), "graph_new");
    Attr *a = must(op_add_attr(owner, attr, ATTR_GRAPH), "op_add_attr");
    a->graphs = must(arena_alloc(&m->arena, sizeof *a->graphs), "arena_alloc");
    a->graphs[0] = sub;
    a->n = 1;
    return sub;
}

/* How many entries of v's use list are {op, slot}. */
static size_t has_use(const Var *v, const Op *op, size_t slot)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n_uses; i++)
        n += v->uses[i].op == op && v->uses[i].slot == slot;
    return n;
}

/* --- "graph unchanged" snapshots of one graph's ops and vars --- */

enum { SNAP_MAX = 32, SNAP_IN = 4 };

typedef struct Snap {
    size_t n_ops, n_vars, n_params;
    struct {
        bool removed;
        size_t n_in, n_out;
        Var *in[SNAP_IN], *out0;
    } ops[SNAP_MAX];
    struct {
        Op *producer;
        size_t slot, n_uses;
        bool removed;
        unsigned n_output_lists;
        Tensor *param;
    } vars[SNAP_MAX];
} Snap;

static void snap_take(const Graph *g, Snap *s)
{
    memset(s, 0, sizeof *s);
    s->n_ops = g->n_ops;
    s->n_vars = g->n_vars;
    s->n_params = g->n_params;
    for (size_t i = 0; i < g->n_ops && i < SNAP_MAX; i++) {
        const Op *op = g->ops[i];
        s->ops[i].removed = op->removed;
        s->ops[i].n_in = op->n_inputs;
        s->ops[i].n_out = op->n_outputs;
        s->ops[i].out0 = op->n_outputs ? op->outputs[0] : NULL;
        for (size_t k = 0; k < op->n_inputs && k < SNAP_IN; k++)
            s->ops[i].in[k] = op->inputs[k];
    }
    for (size_t i = 0; i < g->n_vars && i < SNAP_MAX; i++) {
        const Var *v = g->vars[i];
        s->vars[i].producer = v->producer;
        s->vars[i].slot = v->producer_slot;
        s->vars[i].n_uses = v->n_uses;
        s->vars[i].removed = v->removed;
        s->vars[i].n_output_lists = v->n_output_lists;
        s->vars[i].param = v->param;
    }
}

/* NULL when g still matches s, else what differs. */
static const char *snap_diff(const Graph *g, const Snap *s)
{
    static char buf[256];
    if (g->n_ops != s->n_ops || g->n_vars != s->n_vars || g->n_params != s->n_params)
        return "number of ops, vars or params changed";
    for (size_t i = 0; i < g->n_ops && i < SNAP_MAX; i++) {
        const Op *op = g->ops[i];
        if (op->removed != s->ops[i].removed || op->n_inputs != s->ops[i].n_in ||
            op->n_outputs != s->ops[i].n_out || (op->n_outputs && op->outputs[0] != s->ops[i].out0))
            goto op_changed;
        for (size_t k = 0; k < op->n_inputs && k < SNAP_IN; k++)
            if (op->inputs[k] != s->ops[i].in[k])
                goto op_changed;
        continue;
    op_changed:
        snprintf(buf, sizeof buf, "op '%s' changed (removed flag, inputs or outputs)", op->name);
        return buf;
    }
    for (size_t i = 0; i < g->n_vars && i < SNAP_MAX; i++) {
        const Var *v = g->vars[i];
        if (v->producer != s->vars[i].producer || v->producer_slot != s->vars[i].slot ||
            v->n_uses != s->vars[i].n_uses || v->removed != s->vars[i].removed ||
            v->n_output_lists != s->vars[i].n_output_lists || v->param != s->vars[i].param) {
            snprintf(buf, sizeof buf, "value '%s' changed (producer, uses, dropped or param)",
                     v->name);
            return buf;
        }
    }
    return NULL;
}

#define EXPECT_UNCHANGED(g, s)                                      \
    do {                                                            \
        const char *e_ = snap_diff((g), (s));                       \
        if (e_)                                                     \
            return failf(__LINE__, "graph changed on failure: %s", e_); \
    } while (0)

/* ===================================================================== */
/* Building: producers and use lists                                      */
/* ===================================================================== */

static const char *check_use_lists_after_build(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *w = param(g, "w");
    Op *a = node(g, "Add", "A", x, x, "y"); /* x used twice: two use entries */
    Op *b = node(g, "Mul", "B", out(a), w, "z");
    Op *s = node(g, "Split", "S", out(b), NULL, "s0");
    Var *s1 = var(g, "s1");
    EXPECT(op_append_output(s, s1) == 0);
    output(g, s1);
    VERIFY(m);

    EXPECT(x->producer == NULL && x->is_input);
    EXPECT(x->n_uses == 2 && has_use(x, a, 0) == 1 && has_use(x, a, 1) == 1);
    EXPECT(out(a)->producer == a && out(a)->producer_slot == 0);
    EXPECT(out(a)->n_uses == 1 && has_use(out(a), b, 0) == 1);
    EXPECT(w->param != NULL && w->producer == NULL);
    EXPECT(w->n_uses == 1 && has_use(w, b, 1) == 1);
    EXPECT(s1->producer == s && s1->producer_slot == 1); /* second output slot */
    EXPECT(out(s)->producer_slot == 0 && out(s)->n_uses == 0);
    EXPECT(graph_find_var(g, "y") == out(a));

    /* A value has one producer: a second op may not claim it. */
    Op *c = node(g, "Relu", "C", x, NULL, NULL);
    EXPECT(op_append_output(c, out(a)) == -1);
    EXPECT(c->n_outputs == 0 && out(a)->producer == a);
    VERIFY(m);
    return NULL;
}

/* ===================================================================== */
/* op_set_input                                                           */
/* ===================================================================== */

static const char *check_op_set_input(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    Op *b = node(g, "Add", "B", out(a), x, "z");
    Var *y = out(a);
    VERIFY(m);

    /* Rewire B:0 from y to x: y loses its use, x gains a second one. */
    op_set_input(b, 0, x);
    VERIFY(m);
    EXPECT(b->inputs[0] == x && y->n_uses == 0);
    EXPECT(x->n_uses == 3 && has_use(x, a, 0) && has_use(x, b, 0) && has_use(x, b, 1));

    /* Setting the same value again must not duplicate the use entry. */
    op_set_input(b, 0, x);
    VERIFY(m);
    EXPECT(x->n_uses == 3);

    /* NULL: an omitted optional input; the slot stays, the use goes. */
    op_set_input(b, 1, NULL);
    VERIFY(m);
    EXPECT(b->n_inputs == 2 && b->inputs[1] == NULL);
    EXPECT(x->n_uses == 2 && has_use(x, b, 1) == 0);

    /* And back from NULL to a value. */
    op_set_input(b, 1, y);
    VERIFY(m);
    EXPECT(y->n_uses == 1 && has_use(y, b, 1) == 1);
    return NULL;
}

/* op_recreate_as: the node becomes a new one of another type where it
 * stands; its name, inputs, outputs and their uses stay, its attributes
 * and original encoding go, and the attribute array is reused. */
static const char *check_op_recreate_as(Model *m)
{
    static const uint8_t encoded[] = {0x0a, 0x01, 'x'}; /* stands for a NodeProto */
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    Op *b = node(g, "Abs", "B", out(a), NULL, "z");
    must(op_set_attr_float(a, "alpha", 0.5f), "alpha");
    must(op_set_attr_int(a, "beta", 2), "beta");
    a->domain = "ai.onnx";
    a->wire = (Bytes){encoded, sizeof encoded};
    a->changed = false;
    Attr *room = a->attrs;
    size_t edits = model_op_edits(m);
    EXPECT(op_recreate_as(a, "Sigmoid") == 0);
    VERIFY(m);
    EXPECT(strcmp(a->type, "Sigmoid") == 0 && strcmp(a->name, "A") == 0 && !*a->domain);
    EXPECT(a->n_attrs == 0 && a->wire.len == 0 && a->changed && model_op_edits(m) > edits);
    EXPECT(a->n_inputs == 1 && a->inputs[0] == x && a->n_outputs == 1 && out(a)->producer == a);
    EXPECT(has_use(x, a, 0) && has_use(out(a), b, 0) && g->n_ops == 2 && g->ops[0] == a);
    EXPECT(op_set_attr_int(a, "gamma", 1) && a->attrs == room && a->n_attrs == 1);
    return NULL;
}

/* Uses leave from the front (a pass replacing each reader of a wide fan-out
 * in order), the back and the middle; the rest keep their order, and a list
 * whose start moved still grows. */
static const char *check_use_removal_order(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    static const char *const names[] = {"R0", "R1", "R2", "R3", "R4", "R5"};
    static const char *const outs[] = {"y0", "y1", "y2", "y3", "y4", "y5"};
    Op *r[6];
    for (int i = 0; i < 6; i++)
        r[i] = node(g, "Relu", names[i], x, NULL, outs[i]);
    op_set_input(r[0], 0, NULL); /* the oldest */
    op_set_input(r[1], 0, NULL); /* the oldest again */
    op_set_input(r[5], 0, NULL); /* the latest */
    op_set_input(r[3], 0, NULL); /* the middle of R2 R3 R4 */
    VERIFY(m);
    EXPECT(x->n_uses == 2 && x->uses[0].op == r[2] && x->uses[1].op == r[4]);
    op_set_input(r[0], 0, x);
    op_set_input(r[1], 0, x);
    op_set_input(r[5], 0, x);
    VERIFY(m);
    EXPECT(x->n_uses == 5 && x->uses[0].op == r[2] && x->uses[1].op == r[4] &&
           x->uses[2].op == r[0] && x->uses[3].op == r[1] && x->uses[4].op == r[5]);
    return NULL;
}

/* model_set_opset changes an import or adds a missing one; model_op_edits
 * counts edits of operations (the opset upgrade says which nodes it changed
 * by it), not additions of new ones; a read node that gains an input is
 * edited. */
static const char *check_opset_and_edit_count(Model *m)
{
    Opset *one = must(arena_alloc(&m->arena, sizeof *one), "arena_alloc");
    *one = (Opset){"", 9};
    m->opsets = one;
    m->n_opsets = 1;
    m->ir_version = 3;
    EXPECT(model_set_opset(m, "", 11, 6) == 0);
    EXPECT(m->n_opsets == 1 && m->opsets[0].version == 11 && m->ir_version == 6);
    EXPECT(model_set_opset(m, "com.microsoft", 1, 0) == 0);
    EXPECT(m->n_opsets == 2 && strcmp(m->opsets[1].domain, "com.microsoft") == 0 &&
           m->opsets[1].version == 1 && m->opsets[0].version == 11 && m->ir_version == 6);
    Graph *g = m->graph;
    Var *x = input(g, "x");
    size_t edits = model_op_edits(m);
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    EXPECT(model_op_edits(m) == edits); /* building a new node is no edit */
    op_set_input(a, 0, NULL);
    EXPECT(model_op_edits(m) == edits + 1);
    EXPECT(op_set_attr_int(a, "k", 1) && model_op_edits(m) == edits + 2); /* new attribute */
    EXPECT(op_set_attr_int(a, "k", 2) && model_op_edits(m) == edits + 3); /* rewritten */
    /* a node that was read (it has its wire bytes) and only gains an input or
     * an output is edited: it must be written anew */
    static const uint8_t node_bytes[] = {0x22, 0x04, 'R', 'e', 'l', 'u'};
    a->wire = (Bytes){node_bytes, sizeof node_bytes};
    a->changed = g->changed = false;
    EXPECT(op_append_input(a, x) == 0 && a->changed && g->changed &&
           model_op_edits(m) == edits + 4);
    a->changed = false;
    EXPECT(op_append_output(a, NULL) == 0 && a->changed && model_op_edits(m) == edits + 5);
    return NULL;
}

/* ===================================================================== */
/* var_replace_all_uses                                                   */
/* ===================================================================== */

static const char *check_replace_all_uses(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    Op *a2 = node(g, "Abs", "A2", x, NULL, "y2");
    Var *y = output(g, out(a)), *y2 = out(a2);
    Op *b = node(g, "Add", "B", y, y, "z");
    output(g, out(b));
    /* An If whose branch reads y from the outer scope. */
    Op *iff = node(g, "If", "I", c, NULL, "r");
    output(g, out(iff));
    Graph *then = branch(iff, "then_branch");
    Op *t = node(then, "Neg", "T", y, NULL, "t");
    output(then, out(t));
    VERIFY(m);
    EXPECT(y->n_uses == 3 && has_use(y, t, 0) == 1);

    var_replace_all_uses(y, y2);
    VERIFY(m);
    EXPECT(y->n_uses == 0);
    EXPECT(b->inputs[0] == y2 && b->inputs[1] == y2);
    EXPECT(t->inputs[0] == y2); /* the use inside the subgraph moved too */
    EXPECT(y2->n_uses == 3 && has_use(y2, b, 0) && has_use(y2, b, 1) && has_use(y2, t, 0));
    /* Graph outputs are names, not uses: they stay with y. */
    EXPECT(y->n_output_lists && !y2->n_output_lists && g->outputs[0].var == y);
    EXPECT(y->producer == a && !y->removed);

    /* Replacing a value nothing uses is a no-op. */
    var_replace_all_uses(y, x);
    VERIFY(m);
    EXPECT(y->n_uses == 0 && x->n_uses == 2);
    return NULL;
}

/* from == to must be a no-op. op_set_input() ignores "old == new", so a loop
 * that waits for from->n_uses to reach zero would never end. It is reachable:
 * the identity pass calls graph_remove_op(op, x) for y = Identity(x), and a
 * (malformed) node y = Identity(y) loads fine. Run it in a child process under
 * an alarm so a hang fails this check, not the whole program. */
static const char *check_replace_all_uses_with_itself(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    node(g, "Relu", "A", x, NULL, "y");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return "fork failed";
    if (pid == 0) {
        alarm(2);
        var_replace_all_uses(x, x);
        Diag d = {0};
        int rc = graph_verify(g, &d) == 0 && x->n_uses == 1 ? 0 : 1;
        model_free(m);
        _exit(rc);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return "waitpid failed";
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
        return failf(__LINE__, "var_replace_all_uses(x, x) did not return within 2 s "
                               "(loops forever: op_set_input(op, slot, x) is a no-op when "
                               "the slot already holds x, so x->n_uses never drops)");
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return NULL;
}

/* ===================================================================== */
/* graph_remove_op                                                        */
/* ===================================================================== */

static const char *check_remove_op_unused(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    output(g, out(a));
    Op *dead = node(g, "Mul", "D", x, x, "dead");
    Var *dv = out(dead);
    VERIFY(m);

    EXPECT(graph_remove_op(dead, NULL) == 0);
    VERIFY(m);
    EXPECT(dead->removed && dv->removed && dv->producer == NULL);
    EXPECT(x->n_uses == 1 && has_use(x, a, 0) == 1); /* both of D's uses are gone */
    EXPECT(graph_find_var(g, "dead") == NULL);

    graph_compact(g);
    VERIFY(m);
    EXPECT(g->n_ops == 1 && g->ops[0] == a);
    return NULL;
}

static const char *check_remove_op_with_replacement(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    Op *id = node(g, "Identity", "I", out(a), NULL, "z");
    Op *n = node(g, "Neg", "N", out(id), NULL, "o");
    output(g, out(n));
    Op *iff = node(g, "If", "If", c, NULL, "r");
    output(g, out(iff));
    Op *t = node(branch(iff, "then_branch"), "Relu", "T", out(id), NULL, "t");
    output(t->graph, out(t));
    Var *y = out(a), *z = out(id);
    VERIFY(m);

    /* Remove z = Identity(y): every reader of z (also inside the If) reads y. */
    EXPECT(graph_remove_op(id, y) == 0);
    VERIFY(m);
    EXPECT(id->removed && z->removed && z->n_uses == 0);
    EXPECT(n->inputs[0] == y && t->inputs[0] == y);
    EXPECT(y->n_uses == 2 && has_use(y, n, 0) && has_use(y, t, 0) && !has_use(y, id, 0));
    return NULL;
}

static const char *check_remove_op_refuses_used_output(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    Op *b = node(g, "Neg", "B", out(a), NULL, "z");
    output(g, out(b));
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(graph_remove_op(a, NULL) == -1); /* B still reads y */
    EXPECT_UNCHANGED(g, &s);
    VERIFY(m);
    return NULL;
}

static const char *check_remove_op_refuses_graph_output(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    output(g, out(a)); /* unused, but a graph output */
    Op *sp = node(g, "Split", "S", x, NULL, "s0");
    must_ok(op_append_output(sp, var(g, "s1")), "op_append_output");
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(graph_remove_op(a, NULL) == -1);
    EXPECT_UNCHANGED(g, &s);
    VERIFY(m);
    /* A replacement needs exactly one output. */
    EXPECT(graph_remove_op(sp, x) == -1);
    EXPECT_UNCHANGED(g, &s);
    VERIFY(m);
    return NULL;
}

/* The refusal must leave the graph as it was even when a replacement is given:
 * here y = Identity(x) is a graph output and also read by N. Removing it with
 * repl = x must fail (y is a graph output), and N must still read y. */
static const char *check_remove_op_refusal_with_replacement_is_atomic(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *id = node(g, "Identity", "I", x, NULL, "y");
    Var *y = output(g, out(id));
    Op *n = node(g, "Neg", "N", y, NULL, "z");
    output(g, out(n));
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(graph_remove_op(id, x) == -1);
    VERIFY(m);
    if (n->inputs[0] != y)
        return failf(__LINE__, "graph_remove_op returned -1 but already rewired N's input "
                               "from 'y' to '%s' (uses are moved before the n_output_lists check)",
                     n->inputs[0] ? n->inputs[0]->name : "(null)");
    EXPECT_UNCHANGED(g, &s);
    return NULL;
}

/* Removing an op that owns subgraphs detaches the inner ops' reads of outer
 * values; otherwise x and y would keep uses by ops that no longer exist.
 * Under valgrind this check also shows whether model_free releases the
 * branches of a removed op (their name maps are malloc'd, not arena memory). */
static const char *check_remove_op_with_subgraph(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *a = node(g, "Relu", "A", x, NULL, "y");
    output(g, out(a));
    Var *y = out(a);
    Op *iff = node(g, "If", "If", c, NULL, "r"); /* r is unused: removable */
    Graph *then = branch(iff, "then_branch"), *els = branch(iff, "else_branch");
    Op *t = node(then, "Add", "T", x, y, "t");
    Op *t2 = node(then, "Neg", "T2", out(t), NULL, "t2"); /* inner-to-inner use */
    output(then, out(t2));
    Op *e = node(els, "Neg", "E", x, NULL, "e");
    output(els, out(e));
    VERIFY(m);
    EXPECT(x->n_uses == 3 && y->n_uses == 1 && c->n_uses == 1);

    EXPECT(graph_remove_op(iff, NULL) == 0);
    VERIFY(m);
    EXPECT(x->n_uses == 1 && has_use(x, a, 0) == 1);
    EXPECT(y->n_uses == 0 && c->n_uses == 0);
    EXPECT(!has_use(x, t, 0) && !has_use(x, e, 0));
    EXPECT(out(iff)->removed);
    return NULL;
}

/* ===================================================================== */
/* op_outputs_to_params                                                   */
/* ===================================================================== */

static const char *check_outputs_to_params(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *k = node(g, "Constant", "K", NULL, NULL, "k");
    Var *kv = out(k);
    Op *a = node(g, "Add", "A", x, kv, "y");
    output(g, out(a));
    Op *iff = node(g, "If", "If", c, NULL, "r");
    output(g, out(iff));
    Op *t = node(branch(iff, "then_branch"), "Neg", "T", kv, NULL, "t");
    output(t->graph, out(t));
    VERIFY(m);
    size_t params_before = g->n_params;
    Tensor *val = tensor2(m);

    EXPECT(op_outputs_to_params(k, &val) == 0);
    VERIFY(m);
    EXPECT(k->removed && kv->producer == NULL && !kv->removed);
    EXPECT(kv->param == val && strcmp(kv->name, "k") == 0);
    EXPECT(graph_find_var(g, "k") == kv);
    EXPECT(g->n_params == params_before + 1 && g->params[g->n_params - 1] == kv);
    EXPECT(kv->n_uses == 2 && has_use(kv, a, 1) && has_use(kv, t, 0)); /* uses kept */
    EXPECT(kv->type.elem_type == DT_FLOAT && kv->type.rank == 1);
    EXPECT(!kv->is_input && g->n_inputs == 2); /* IR >= 4: not an input */

    /* An op with inputs (a fold) lets go of them. */
    Op *b = node(g, "Neg", "B", x, NULL, "z");
    output(g, out(b));
    Tensor *z = tensor2(m);
    EXPECT(x->n_uses == 2);
    EXPECT(op_outputs_to_params(b, &z) == 0);
    VERIFY(m);
    EXPECT(b->removed && out(b)->param == z && x->n_uses == 1 && has_use(x, a, 0));
    return NULL;
}

/* Before IR 4 every initializer must also be a graph input:
 * op_outputs_to_params adds the input in the main graph, and refuses in a
 * subgraph (whose inputs are positional) without touching anything. */
static const char *check_outputs_to_params_old_ir(Model *m)
{
    m->ir_version = 3;
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *k = node(g, "Constant", "K", NULL, NULL, "k");
    Var *kv = out(k);
    Op *a = node(g, "Add", "A", x, kv, "y");
    output(g, out(a));
    Op *iff = node(g, "If", "If", c, NULL, "r");
    output(g, out(iff));
    Graph *then = branch(iff, "then_branch");
    Op *k2 = node(then, "Constant", "K2", NULL, NULL, "k2");
    Op *t = node(then, "Neg", "T", out(k2), NULL, "t");
    output(then, out(t));
    VERIFY(m);

    Tensor *t1 = tensor2(m), *t2 = tensor2(m);
    EXPECT(op_outputs_to_params(k, &t1) == 0);
    VERIFY(m);
    EXPECT(kv->param && kv->is_input && kv->n_uses == 1 && has_use(kv, a, 1));
    EXPECT(g->n_inputs == 3 && g->inputs[2].var == kv);

    Snap s;
    snap_take(then, &s);
    EXPECT(op_outputs_to_params(k2, &t2) == -1);
    EXPECT_UNCHANGED(then, &s);
    EXPECT(!k2->removed && out(k2)->producer == k2 && then->n_inputs == 0);
    VERIFY(m);
    return NULL;
}

/* ===================================================================== */
/* graph_remove_op_into_output                                            */
/* ===================================================================== */

static const char *check_remove_op_into_output(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *a = node(g, "Relu", "A", x, NULL, "t");
    Var *t = out(a);
    Op *id = node(g, "Identity", "I", t, NULL, "y");
    Var *y = output(g, out(id));
    Op *b = node(g, "Neg", "B", t, NULL, "z"); /* another consumer of t */
    output(g, out(b));
    Op *iff = node(g, "If", "If", c, NULL, "r");
    output(g, out(iff));
    Op *in = node(branch(iff, "then_branch"), "Abs", "T", t, NULL, "u"); /* and one inside */
    output(in->graph, out(in));
    VERIFY(m);

    EXPECT(graph_remove_op_into_output(id, id->inputs[0]) == 0);
    VERIFY(m);
    /* A now writes y directly; the intermediate t is gone. */
    EXPECT(id->removed);
    EXPECT(a->outputs[0] == y && y->producer == a && y->producer_slot == 0);
    EXPECT(t->removed && t->n_uses == 0 && graph_find_var(g, "t") == NULL);
    /* t's other consumers read y now, in both scopes. */
    EXPECT(b->inputs[0] == y && in->inputs[0] == y);
    EXPECT(y->n_uses == 2 && has_use(y, b, 0) && has_use(y, in, 0));
    EXPECT(y->n_output_lists && g->outputs[0].var == y);
    return NULL;
}

/* Each case must fail with -1 and leave the graph as it was. */
static const char *check_remove_op_into_output_refusals(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *w = param(g, "w"), *c = input(g, "c");
    /* x is a graph input: nothing could write y instead. */
    Op *i1 = node(g, "Identity", "I1", x, NULL, "y1");
    output(g, out(i1));
    /* w is a parameter: same. */
    Op *i2 = node(g, "Identity", "I2", w, NULL, "y2");
    output(g, out(i2));
    /* t is itself a graph output: both names must survive. */
    Op *a = node(g, "Relu", "A", x, NULL, "t");
    output(g, out(a));
    Op *i3 = node(g, "Identity", "I3", out(a), NULL, "y3");
    output(g, out(i3));
    /* t is an outer value of the subgraph holding I4. */
    Op *iff = node(g, "If", "If", c, NULL, "r");
    output(g, out(iff));
    Graph *then = branch(iff, "then_branch");
    Op *i4 = node(then, "Identity", "I4", out(a), NULL, "y4");
    output(then, out(i4));
    VERIFY(m);

    Snap s, sub;
    snap_take(g, &s);
    snap_take(then, &sub);
    Op *cases[] = {i1, i2, i3, i4};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (graph_remove_op_into_output(cases[i], cases[i]->inputs[0]) != -1)
            return failf(__LINE__, "graph_remove_op_into_output(%s) did not refuse",
                         cases[i]->name);
        EXPECT_UNCHANGED(g, &s);
        EXPECT_UNCHANGED(then, &sub);
        VERIFY(m);
    }
    return NULL;
}

/* ===================================================================== */
/* graph_remove_params_where and graph_drop_var                           */
/* ===================================================================== */

static bool is_ctx(Var *v, void *ctx) { return v == ctx; }

static size_t remove_param(Var *v) { return graph_remove_params_where(v->graph, is_ctx, v); }

/* Parameters used (read by A), unused, pin (a graph input: an old-IR
 * default) and pout (a graph output), in that order. */
typedef struct ParamCase {
    Var *x, *used, *unused, *pin, *pout;
} ParamCase;

static ParamCase param_case(Graph *g)
{
    ParamCase c = {input(g, "x"), param(g, "used"), param(g, "unused"), param(g, "pin"),
                   param(g, "pout")};
    must_ok(graph_add_input(g, c.pin, (Bytes){0}), "graph_add_input");
    output(g, c.pout);
    output(g, out(node(g, "Add", "A", c.x, c.used, "y")));
    return c;
}

static const char *check_remove_param(Model *m)
{
    Graph *g = m->graph;
    ParamCase c = param_case(g);
    Var *used = c.used, *unused = c.unused, *pin = c.pin, *pout = c.pout;
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(remove_param(used) == 0); /* still read by A */
    EXPECT(remove_param(pin) == 0);  /* a graph input */
    EXPECT(remove_param(pout) == 0); /* a graph output */
    EXPECT_UNCHANGED(g, &s);
    VERIFY(m);

    EXPECT(remove_param(unused) == 1);
    VERIFY(m);
    EXPECT(unused->removed && unused->param == NULL && g->n_params == 3);
    for (size_t i = 0; i < g->n_params; i++)
        EXPECT(g->params[i] != unused);
    EXPECT(g->params[0] == used && g->params[1] == pin && g->params[2] == pout); /* order kept */
    EXPECT(graph_find_var(g, "unused") == NULL);
    return NULL;
}

/* graph_remove_param: the same refusals, one parameter at a time; the name
 * goes at once, the initializer list entry at the next graph_compact. */
static const char *check_remove_param_now(Model *m)
{
    Graph *g = m->graph;
    ParamCase c = param_case(g);
    Var *x = c.x, *used = c.used, *unused = c.unused, *pin = c.pin, *pout = c.pout;
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(graph_remove_param(used) == -1 && graph_remove_param(pin) == -1 &&
           graph_remove_param(pout) == -1 && graph_remove_param(x) == -1);
    EXPECT_UNCHANGED(g, &s);

    EXPECT(graph_remove_param(unused) == 0);
    EXPECT(unused->removed && unused->param == NULL && graph_find_var(g, "unused") == NULL);
    EXPECT(graph_remove_param(unused) == -1);
    Var *again = param(g, "unused"); /* the name is free at once */
    graph_compact(g);
    VERIFY(m);
    EXPECT(g->n_params == 4 && g->params[0] == used && g->params[1] == pin &&
           g->params[2] == pout && g->params[3] == again);
    return NULL;
}

static const char *check_drop_var(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Var *undef = var(g, "undef"); /* a name nothing defines, read by A */
    Op *a = node(g, "Add", "A", x, undef, "y");
    Var *dangling_out = output(g, var(g, "o")); /* a graph output with no producer */
    Var *spare = var(g, "spare");
    must_ok(graph_add_value_info(g, spare, (Bytes){0}), "graph_add_value_info");
    VERIFY(m);
    Snap s;
    snap_take(g, &s);

    EXPECT(graph_drop_var(out(a)) == -1); /* produced */
    EXPECT(graph_drop_var(undef) == -1);  /* used */
    EXPECT(graph_drop_var(x) == -1);      /* a graph input */
    EXPECT(graph_drop_var(dangling_out) == -1); /* a graph output */
    EXPECT_UNCHANGED(g, &s);
    VERIFY(m);

    EXPECT(graph_drop_var(spare) == 0);
    VERIFY(m);
    EXPECT(spare->removed && graph_find_var(g, "spare") == NULL);
    EXPECT(g->value_info[0].removed); /* its value_info entry goes too */
    return NULL;
}

/* x -> Relu A -> t -> Neg B -> y (a graph output), then n Identity nodes of x
 * each writing t again (a name written n + 1 times: non-SSA); returns A. */
static Op *rewritten_name(Graph *g, Op **writes, int n)
{
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "t");
    output(g, out(node(g, "Neg", "B", out(a), NULL, "y")));
    for (int i = 0; i < n; i++) {
        writes[i] = node(g, "Identity", i ? "D" : "C", x, NULL, NULL);
        must_ok(op_append_output(writes[i], must(graph_shadow_var(g, "t"), "shadow")), "out");
    }
    return a;
}

/* When the later write of a name written twice goes, the earlier one is the
 * name's only write again, as reloading the output would make it: found by
 * name and no longer shadowed (the constant pass then folds a Constant that
 * wrote it, in the same run). */
static const char *check_drop_var_unshadows_earlier_write(Model *m)
{
    Graph *g = m->graph;
    Op *c;
    Op *a = rewritten_name(g, &c, 1);
    VERIFY(m);
    EXPECT(out(a)->shadowed && graph_find_var(g, "t") == out(c));

    EXPECT(graph_remove_op(c, NULL) == 0);
    VERIFY(m);
    EXPECT(!out(a)->shadowed && graph_find_var(g, "t") == out(a));
    return NULL;
}

/* Three writes: dropping the middle one leaves the first hidden by the last;
 * dropping the last then uncovers the first. */
static const char *check_drop_var_unshadows_past_dropped(Model *m)
{
    Graph *g = m->graph;
    Op *writes[2];
    Op *a = rewritten_name(g, writes, 2);
    Var *last = out(writes[1]);
    VERIFY(m);
    EXPECT(graph_remove_op(writes[0], NULL) == 0);
    VERIFY(m);
    EXPECT(out(a)->shadowed && graph_find_var(g, "t") == last);
    EXPECT(graph_remove_op(writes[1], NULL) == 0);
    VERIFY(m);
    EXPECT(!out(a)->shadowed && graph_find_var(g, "t") == out(a));
    return NULL;
}

/* An unused parameter is neither produced nor used, but dropping it with
 * graph_drop_var would leave its initializer in g->params (the writer emits
 * every g->params entry), naming a variable that no longer exists. Only
 * graph_remove_params_where may remove a parameter. */
static const char *check_drop_var_refuses_parameter(Model *m)
{
    Graph *g = m->graph;
    Var *w = param(g, "w");
    VERIFY(m);
    int rc = graph_drop_var(w);
    if (rc == 0)
        return failf(__LINE__, "graph_drop_var dropped parameter 'w' but left it in g->params "
                               "(n_params=%zu, dropped=%d): the initializer would still be "
                               "written", g->n_params, (int)w->removed);
    EXPECT(!w->removed && g->n_params == 1 && graph_find_var(g, "w") == w);
    VERIFY(m);
    return NULL;
}

/* ===================================================================== */
/* graph_topo_sort                                                        */
/* ===================================================================== */

static const char *order_is(const Graph *g, const Op *const *want, size_t n)
{
    static char buf[256];
    bool same = g->n_ops == n;
    for (size_t i = 0; same && i < n; i++)
        same = g->ops[i] == want[i];
    if (same)
        return NULL;
    size_t k = (size_t)snprintf(buf, sizeof buf, "order is");
    for (size_t i = 0; i < g->n_ops && k < sizeof buf; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, " %s", g->ops[i]->name);
    return buf;
}

#define EXPECT_ORDER(g, ...)                                                    \
    do {                                                                        \
        const Op *const want_[] = {__VA_ARGS__};                                \
        const char *e_ = order_is((g), want_, sizeof want_ / sizeof *want_);    \
        if (e_)                                                                 \
            return failf(__LINE__, "%s", e_);                                   \
    } while (0)

/* isolated marks liveness in one sweep from the last node to the first; a
 * file out of topological order must still keep every producer a live node
 * reads, however far after its reader it is listed. */
static const char *check_isolated_out_of_order(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    /* File order C, B, A, D; data flow A -> B -> C -> output; D is dead. */
    Var *a_out = var(g, "a"), *b_out = var(g, "b");
    Op *c = node(g, "Neg", "C", b_out, NULL, "c");
    Op *b = node(g, "Neg", "B", a_out, NULL, NULL);
    Op *a = node(g, "Neg", "A", x, NULL, NULL);
    Op *dead = node(g, "Neg", "D", x, NULL, "d");
    must_ok(op_append_output(b, b_out), "op_append_output");
    must_ok(op_append_output(a, a_out), "op_append_output");
    output(g, out(c));
    VERIFY(m);

    Diag d = {0};
    EXPECT(pass_find("isolated")->run(&(PassCtx){g, &(PassOptions){0}, &d, "isolated"}) == 0 && d.code == 0);
    EXPECT(!a->removed && !b->removed && !c->removed);
    /* kept whole: a removal that missed A's liveness would detach its input */
    EXPECT(a->n_inputs == 1 && a->inputs[0] == x && b->inputs[0] == a_out);
    EXPECT(dead->removed && x->n_uses == 1 && x->uses[0].op == a);
    graph_compact(g);
    VERIFY(m);
    EXPECT_ORDER(g, c, b, a);
    return NULL;
}

static const char *check_topo_sort_reorders(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    /* File order X, C, B, A; data flow A -> B -> C; X is independent. */
    Var *a_out = var(g, "a"), *b_out = var(g, "b");
    Op *xo = node(g, "Relu", "X", x, NULL, "xo");
    Op *c = node(g, "Neg", "C", b_out, NULL, "c");
    Op *b = node(g, "Neg", "B", a_out, NULL, NULL);
    Op *a = node(g, "Neg", "A", x, NULL, NULL);
    must_ok(op_append_output(b, b_out), "op_append_output");
    must_ok(op_append_output(a, a_out), "op_append_output");
    output(g, out(c));
    output(g, out(xo));
    VERIFY(m);

    Diag d = {0};
    EXPECT(graph_topo_sort(g, &d) == 0 && d.code == 0);
    VERIFY(m);
    /* X was ready first and keeps its place; the chain follows in order. */
    EXPECT_ORDER(g, xo, a, b, c);
    EXPECT(g->changed);
    return NULL;
}

static const char *check_topo_sort_keeps_sorted_order(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    /* A diamond plus an independent op, already in a valid order that is not
     * the only valid one (B and C could swap; D could go anywhere). */
    Op *a = node(g, "Relu", "A", x, NULL, "a");
    Op *d = node(g, "Abs", "D", x, NULL, "d");
    Op *c = node(g, "Neg", "C", out(a), NULL, "c");
    Op *b = node(g, "Exp", "B", out(a), NULL, "b");
    Op *e = node(g, "Add", "E", out(b), out(c), "e");
    output(g, out(e));
    output(g, out(d));
    VERIFY(m);
    g->changed = false;

    Diag dg = {0};
    EXPECT(graph_topo_sort(g, &dg) == 0);
    VERIFY(m);
    EXPECT_ORDER(g, a, d, c, b, e);
    EXPECT(!g->changed); /* nothing moved, so nothing to rewrite */
    return NULL;
}

/* An If reading p from the outer scope depends on p's producer even though
 * the If itself has no input p. */
static const char *check_topo_sort_subgraph_dependency(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Var *p = var(g, "p");
    Op *iff = node(g, "If", "If", c, NULL, "r");
    Graph *then = branch(iff, "then_branch");
    /* nested one level deeper: If2 inside then_branch reads p in its branch */
    Op *iff2 = node(then, "If", "If2", c, NULL, "r2");
    Op *inner = node(branch(iff2, "then_branch"), "Neg", "T", p, NULL, "t");
    output(inner->graph, out(inner));
    output(then, out(iff2));
    Op *prod = node(g, "Relu", "P", x, NULL, NULL);
    must_ok(op_append_output(prod, p), "op_append_output");
    output(g, out(iff));
    VERIFY(m);
    EXPECT(g->ops[0] == iff && g->ops[1] == prod);

    Diag d = {0};
    EXPECT(graph_topo_sort(g, &d) == 0);
    VERIFY(m);
    EXPECT_ORDER(g, prod, iff);
    return NULL;
}

static const char *check_topo_sort_cycle(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Var *b_out = var(g, "b");
    Op *a = node(g, "Add", "A", x, b_out, "a"); /* a = A(x, b) */
    Op *b = node(g, "Relu", "B", out(a), NULL, NULL); /* b = B(a) */
    must_ok(op_append_output(b, b_out), "op_append_output");
    output(g, b_out);
    VERIFY(m); /* a cycle is still a consistent use graph */

    Diag d = {0};
    EXPECT(graph_topo_sort(g, &d) == -1);
    EXPECT(d.code != 0);
    if (!strstr(d.msg, "'A'") && !strstr(d.msg, "'B'"))
        return failf(__LINE__, "cycle message names neither A nor B: %s", d.msg);
    EXPECT_ORDER(g, a, b); /* failure leaves the order alone */
    VERIFY(m);
    return NULL;
}

/* The message says "node X is part of a cycle"; X must then be on the cycle,
 * not merely downstream of it. Here C reads the cycle's output and comes
 * first in the file. */
static const char *check_topo_sort_cycle_names_cycle_member(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Var *a_out = var(g, "a"), *b_out = var(g, "b");
    Op *c = node(g, "Neg", "C", a_out, NULL, "c"); /* downstream only */
    Op *a = node(g, "Add", "A", x, b_out, NULL);
    Op *b = node(g, "Relu", "B", a_out, NULL, NULL);
    must_ok(op_append_output(a, a_out), "op_append_output");
    must_ok(op_append_output(b, b_out), "op_append_output");
    output(g, out(c));
    VERIFY(m);
    (void)a;
    (void)b;

    Diag d = {0};
    EXPECT(graph_topo_sort(g, &d) == -1 && d.code != 0);
    if (strstr(d.msg, "'C'"))
        return failf(__LINE__, "message blames C, which is not on the cycle A<->B: %s", d.msg);
    EXPECT(strstr(d.msg, "'A'") || strstr(d.msg, "'B'"));
    return NULL;
}

/* ===================================================================== */
/* Fresh names                                                            */
/* ===================================================================== */

static const char *check_fresh_names(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    var(g, "x_1");
    Op *n = node(g, "If", "n", x, NULL, "r");
    node(g, "Relu", "n_1", x, NULL, "q");
    Graph *then = branch(n, "then_branch");
    node(then, "Neg", "inner", x, NULL, "s"); /* a value defined only in a subgraph */

    /* "x" and "x_1" exist: the next free one is x_2, and each call reserves
     * its result, so a second call cannot return it again. */
    const char *v1 = model_fresh_value_name(m, "x");
    const char *v2 = model_fresh_value_name(m, "x");
    EXPECT(v1 && v2 && strcmp(v1, "x_2") == 0 && strcmp(v2, "x_3") == 0);
    /* An unused base is returned as is, once. */
    const char *y1 = model_fresh_value_name(m, "y"), *y2 = model_fresh_value_name(m, "y");
    EXPECT(y1 && y2 && strcmp(y1, "y") == 0 && strcmp(y2, "y_1") == 0);
    /* Uniqueness is model-wide: a subgraph's names count too. */
    const char *s1 = model_fresh_value_name(m, "s");
    EXPECT(s1 && strcmp(s1, "s_1") == 0);
    EXPECT(graph_find_var(g, v1) == NULL && graph_find_var(then, s1) == NULL);
    /* The fresh name is usable for a new variable. */
    EXPECT(graph_new_var(g, v1) != NULL);
    EXPECT(graph_new_var(g, "x") == NULL); /* while a taken one is refused */

    const char *n1 = model_fresh_node_name(m, "n"), *n2 = model_fresh_node_name(m, "n");
    EXPECT(n1 && n2 && strcmp(n1, "n_2") == 0 && strcmp(n2, "n_3") == 0);
    const char *i1 = model_fresh_node_name(m, "inner");
    EXPECT(i1 && strcmp(i1, "inner_1") == 0);
    /* An op created with a fresh name does not collide with later ones. */
    node(g, "Relu", model_fresh_node_name(m, "relu"), x, NULL, NULL);
    const char *r = model_fresh_node_name(m, "relu");
    EXPECT(r && strcmp(r, "relu_1") == 0);
    /* Names defined after the sets were first read count as well, and so
     * do the names of what was removed since ("ever used"). */
    var(g, "late");
    Op *gone = node(g, "Neg", "gone", x, NULL, "gone_out");
    must_ok(graph_remove_op(gone, NULL), "graph_remove_op");
    graph_compact(g);
    const char *late = model_fresh_value_name(m, "late");
    const char *go = model_fresh_value_name(m, "gone_out"), *gn = model_fresh_node_name(m, "gone");
    EXPECT(late && go && gn && !strcmp(late, "late_1") && !strcmp(go, "gone_out_1") &&
           !strcmp(gn, "gone_1"));
    VERIFY(m);
    return NULL;
}

/* ===================================================================== */
/* graph_verify must be able to fail                                      */
/* ===================================================================== */

static const char *expect_verify_fails(Model *m, int line, const char *what)
{
    Diag d = {0};
    if (graph_verify(m->graph, &d) == 0)
        return failf(line, "graph_verify accepted %s", what);
    if (d.code == 0 || !d.msg[0])
        return failf(line, "graph_verify failed on %s without a diagnostic", what);
    return NULL;
}

#define EXPECT_VERIFY_FAILS(m, what)                                 \
    do {                                                            \
        const char *e_ = expect_verify_fails((m), __LINE__, (what)); \
        if (e_)                                                     \
            return e_;                                              \
    } while (0)

static const char *check_verify_catches_corruption(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *a = node(g, "Add", "A", x, x, "y");
    Var *y = out(a);
    Op *iff = node(g, "If", "If", c, NULL, "r");
    Op *t = node(branch(iff, "then_branch"), "Neg", "T", y, NULL, "t");
    output(t->graph, out(t));
    output(g, out(iff));
    VERIFY(m);

    /* A missing use entry (x's use by A slot 1 forgotten). */
    x->n_uses--;
    EXPECT_VERIFY_FAILS(m, "a use list missing an entry");
    x->n_uses++;
    VERIFY(m);

    /* A duplicated use entry in place of another. */
    Use saved = x->uses[1];
    x->uses[1] = x->uses[0];
    EXPECT_VERIFY_FAILS(m, "a duplicated use entry");
    x->uses[1] = saved;
    VERIFY(m);

    /* A stale use: the entry claims a slot that reads something else. */
    x->uses[1].slot = 5;
    EXPECT_VERIFY_FAILS(m, "a use naming a slot the op does not have");
    x->uses[1].slot = 1;
    VERIFY(m);

    /* The only use of y is inside the subgraph: the check must recurse. */
    y->n_uses = 0;
    EXPECT_VERIFY_FAILS(m, "a missing use by an op inside a subgraph");
    y->n_uses = 1;
    VERIFY(m);

    /* A wrong producer slot. */
    y->producer_slot = 1;
    EXPECT_VERIFY_FAILS(m, "a wrong producer slot");
    y->producer_slot = 0;
    VERIFY(m);
    return NULL;
}

/* ===================================================================== */
/* Tensor helpers                                                         */
/* ===================================================================== */

static const char *check_dims_numel(Model *m)
{
    (void)m;
    const int64_t big = (int64_t)1 << 32, half_big = (int64_t)1 << 31;
    struct {
        int64_t dims[3];
        size_t n;
        int64_t want;
    } cases[] = {
        {{2, 3, 4}, 3, 24},
        {{0}, 0, 1},                         /* a scalar has one element */
        {{0, INT64_MAX}, 2, 0},              /* empty, however large the rest */
        {{-1}, 1, -1},                       /* symbolic/negative dim */
        {{2, -3}, 2, -1},
        {{0, -1}, 2, -1},                    /* negative wins over a zero */
        {{INT64_MAX}, 1, INT64_MAX},
        {{INT64_MAX, 2}, 2, -1},             /* overflow */
        {{big, half_big}, 2, -1},            /* exactly 2^63: overflow */
        {{big, half_big - 1}, 2, INT64_MAX - big + 1}, /* 2^63 - 2^32 fits */
        {{half_big, half_big, 4}, 3, -1},    /* overflow in the last step */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t got = dims_numel(cases[i].dims, cases[i].n);
        if (got != cases[i].want)
            return failf(__LINE__, "case %zu: dims_numel = %lld, want %lld", i, (long long)got,
                         (long long)cases[i].want);
    }
    return NULL;
}

static uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct HalfCase {
    float f;
    uint16_t h;
} HalfCase;

/* Values exactly representable in float16: both directions must be exact. */
static const char *check_half_exact(Model *m)
{
    (void)m;
    const HalfCase cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3c00},
        {-2.0f, 0xc000},
        {0.5f, 0x3800},
        {65504.0f, 0x7bff},        /* largest finite */
        {-65504.0f, 0xfbff},
        {0x1p-14f, 0x0400},        /* smallest normal */
        {0x1p-24f, 0x0001},        /* smallest subnormal */
        {-0x1p-24f, 0x8001},
        {0x1p-15f, 0x0200},        /* a mid subnormal */
        {0x3ffp-24f, 0x03ff},      /* largest subnormal */
        {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint16_t h = float_to_half(cases[i].f);
        float back = half_to_float(cases[i].h);
        if (h != cases[i].h)
            return failf(__LINE__, "float_to_half(%a) = 0x%04x, want 0x%04x", cases[i].f, h,
                         cases[i].h);
        if (fbits(back) != fbits(cases[i].f))
            return failf(__LINE__, "half_to_float(0x%04x) = %a, want %a", cases[i].h, back,
                         cases[i].f);
    }
    /* NaN stays NaN both ways. */
    uint16_t hn = float_to_half(NAN);
    EXPECT((hn & 0x7c00) == 0x7c00 && (hn & 0x03ff) != 0);
    EXPECT(isnan(half_to_float(0x7e00)) && isnan(half_to_float(0xfc01)));

    /* Every finite half survives half -> float -> half. */
    unsigned bad = 0, first = 0;
    for (unsigned h = 0; h <= 0xffff; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        if (float_to_half(half_to_float((uint16_t)h)) != h && !bad++)
            first = h;
    }
    if (bad)
        return failf(__LINE__, "%u finite halves do not round-trip; first 0x%04x -> %a -> 0x%04x",
                     bad, first, half_to_float((uint16_t)first),
                     float_to_half(half_to_float((uint16_t)first)));
    return NULL;
}

/* Inexact floats: round to nearest, ties to even (derived by hand). */
static const char *check_half_rounding(Model *m)
{
    (void)m;
    const HalfCase cases[] = {
        /* half ulp at 1.0 is 2^-10, so 2^-11 above 1 is a tie */
        {1.0f + 0x1p-11f, 0x3c00},             /* tie, 0x3c00 even: down */
        {1.0f + 0x3p-11f, 0x3c02},             /* tie between 3c01/3c02: up to even */
        {1.0f + 0x1p-11f + 0x1p-23f, 0x3c01},  /* just above the tie: up */
        {-(1.0f + 0x3p-11f), 0xbc02},          /* sign is independent */
        {65519.0f, 0x7bff},                    /* below the 65504/65536 midpoint */
        {65520.0f, 0x7c00},                    /* the midpoint: even is inf */
        {1e6f, 0x7c00},                        /* overflow */
        /* subnormals: the spacing is 2^-24 */
        {0x1p-25f, 0x0000},                    /* tie between 0 and 2^-24: 0 */
        {0x1.004p-25f, 0x0001},                /* just above: smallest subnormal */
        {0x3p-25f, 0x0002},                    /* 1.5 * 2^-24: tie, up to even 2 */
        {0x5p-25f, 0x0002},                    /* 2.5 * 2^-24: tie, down to even 2 */
        {0x1p-14f - 0x1p-25f, 0x0400},         /* tie 3ff/400: carries into normal */
        {1e-8f, 0x0000},                       /* below half the smallest: zero */
        {-1e-8f, 0x8000},                      /* ... keeping the sign */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint16_t h = float_to_half(cases[i].f);
        if (h != cases[i].h)
            return failf(__LINE__, "float_to_half(%a) = 0x%04x, want 0x%04x", cases[i].f, h,
                         cases[i].h);
    }
    return NULL;
}

static const char *check_bfloat16_exact(Model *m)
{
    (void)m;
    const HalfCase cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3f80},
        {-2.0f, 0xc000},
        {65536.0f, 0x4780},
        {0x1p-126f, 0x0080},   /* smallest normal */
        {0x1p-133f, 0x0001},   /* smallest subnormal */
        {0xffp120f, 0x7f7f},   /* largest finite, (2 - 2^-7) * 2^127 */
        {INFINITY, 0x7f80},
        {-INFINITY, 0xff80},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint16_t h = float_to_bfloat16(cases[i].f);
        float back = bfloat16_to_float(cases[i].h);
        if (h != cases[i].h)
            return failf(__LINE__, "float_to_bfloat16(%a) = 0x%04x, want 0x%04x", cases[i].f, h,
                         cases[i].h);
        if (fbits(back) != fbits(cases[i].f))
            return failf(__LINE__, "bfloat16_to_float(0x%04x) = %a, want %a", cases[i].h, back,
                         cases[i].f);
    }
    /* A NaN whose payload lies only in the low 16 bits must not truncate to inf. */
    uint16_t bn = float_to_bfloat16(from_bits(0x7f800001u));
    EXPECT((bn & 0x7f80) == 0x7f80 && (bn & 0x7f) != 0);
    EXPECT(isnan(bfloat16_to_float(0x7fc0)));

    unsigned bad = 0, first = 0;
    for (unsigned h = 0; h <= 0xffff; h++) {
        if ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
            continue; /* NaN */
        if (float_to_bfloat16(bfloat16_to_float((uint16_t)h)) != h && !bad++)
            first = h;
    }
    if (bad)
        return failf(__LINE__, "%u bfloat16 values do not round-trip; first 0x%04x", bad, first);
    return NULL;
}

static const char *check_bfloat16_rounding(Model *m)
{
    (void)m;
    const HalfCase cases[] = {
        /* half ulp at 1.0 is 2^-8 (7 mantissa bits) */
        {1.0f + 0x1p-8f, 0x3f80},              /* tie: down to even */
        {1.0f + 0x3p-8f, 0x3f82},              /* tie: up to even */
        {1.0f + 0x1p-8f + 0x1p-23f, 0x3f81},   /* above the tie */
        {-(1.0f + 0x3p-8f), 0xbf82},
        {0x1ffp119f, 0x7f80},                  /* tie above the largest finite: inf */
        {0x1p-134f, 0x0000},                   /* half the smallest subnormal: tie, 0 */
        {0x3p-134f, 0x0002},                   /* 1.5 smallest: tie, up to even */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint16_t h = float_to_bfloat16(cases[i].f);
        if (h != cases[i].h)
            return failf(__LINE__, "float_to_bfloat16(%a) = 0x%04x, want 0x%04x", cases[i].f, h,
                         cases[i].h);
    }
    return NULL;
}

/* Sets then gets element i, expecting `want` back and `bytes` in memory
 * (little-endian, whatever the host). */
static const char *set_get(Tensor *t, size_t i, double v, double want, const uint8_t *bytes,
                           int line)
{
    size_t size = dtype_size(t->dtype);
    tensor_set_f64(t, i, v);
    double got = tensor_get_f64(t, i);
    if (got != want)
        return failf(line, "%s: set %.17g, got %.17g, want %.17g", dtype_name(t->dtype), v, got,
                     want);
    if (bytes && memcmp((const uint8_t *)t->data + i * size, bytes, size) != 0)
        return failf(line, "%s: set %.17g: wrong bytes in memory", dtype_name(t->dtype), v);
    return NULL;
}

#define SET_GET(t, i, v, want, ...)                                                  \
    do {                                                                            \
        const uint8_t *b_ = (const uint8_t[]){__VA_ARGS__};                         \
        const char *e_ = set_get((t), (i), (v), (want), b_, __LINE__);              \
        if (e_)                                                                     \
            return e_;                                                              \
    } while (0)

static const char *check_tensor_get_set(Model *m)
{
    const int64_t three[] = {3};
    Tensor *f = must(tensor_new(&m->arena, DT_FLOAT, 1, three), "tensor_new");
    Tensor *d = must(tensor_new(&m->arena, DT_DOUBLE, 1, three), "tensor_new");
    Tensor *h = must(tensor_new(&m->arena, DT_FLOAT16, 1, three), "tensor_new");
    Tensor *i8 = must(tensor_new(&m->arena, DT_INT8, 1, three), "tensor_new");
    Tensor *i64 = must(tensor_new(&m->arena, DT_INT64, 1, three), "tensor_new");
    EXPECT(f->nbytes == 12 && d->nbytes == 24 && h->nbytes == 6 && i8->nbytes == 3);
    EXPECT(tensor_numel(i64) == 3 && tensor_get_f64(f, 2) == 0.0); /* zeroed */

    SET_GET(f, 0, 1.5, 1.5, 0x00, 0x00, 0xc0, 0x3f);
    SET_GET(f, 1, 0.1, (double)0.1f, 0xcd, 0xcc, 0xcc, 0x3d); /* rounded to float */
    SET_GET(f, 2, -3e38, (double)-3e38f, 0xe6, 0xb1, 0x61, 0xff);
    SET_GET(d, 1, 0.1, 0.1, 0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f); /* exact */
    SET_GET(d, 2, -1e300, -1e300, 0x9c, 0x75, 0x00, 0x88, 0x3c, 0xe4, 0x37, 0xfe);
    SET_GET(h, 0, 1.0 / 3.0, 0.333251953125, 0x55, 0x35); /* 0x3555 */
    SET_GET(h, 1, 65504.0, 65504.0, 0xff, 0x7b);
    SET_GET(h, 2, -0.5, -0.5, 0x00, 0xb8);
    SET_GET(i8, 0, -128.0, -128.0, 0x80);
    SET_GET(i8, 1, 127.0, 127.0, 0x7f);
    SET_GET(i8, 2, -5.0, -5.0, 0xfb);
    SET_GET(i64, 0, -3.0, -3.0, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
    SET_GET(i64, 1, 9007199254740992.0, 9007199254740992.0, /* 2^53 */
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00);
    SET_GET(i64, 2, -4611686018427387904.0, -4611686018427387904.0, /* -2^62 */
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0);
    /* Neighbouring elements were not disturbed. */
    EXPECT(tensor_get_f64(f, 0) == 1.5 && tensor_get_f64(i8, 0) == -128.0);
    return NULL;
}

/* ===================================================================== */
/* linear-time edits: insertion, batch removal, facts                     */
/* ===================================================================== */

static const char *order_names(const Graph *g, const char *const *want, size_t n)
{
    if (g->n_ops != n)
        return failf(__LINE__, "%zu operations, expected %zu", g->n_ops, n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(g->ops[i]->name, want[i]) != 0)
            return failf(__LINE__, "operation %zu is %s, expected %s", i, g->ops[i]->name,
                         want[i]);
    return NULL;
}

/* Each insertion goes right after its anchor, later ones before earlier
 * ones at the same anchor, whether placed at once or at graph_compact. */
static const char *check_insert_op_order(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *a = node(g, "Relu", "A", x, NULL, "a");
    node(g, "Relu", "Z", out(a), NULL, "z");
    Op *p = must(graph_insert_op(g, a, "Relu", "P"), "insert P");  /* A P Z */
    must(graph_insert_op(g, a, "Relu", "Q"), "insert Q");           /* A Q P Z */
    must(graph_insert_op(g, p, "Relu", "R"), "insert R");           /* A Q P R Z */
    Op *s = must(graph_insert_op(g, NULL, "Relu", "S"), "append S"); /* ... Z S */
    must(graph_insert_op(g, s, "Relu", "T"), "insert T after the last"); /* ... S T */
    graph_compact(g);
    const char *want[] = {"A", "Q", "P", "R", "Z", "S", "T"};
    return order_names(g, want, 7);
}

static bool dead_named_d(const Op *op, void *ctx)
{
    (void)ctx;
    return op->name[0] == 'D';
}

/* A value read by many operations, some of them dead and feeding each
 * other: one call removes them all and keeps the live readers in order. */
static const char *check_remove_ops_where(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Op *l1 = node(g, "Relu", "L1", x, NULL, "l1");
    Op *d1 = node(g, "Relu", "D1", x, NULL, "d1");
    Op *l2 = node(g, "Add", "L2", x, out(l1), "l2");
    Op *d2 = node(g, "Add", "D2", x, out(d1), "d2");
    Op *l3 = node(g, "Relu", "L3", x, NULL, "l3");
    output(g, out(l2));
    output(g, out(l3));
    VERIFY(m);
    EXPECT(graph_remove_ops_where(g, dead_named_d, NULL) == 0);
    VERIFY(m);
    EXPECT(d1->removed && d2->removed && !l1->removed && !l2->removed && !l3->removed);
    EXPECT(out(d1)->removed && out(d2)->removed && graph_find_var(g, "d1") == NULL);
    EXPECT(x->n_uses == 3 && x->uses[0].op == l1 && x->uses[1].op == l2 && x->uses[2].op == l3);
    return NULL;
}

static bool drop_and_count(Var *v, void *ctx)
{
    (*(int *)ctx)++;
    return strcmp(v->name, "keep") != 0;
}

static const char *check_remove_params_where(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x");
    Var *u1 = param(g, "u1"), *used = param(g, "used"), *keep = param(g, "keep");
    Var *u2 = param(g, "u2");
    Op *a = node(g, "Add", "A", x, used, "y");
    output(g, out(a));
    int asked = 0;
    EXPECT(graph_remove_params_where(g, drop_and_count, &asked) == 2);
    VERIFY(m);
    EXPECT(asked == 3); /* u1, keep, u2: never `used`, which A reads */
    EXPECT(u1->removed && u2->removed && !keep->removed && !used->removed);
    EXPECT(g->n_params == 2 && g->params[0] == used && g->params[1] == keep);
    return NULL;
}

/* Runs shape inference on m for the value_* functions, as the pipeline
 * does at the start of a round; NULL, or why not. */
static const char *with_facts(Model *m)
{
    static Opset onnx13 = {"", 13};
    m->opsets = &onnx13;
    m->n_opsets = 1;
    Diag d = {0};
    m->facts = infer_model(m, &d, ops_rule);
    return m->facts ? NULL : "infer_model failed";
}

static void drop_facts(Model *m)
{
    infer_free(m->facts);
    m->facts = NULL;
    m->opsets = NULL;
    m->n_opsets = 0;
}

/* The element type and rank at the end of a chain far longer than any
 * walk limit; unknown without facts. */
static const char *check_value_dtype_deep_chain(Model *m)
{
    Graph *g = m->graph;
    Var *v = input(g, "x");
    int64_t dims[2] = {2, 3};
    v->type = (TypeInfo){DT_FLOAT, 2, dims, NULL};
    char name[32];
    for (int i = 0; i < 30000; i++) {
        snprintf(name, sizeof name, "r%d", i);
        v = out(node(g, "Relu", name, v, NULL, name));
    }
    EXPECT(value_dtype(v) == 0 && value_rank(v) == -1);
    const char *err = with_facts(m);
    if (err)
        return err;
    Var *mid = graph_find_var(g, "r15000");
    bool ok = value_dtype(v) == DT_FLOAT && value_rank(v) == 2 && value_dim(v, 1) == 3 &&
              mid && value_dtype(mid) == DT_FLOAT;
    drop_facts(m);
    EXPECT(ok);
    return NULL;
}

/* A cycle of type-keeping operations tells nothing, and inference ends. */
static const char *check_value_dtype_cycle(Model *m)
{
    Graph *g = m->graph;
    Var *a = var(g, "a");
    Op *r1 = node(g, "Relu", "R1", a, NULL, "b");
    Op *r2 = node(g, "Relu", "R2", out(r1), NULL, NULL);
    must_ok(op_append_output(r2, a), "op_append_output");
    const char *err = with_facts(m);
    if (err)
        return err;
    bool ok = value_dtype(out(r1)) == 0 && value_dtype(a) == 0;
    drop_facts(m);
    EXPECT(ok);
    return NULL;
}

/* ===================================================================== */
/* graph_inline_subgraph                                                  */
/* ===================================================================== */

/* The then branch of If replaces it: the branch value a and node T1, whose
 * names the main graph uses after the If, are renamed (same objects); the
 * nested If In, reading a, gets the main graph as parent; T3 writes the If's
 * output r; the branch initializer k moves; the else branch and the
 * condition are detached; the moved nodes sit where the If was. */
static const char *check_inline_subgraph(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *iff = node(g, "If", "If", c, NULL, "r");
    Var *r = out(iff);
    Graph *then = branch(iff, "then_branch"), *els = branch(iff, "else_branch");
    Op *t1 = node(then, "Neg", "T1", x, NULL, "a");
    Var *a = out(t1);
    Op *in = node(then, "If", "In", c, NULL, "n");
    Op *abs_a = node(branch(in, "then_branch"), "Abs", "U", a, NULL, "u");
    output(abs_a->graph, out(abs_a));
    Var *k = param(then, "k");
    Op *t2 = node(then, "Add", "T2", a, out(in), "t2");
    Op *t3 = node(then, "Mul", "T3", out(t2), k, "tout");
    output(then, out(t3));
    Op *e = node(els, "Neg", "E", x, NULL, "e");
    output(els, out(e));
    Op *b = node(g, "Relu", "T1", r, NULL, "a"); /* the main graph's a and T1 */
    output(g, out(node(g, "Add", "C", out(b), r, "y")));
    VERIFY(m);

    const char *why = NULL;
    EXPECT(graph_inline_subgraph(then, &why) == 0);
    graph_compact(g);
    VERIFY(m);
    const char *want[] = {t1->name, "In", "T2", "T3", "T1", "C"};
    const char *err = order_names(g, want, 6);
    if (err)
        return err;
    EXPECT(iff->removed && c->n_uses == 1 && has_use(c, in, 0)); /* the If's read is gone */
    EXPECT(!has_use(x, e, 0) && x->n_uses == 1 && has_use(x, t1, 0));
    EXPECT(strcmp(t1->name, "T1") != 0 && t1->graph == g && t1->changed);
    EXPECT(a->graph == g && strcmp(a->name, "a") != 0 && graph_find_var(g, a->name) == a);
    EXPECT(graph_find_var(g, "a") == out(b));
    EXPECT(abs_a->graph->parent == g && abs_a->inputs[0] == a && abs_a->changed);
    EXPECT(t3->outputs[0] == r && r->producer == t3 && has_use(r, b, 0));
    EXPECT(k->graph == g && g->n_params == 1 && g->params[0] == k && has_use(k, t3, 1));
    return NULL;
}

/* A branch returning an outer value (x) to a graph output (r0), an
 * initializer of its own (k) and a node's value twice (t, to r2 and to the
 * graph output r3): readers of r1 read k; r0 and r3 keep their names
 * through Identities placed after the moved node. */
static const char *check_inline_subgraph_outputs(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *iff = node(g, "If", "If", c, NULL, "r0");
    Var *r[4] = {out(iff), var(g, "r1"), var(g, "r2"), var(g, "r3")};
    for (int i = 1; i < 4; i++)
        must_ok(op_append_output(iff, r[i]), "op_append_output");
    Graph *then = branch(iff, "then_branch");
    Var *k = param(then, "k");
    Op *t = node(then, "Neg", "T", x, NULL, "t");
    output(then, x);
    output(then, k);
    output(then, out(t));
    output(then, out(t));
    output(g, r[0]);
    Op *u1 = node(g, "Relu", "U1", r[1], NULL, "y1");
    Op *u2 = node(g, "Relu", "U2", r[2], NULL, "y2");
    output(g, out(u1));
    output(g, out(u2));
    output(g, r[3]);
    VERIFY(m);

    const char *why = NULL;
    EXPECT(graph_inline_subgraph(then, &why) == 0);
    graph_compact(g);
    VERIFY(m);
    EXPECT(g->n_ops == 5 && g->ops[0] == t); /* T, two Identities, U1, U2 */
    Op *id0 = g->ops[1], *id3 = g->ops[2];
    EXPECT(op_is(id0, "Identity") && id0->inputs[0] == x && id0->outputs[0] == r[0]);
    EXPECT(op_is(id3, "Identity") && id3->inputs[0] == r[2] && id3->outputs[0] == r[3]);
    EXPECT(u1->inputs[0] == k && r[1]->removed && k->graph == g);
    EXPECT(t->outputs[0] == r[2] && u2->inputs[0] == r[2] && x->n_output_lists == 0);
    return NULL;
}

/* Refusals change nothing: a Loop body (it has inputs), and under IR < 4 a
 * branch with an initializer inside a subgraph (which takes no new ones). */
static const char *check_inline_subgraph_refusals(Model *m)
{
    Graph *g = m->graph;
    Var *x = input(g, "x"), *c = input(g, "c");
    Op *loop = node(g, "Loop", "L", c, NULL, "l");
    Graph *body = branch(loop, "body");
    Op *in = node(body, "Neg", "B", input(body, "i"), NULL, "b");
    output(body, out(in));
    output(g, out(loop));
    Op *iff = node(body, "If", "If", c, NULL, "r");
    Graph *then = branch(iff, "then_branch");
    Op *t = node(then, "Add", "T", x, param(then, "k"), "t");
    output(then, out(t));
    output(body, out(iff));
    VERIFY(m);

    const char *why = NULL;
    Snap s;
    snap_take(g, &s);
    EXPECT(graph_inline_subgraph(body, &why) == -1 && strstr(why, "inputs"));
    EXPECT_UNCHANGED(g, &s);
    m->ir_version = 3;
    snap_take(body, &s);
    EXPECT(graph_inline_subgraph(then, &why) == -1 && strstr(why, "initializers"));
    EXPECT_UNCHANGED(body, &s);
    EXPECT(!m->oom && !iff->removed && t->graph == then);
    VERIFY(m);
    return NULL;
}

int main(void)
{
    RUN(use_lists_after_build);
    RUN(op_set_input);
    RUN(op_recreate_as);
    RUN(use_removal_order);
    RUN(opset_and_edit_count);
    RUN(replace_all_uses);
    RUN(replace_all_uses_with_itself);
    RUN(remove_op_unused);
    RUN(remove_op_with_replacement);
    RUN(remove_op_refuses_used_output);
    RUN(remove_op_refuses_graph_output);
    RUN(remove_op_refusal_with_replacement_is_atomic);
    RUN(remove_op_with_subgraph);
    RUN(outputs_to_params);
    RUN(outputs_to_params_old_ir);
    RUN(remove_op_into_output);
    RUN(remove_op_into_output_refusals);
    RUN(remove_param);
    RUN(remove_param_now);
    RUN(drop_var);
    RUN(drop_var_refuses_parameter);
    RUN(drop_var_unshadows_earlier_write);
    RUN(drop_var_unshadows_past_dropped);
    RUN(topo_sort_reorders);
    RUN(isolated_out_of_order);
    RUN(topo_sort_keeps_sorted_order);
    RUN(topo_sort_subgraph_dependency);
    RUN(topo_sort_cycle);
    RUN(topo_sort_cycle_names_cycle_member);
    RUN(fresh_names);
    RUN(verify_catches_corruption);
    RUN(dims_numel);
    RUN(half_exact);
    RUN(half_rounding);
    RUN(bfloat16_exact);
    RUN(bfloat16_rounding);
    RUN(tensor_get_set);
    RUN(insert_op_order);
    RUN(remove_ops_where);
    RUN(remove_params_where);
    RUN(value_dtype_deep_chain);
    RUN(value_dtype_cycle);
    RUN(inline_subgraph);
    RUN(inline_subgraph_outputs);
    RUN(inline_subgraph_refusals);
    printf("test_graph: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
