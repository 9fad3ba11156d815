/* test_infer.c - unit tests for symbolic dims (core/infer/dim.h) and shape
 * inference (core/infer/infer.h, the op rules in core/ops/ops_*.c).
 *
 *   test_infer               self-test; last line "test_infer: N passed, M failed"
 *   test_infer --ops         lists the op types the registry has rules for
 *   test_infer --dump MODEL  infers MODEL and prints one line per value of the
 *                            main graph: name<TAB>dtype<TAB>dims, dims as
 *                            "[1,3,seq]" ("?" unknown), then "#unknown-op\tT"
 *                            and "#issue\tsubject\tdetail" lines
 *                            (tests/infer_oracle.py reads them).
 *
 * The self-test builds tiny graphs through the graph API. Graph inputs and
 * value_info entries get their declared type from text
 * ("float:batch,3,224,224", set_decl()); expected shapes are worked out
 * by hand from the operators' formulas. A '*' in an expected shape matches
 * any text (a fresh symbol such as unk_conv_0). */
#include <fnmatch.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/infer/infer.h"
#include "../core/ops/eval.h"
#include "../core/ops/ops.h"
#include "../core/ops/ops_signatures.h"
#include "../core/ops/ops_registry.h"
#include "../onnx/load.h"
#include "../onnx/source.h"

#include "check.h"


static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "test setup failed: %s\n", what);
        exit(2);
    }
    return p;
}

/* --- dims --- */

static DimTable *DT;

static const char *str(Dim d)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    return dim_str(DT, d, buf[k], sizeof buf[k]);
}

#define EXPECT_STR(d, want)                                                        \
    do {                                                                           \
        const char *got_ = str(d);                                                 \
        if (fnmatch((want), got_, 0) != 0)                                         \
            return failf(__LINE__, "%s is \"%s\", expected \"%s\"", #d, got_, want); \
    } while (0)

typedef const char *(*DimCheck)(void);

static void run_dim(const char *name, DimCheck fn)
{
    DT = must(dim_table_new(), "dim_table_new");
    const char *err = fn();
    if (!err && dim_table_oom(DT))
        err = "dim table ran out of memory";
    printf(err ? "FAIL %s: %s\n" : "ok %s\n", name, err);
    n_failed += err != NULL;
    n_passed += err == NULL;
    dim_table_free(DT);
}

#define C(v) dim_const(DT, v)
#define S(n) dim_sym(DT, n)

static const char *check_dim_interning(void)
{
    EXPECT(C(3) == C(3) && C(3) != C(4));
    EXPECT(S("seq") == S("seq") && S("seq") != S("batch"));
    EXPECT(dim_add(DT, S("seq"), C(1)) == dim_add(DT, C(1), S("seq")));
    EXPECT(dim_mul(DT, S("batch"), S("seq")) == dim_mul(DT, S("seq"), S("batch")));
    EXPECT(dim_is_const(C(-7)) && dim_value(C(-7)) == -7 && !dim_is_const(S("seq")));
    EXPECT(!strcmp(dim_sym_name(DT, S("seq")), "seq") && !dim_sym_name(DT, C(2)));
    return NULL;
}

static const char *check_dim_canonical(void)
{
    Dim s = S("seq"), b = S("batch");
    Dim sum = dim_add(DT, dim_add(DT, s, C(1)), dim_sub(DT, s, C(1)));
    EXPECT(sum == dim_mul(DT, C(2), s));
    EXPECT(dim_sub(DT, dim_add(DT, s, b), b) == s);
    EXPECT(dim_sub(DT, s, s) == C(0));
    EXPECT(dim_mul(DT, dim_add(DT, s, C(1)), C(0)) == C(0));
    /* (s+1)*(s-1) = s*s - 1 */
    EXPECT(dim_mul(DT, dim_add(DT, s, C(1)), dim_sub(DT, s, C(1))) ==
           dim_sub(DT, dim_mul(DT, s, s), C(1)));
    EXPECT_STR(dim_add(DT, dim_mul(DT, C(2), s), C(1)), "2\\*seq+1");
    EXPECT_STR(dim_sub(DT, s, C(1)), "seq-1");
    EXPECT_STR(dim_sub(DT, C(3), s), "-seq+3");
    /* symbols keep the order they were first seen in (seq before batch here) */
    EXPECT_STR(dim_mul(DT, b, s), "seq\\*batch");
    EXPECT_STR(C(-12), "-12");
    return NULL;
}

static const char *check_dim_exact_division(void)
{
    Dim s = S("seq"), b = S("batch");
    Dim half = dim_div_exact(DT, s, 2);
    EXPECT_STR(half, "seq/2");
    EXPECT(dim_mul(DT, half, C(2)) == s);
    EXPECT(dim_add(DT, half, half) == s);
    EXPECT(dim_div_exact(DT, dim_mul(DT, C(6), s), 3) == dim_mul(DT, C(2), s));
    EXPECT_STR(dim_div_exact(DT, dim_add(DT, s, C(1)), 2), "(seq+1)/2");
    /* Reshape's -1: (batch*seq*768) / (batch*12*64) = seq */
    Dim total = dim_mul(DT, dim_mul(DT, b, s), C(768));
    EXPECT(dim_div_exact_dim(DT, total, dim_mul(DT, b, C(768))) == s);
    EXPECT(dim_div_exact_dim(DT, dim_mul(DT, b, s), s) == b);
    EXPECT(dim_div_exact_dim(DT, s, s) == C(1));
    EXPECT_STR(dim_div_exact_dim(DT, s, b), "unk_*");
    /* a constant that is not a whole number is never a value */
    EXPECT_STR(dim_div_exact(DT, C(3), 2), "unk_*");
    return NULL;
}

static const char *check_dim_floor_ceil(void)
{
    Dim s = S("seq");
    EXPECT(dim_floordiv(DT, C(7), 2) == C(3));
    EXPECT(dim_floordiv(DT, C(-7), 2) == C(-4));
    EXPECT(dim_ceildiv(DT, C(7), 2) == C(4));
    EXPECT(dim_ceildiv(DT, C(-7), 2) == C(-3));
    EXPECT(dim_floordiv(DT, dim_add(DT, dim_mul(DT, C(2), s), C(1)), 2) == s);
    EXPECT(dim_floordiv(DT, dim_add(DT, dim_mul(DT, C(4), s), C(-1)), 2) ==
           dim_sub(DT, dim_mul(DT, C(2), s), C(1)));
    EXPECT(dim_ceildiv(DT, dim_mul(DT, C(2), s), 2) == s);
    EXPECT(dim_floordiv(DT, dim_div_exact(DT, s, 2), 1) == dim_div_exact(DT, s, 2));
    /* floor(seq/2) cannot be told: a fresh symbol, never seq/2 */
    dim_table_set_origin(DT, "pool/1");
    EXPECT_STR(dim_floordiv(DT, s, 2), "unk_pool_1_0");
    EXPECT_STR(dim_ceildiv(DT, s, 2), "unk_pool_1_1");
    return NULL;
}

static const char *check_dim_overflow_is_fresh(void)
{
    Dim big = C(INT64_MAX);
    EXPECT_STR(dim_mul(DT, big, C(2)), "unk_*");
    EXPECT_STR(dim_add(DT, big, C(1)), "unk_*");
    EXPECT_STR(dim_mul(DT, big, S("seq")), "9223372036854775807\\*seq");
    EXPECT_STR(dim_mul(DT, dim_mul(DT, big, S("seq")), C(2)), "unk_*");
    Dim p = S("seq");
    for (int i = 0; i < 8; i++) /* degree 9 exceeds the form's bound */
        p = dim_mul(DT, p, S("seq"));
    EXPECT_STR(p, "unk_*");
    return NULL;
}

static const char *check_dim_fresh_names(void)
{
    dim_table_set_origin(DT, "conv3");
    Dim a = dim_fresh(DT), b = dim_fresh(DT);
    EXPECT(a != b);
    EXPECT_STR(a, "unk_conv3_0");
    EXPECT_STR(b, "unk_conv3_1");
    dim_table_set_origin(DT, "conv3"); /* the same origin again: still unique */
    EXPECT_STR(dim_fresh(DT), "unk_conv3_2");
    /* a declared name equal to a fresh one is the declared symbol, and a
     * fresh name does not avoid it: the same node names its sizes the same
     * on every run */
    Dim declared = S("unk_conv3_3");
    EXPECT(declared != a && S("unk_conv3_0") != a);
    Dim c = dim_fresh(DT);
    EXPECT(c != declared && !dim_has_fresh(DT, declared));
    EXPECT_STR(c, "unk_conv3_3");
    EXPECT(dim_nonneg(dim_add(DT, a, C(1))) && !dim_nonneg(dim_sub(DT, a, C(1))));
    EXPECT(dim_has_fresh(DT, dim_add(DT, a, C(1))) && !dim_has_fresh(DT, S("seq")));
    return NULL;
}

/* --- inference on built graphs --- */

static Model *M;
static InferRun *R;

/* The test's declared types: "dtype:d0,d1,..." with dtype a number or
 * "float"/"int64"/"bool", dims numbers or names; "float:?" has no shape. */
/* Sets v's declared type from text: "float:batch,3,224,224", "int64:?" (no
 * shape), symbolic dims by name. */
static void set_decl(Var *v, const char *decl)
{
    Arena *a = &M->arena;
    char *s = must(arena_strdup(a, decl), "decl"), *save = NULL;
    char *colon = must(strchr(s, ':'), "decl without ':'");
    *colon = '\0';
    TypeInfo *t = &v->type;
    t->elem_type = !strcmp(s, "float") ? DT_FLOAT : !strcmp(s, "int64") ? DT_INT64
                 : !strcmp(s, "bool")  ? DT_BOOL
                                       : atoi(s);
    t->rank = -1;
    if (!strcmp(colon + 1, "?"))
        return;
    t->dims = must(arena_array(a, 16, sizeof *t->dims), "dims");
    t->dim_params = must(arena_array(a, 16, sizeof *t->dim_params), "dim_params");
    int n = 0;
    for (char *d = strtok_r(colon + 1, ",", &save); d && n < 16; d = strtok_r(NULL, ",", &save), n++) {
        bool num = (*d >= '0' && *d <= '9');
        t->dims[n] = num ? atoll(d) : -1;
        t->dim_params[n] = num ? NULL : d;
    }
    t->rank = n;
}

static Bytes text(const char *s) { return (Bytes){(const uint8_t *)s, strlen(s)}; }

static Var *find(Graph *g, const char *name) { return must(graph_find_var(g, name), name); }

static int add_vi(Graph *g, const char *name, const char *decl)
{
    Var *v = find(g, name);
    set_decl(v, decl);
    return graph_add_value_info(g, v, text(decl));
}

static Var *in_decl(Graph *g, const char *name, const char *decl)
{
    Var *v = must(graph_new_var(g, name), name);
    set_decl(v, decl);
    if (graph_add_input(g, v, text(decl)))
        must(NULL, "graph_add_input");
    return v;
}

/* An int64 initializer holding vals (1-D, or a scalar when n < 0). */
static Var *ints(Graph *g, const char *name, const int64_t *vals, int n)
{
    int64_t len = n < 0 ? 1 : n;
    Tensor *t = must(tensor_new(&M->arena, DT_INT64, n < 0 ? 0 : 1, &len), "tensor_new");
    for (int64_t i = 0; i < len; i++)
        tensor_set_i64(t, (size_t)i, vals[i]);
    return must(graph_add_param(g, name, t), "graph_add_param");
}

static Var *floats(Graph *g, const char *name, const int64_t *dims, int rank)
{
    Tensor *t = must(tensor_new(&M->arena, DT_FLOAT, (size_t)rank, dims), "tensor_new");
    return must(graph_add_param(g, name, t), "graph_add_param");
}

/* Appends a node; ins and outs are comma-separated names (an empty entry
 * in ins is an omitted input; outs are new values). */
static Op *nd(Graph *g, const char *type, const char *name, const char *ins, const char *outs)
{
    Op *op = must(graph_insert_op(g, NULL, type, name), "graph_insert_op");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", ins);
    for (char *p = buf, *q; p; p = q) {
        q = strchr(p, ',');
        if (q)
            *q++ = '\0';
        if (*p || q || p != buf)
            op_append_input(op, *p ? find(g, p) : NULL);
    }
    snprintf(buf, sizeof buf, "%s", outs);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ","))
        op_append_output(op, must(graph_new_var(g, arena_strdup(&M->arena, t)), t));
    return op;
}

static void ints_attr(Op *op, const char *name, const int64_t *v, size_t n)
{
    must(op_set_attr_ints(op, name, v, n), "op_set_attr_ints");
}

static void set_opset(int64_t v)
{
    M->opsets = must(arena_alloc(&M->arena, sizeof *M->opsets), "opset");
    M->opsets[0] = (Opset){"", v};
    M->n_opsets = 1;
}

static const char *infer(void)
{
    Diag d = {0};
    R = infer_model(M, &d, ops_rule);
    return R ? NULL : d.msg;
}

/* "float:[batch,64,112,112]" for v, "?" parts where unknown. */
/* "float:[2,seq]"; a sequence "seq(float):[2,?]" (? where its elements
 * differ), an optional "opt(float):[2]" or "opt(seq(float)):?". */
static const char *fact_text(const Var *v, char *buf, size_t size)
{
    static const char *const kind_open[] = {"", "seq(", "opt(", "opt(seq("};
    static const char *const kind_close[] = {"", ")", ")", "))"};
    const InferFact *f = R ? infer_fact(R, v) : NULL;
    if (!f)
        return snprintf(buf, size, "?:?"), buf;
    size_t k = (size_t)snprintf(buf, size, "%s%s%s:", kind_open[f->kind],
                                f->dtype ? dtype_name(f->dtype) : "?", kind_close[f->kind]);
    if (f->rank < 0)
        return snprintf(buf + k, size - k, "?"), buf;
    k += (size_t)snprintf(buf + k, size - k, "[");
    for (int i = 0; i < f->rank && k < size; i++) {
        char d[256];
        const char *text = f->dims[i] ? dim_str(infer_dims(R), f->dims[i], d, sizeof d) : "?";
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? "," : "", text);
    }
    if (k < size)
        snprintf(buf + k, size - k, "]");
    return buf;
}

#define EXPECT_FACT(g, name, want)                                                     \
    do {                                                                               \
        char got_[1024];                                                               \
        fact_text(find(g, name), got_, sizeof got_);                                   \
        if (fnmatch((want), got_, 0) != 0)                                  \
            return failf(__LINE__, "%s is \"%s\", expected \"%s\"", name, got_, want); \
    } while (0)

static size_t n_issues(void)
{
    size_t n;
    infer_issues(R, &n);
    return n;
}

typedef const char *(*GraphCheck)(Graph *g);

static void run_graph(const char *name, int64_t opset, GraphCheck fn)
{
    M = must(model_new(), "model_new");
    M->ir_version = 8;
    set_opset(opset);
    R = NULL;
    const char *err = fn(M->graph);
    printf(err ? "FAIL %s: %s\n" : "ok %s\n", name, err);
    n_failed += err != NULL;
    n_passed += err == NULL;
    infer_free(R);
    model_free(M);
}

/* A new subgraph held by attribute attr of owner. */
static Graph *attach_graph(Op *owner, const char *attr)
{
    Graph *sub = must(graph_new(M, owner->graph, owner), "graph_new");
    Attr *a = must(op_add_attr(owner, attr, ATTR_GRAPH), "op_add_attr");
    a->graphs = must(arena_alloc(&M->arena, sizeof *a->graphs), "arena_alloc");
    a->graphs[0] = sub;
    a->n = 1;
    return sub;
}

static const char *str_of(Dim d)
{
    static char buf[256];
    return dim_str(infer_dims(R), d, buf, sizeof buf);
}

static const char *check_conv_pool_static(Graph *g)
{
    in_decl(g, "x", "float:N,3,224,224");
    floats(g, "w", (int64_t[]){64, 3, 7, 7}, 4);
    Op *conv = nd(g, "Conv", "conv1", "x,w", "y");
    ints_attr(conv, "strides", (int64_t[]){2, 2}, 2);
    ints_attr(conv, "pads", (int64_t[]){3, 3, 3, 3}, 4);
    Op *pool = nd(g, "MaxPool", "pool1", "y", "p");
    ints_attr(pool, "kernel_shape", (int64_t[]){3, 3}, 2);
    ints_attr(pool, "strides", (int64_t[]){2, 2}, 2);
    ints_attr(pool, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    nd(g, "GlobalAveragePool", "gap", "p", "gp");
    nd(g, "Flatten", "flat", "gp", "f");
    floats(g, "fc", (int64_t[]){1000, 64}, 2);
    Op *gemm = nd(g, "Gemm", "fc1", "f,fc", "logits");
    must(op_set_attr_int(gemm, "transB", 1), "attr");
    EXPECT(!infer());
    /* (224 + 6 - 7) / 2 + 1 = 112; (112 + 2 - 3) / 2 + 1 = 56 */
    EXPECT_FACT(g, "y", "float:\\[N,64,112,112]");
    EXPECT_FACT(g, "p", "float:\\[N,64,56,56]");
    EXPECT_FACT(g, "gp", "float:\\[N,64,1,1]");
    EXPECT_FACT(g, "f", "float:\\[N,64]");
    EXPECT_FACT(g, "logits", "float:\\[N,1000]");
    EXPECT(n_issues() == 0);
    return NULL;
}

static const char *check_conv_symbolic(Graph *g)
{
    in_decl(g, "x", "float:1,3,H,W");
    floats(g, "w", (int64_t[]){8, 3, 3, 3}, 4);
    Op *same = nd(g, "Conv", "c1", "x,w", "y1");
    ints_attr(same, "pads", (int64_t[]){1, 1, 1, 1}, 4);
    Op *down = nd(g, "Conv", "c2", "x,w", "y2");
    ints_attr(down, "strides", (int64_t[]){2, 2}, 2);
    Op *autopad = nd(g, "Conv", "c3", "x,w", "y3");
    ints_attr(autopad, "strides", (int64_t[]){2, 2}, 2);
    must(op_set_attr_string(autopad, "auto_pad", "SAME_UPPER"), "attr");
    EXPECT(!infer());
    EXPECT_FACT(g, "y1", "float:\\[1,8,H,W]");
    /* floor((H - 3) / 2) + 1 is not a polynomial: fresh symbols named after c2 */
    EXPECT_FACT(g, "y2", "float:\\[1,8,unk_c2_*,unk_c2_*]");
    EXPECT_FACT(g, "y3", "float:\\[1,8,unk_c3_*,unk_c3_*]");
    return NULL;
}

static const char *check_broadcast(Graph *g)
{
    in_decl(g, "a", "float:batch,1,5");
    in_decl(g, "b", "float:3,1");
    in_decl(g, "c", "float:3");
    in_decl(g, "d", "float:4");
    in_decl(g, "s", "float:seq");
    in_decl(g, "t", "float:len");
    nd(g, "Add", "add", "a,b", "ab");
    nd(g, "Less", "less", "a,b", "lt");
    nd(g, "Mul", "bad", "c,d", "cd");
    nd(g, "Add", "syms", "s,t", "st");
    nd(g, "Where", "where", "lt,a,b", "w");
    EXPECT(!infer());
    EXPECT_FACT(g, "ab", "float:\\[batch,3,5]");
    EXPECT_FACT(g, "lt", "bool:\\[batch,3,5]");
    EXPECT_FACT(g, "cd", "?:?");
    EXPECT_FACT(g, "st", "float:\\[unk_syms_0]");
    EXPECT_FACT(g, "w", "float:\\[batch,3,5]");
    size_t n;
    const InferIssue *is = infer_issues(R, &n);
    EXPECT(n == 1 && !strcmp(is[0].subject, "bad"));
    return NULL;
}

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch exports
 * multi-head attention: [batch, seq, 768] -> [batch, seq, 12, 64]. */
static const char *check_data_propagation(Graph *g)
{
    in_decl(g, "x", "float:batch,seq,768");
    ints(g, "i0", (int64_t[]){0}, -1);
    ints(g, "i1", (int64_t[]){1}, -1);
    ints(g, "ax", (int64_t[]){0}, 1);
    ints(g, "heads", (int64_t[]){12, 64}, 2);
    ints(g, "flat", (int64_t[]){-1, 768}, 2);
    ints(g, "back", (int64_t[]){0, -1, 64}, 3);
    nd(g, "Shape", "shape", "x", "sh");
    nd(g, "Gather", "g0", "sh,i0", "b");
    nd(g, "Gather", "g1", "sh,i1", "s");
    nd(g, "Unsqueeze", "u0", "b,ax", "ub");
    nd(g, "Unsqueeze", "u1", "s,ax", "us");
    nd(g, "Concat", "cat", "ub,us,heads", "target");
    must(op_set_attr_int(g->ops[g->n_ops - 1], "axis", 0), "attr");
    nd(g, "Reshape", "r1", "x,target", "y");
    nd(g, "Reshape", "r2", "x,flat", "y2");
    nd(g, "Reshape", "r3", "y,back", "y3");
    nd(g, "Range", "range", "i0,s,i1", "pos");
    nd(g, "Size", "size", "x", "n");
    EXPECT(!infer());
    EXPECT_FACT(g, "sh", "int64:\\[3]");
    EXPECT_FACT(g, "b", "int64:\\[]");
    EXPECT_FACT(g, "target", "int64:\\[4]");
    EXPECT_FACT(g, "y", "float:\\[batch,seq,12,64]");
    EXPECT_FACT(g, "y2", "float:\\[batch\\*seq,768]");
    EXPECT_FACT(g, "y3", "float:\\[batch,12\\*seq,64]");
    EXPECT_FACT(g, "pos", "int64:\\[seq]");
    const InferFact *n = infer_fact(R, find(g, "n"));
    EXPECT(n && n->value && n->n_value == 1 && !strcmp(str_of(n->value[0]), "768*batch*seq"));
    EXPECT(n_issues() == 0);
    return NULL;
}

/* A condition on shapes picks its value: comparisons, Not/And/Or and
 * Where carry known contents (0/1 for bool), as the expanded Attention
 * function computes its grouped-query repeat count from head counts. */
static const char *check_condition_values(Graph *g)
{
    in_decl(g, "q", "float:batch,8,seq,64");
    in_decl(g, "k", "float:batch,2,seq,64");
    ints(g, "one", (int64_t[]){1}, 1);
    ints(g, "zero", (int64_t[]){0}, 1);
    nd(g, "Shape", "qs", "q", "qsh");
    nd(g, "Shape", "ks", "k", "ksh");
    nd(g, "Gather", "qh", "qsh,one", "qheads");
    nd(g, "Gather", "kh", "ksh,one", "kheads");
    nd(g, "Equal", "eq", "qheads,kheads", "same");
    nd(g, "Not", "not", "same", "grouped");
    nd(g, "Mod", "mod", "qheads,kheads", "rem");
    nd(g, "Equal", "eq0", "rem,zero", "divides");
    nd(g, "And", "and", "grouped,divides", "gqa");
    nd(g, "Div", "div", "qheads,kheads", "ratio");
    nd(g, "Where", "where", "gqa,ratio,one", "repeat");
    nd(g, "Less", "less", "kheads,qheads", "fewer");
    nd(g, "Or", "or", "same,fewer", "either");
    nd(g, "Cast", "cast", "either", "either_i");
    must(op_set_attr_int(g->ops[g->n_ops - 1], "to", DT_INT64), "attr");
    nd(g, "Equal", "self", "qsh,qsh", "all_same");
    nd(g, "ConstantOfShape", "fill", "repeat", "filled");
    EXPECT(!infer());
    const InferFact *f = infer_fact(R, find(g, "gqa")), *r = infer_fact(R, find(g, "repeat"));
    EXPECT(f && f->value && f->n_value == 1 && !strcmp(str_of(f->value[0]), "1"));
    EXPECT(r && r->value && r->n_value == 1 && !strcmp(str_of(r->value[0]), "4"));
    EXPECT_FACT(g, "filled", "float:\\[4]");
    const InferFact *e = infer_fact(R, find(g, "either_i"));
    EXPECT(e && e->value && !strcmp(str_of(e->value[0]), "1"));
    /* the same symbolic batch compares equal to itself; seq vs 64 is unknown */
    const InferFact *a = infer_fact(R, find(g, "all_same"));
    EXPECT(a && a->value && a->n_value == 4 && !strcmp(str_of(a->value[0]), "1"));
    EXPECT(n_issues() == 0);
    return NULL;
}

/* Shapes read from a Shape's contents: Expand broadcasts against them,
 * ConstantOfShape builds them, Tile multiplies by them. */
static const char *check_expand_tile_fill(Graph *g)
{
    in_decl(g, "x", "float:batch,1,8");
    in_decl(g, "y", "float:seq,1");
    ints(g, "reps", (int64_t[]){1, 2}, 2);
    ints(g, "one", (int64_t[]){1}, 1);
    ints(g, "two", (int64_t[]){2}, 1);
    nd(g, "Shape", "sx", "x", "shx");
    nd(g, "Expand", "ex", "y,shx", "e");          /* [seq,1] to [batch,1,8] */
    nd(g, "ConstantOfShape", "fill", "shx", "z");
    nd(g, "Tile", "tile", "y,reps", "t");
    nd(g, "Slice", "mid", "shx,one,two", "s0"); /* shx[1:2] */
    EXPECT(!infer());
    EXPECT_FACT(g, "e", "float:\\[batch,seq,8]");
    EXPECT_FACT(g, "z", "float:\\[batch,1,8]");
    EXPECT_FACT(g, "t", "float:\\[seq,2]");
    const InferFact *f = infer_fact(R, find(g, "s0"));
    EXPECT(f && f->value && f->n_value == 1 && !strcmp(str_of(f->value[0]), "1"));
    return NULL;
}

static const char *check_split_slice(Graph *g)
{
    in_decl(g, "x", "float:batch,seq,10");
    ints(g, "two", (int64_t[]){2, 8}, 2);
    ints(g, "st", (int64_t[]){1}, 1);
    ints(g, "en", (int64_t[]){-1}, 1);
    ints(g, "big", (int64_t[]){INT64_MAX}, 1);
    ints(g, "zero", (int64_t[]){0}, 1);
    ints(g, "ax1", (int64_t[]){1}, 1);
    ints(g, "ax2", (int64_t[]){2}, 1);
    ints(g, "step2", (int64_t[]){2}, 1);
    Op *even = nd(g, "Split", "even", "x", "h0,h1");
    must(op_set_attr_int(even, "axis", 1), "attr");
    Op *sized = nd(g, "Split", "sized", "x,two", "s0,s1");
    must(op_set_attr_int(sized, "axis", -1), "attr");
    nd(g, "Slice", "sl_static", "x,st,en,ax2,step2", "a");   /* 1:9:2 of 10 -> 4 */
    nd(g, "Slice", "sl_whole", "x,zero,big,ax1", "b");       /* 0:end of seq -> seq */
    nd(g, "Slice", "sl_tail", "x,st,big,ax1", "c");          /* 1:end of seq -> unknown */
    EXPECT(!infer());
    EXPECT_FACT(g, "h0", "float:\\[batch,seq/2,10]");
    EXPECT_FACT(g, "h1", "float:\\[batch,seq/2,10]");
    EXPECT_FACT(g, "s0", "float:\\[batch,seq,2]");
    EXPECT_FACT(g, "s1", "float:\\[batch,seq,8]");
    EXPECT_FACT(g, "a", "float:\\[batch,seq,4]");
    EXPECT_FACT(g, "b", "float:\\[batch,seq,10]");
    /* seq-1 would be wrong for seq = 0: a fresh symbol instead */
    EXPECT_FACT(g, "c", "float:\\[batch,unk_sl_tail_0,10]");
    return NULL;
}

/* Squeeze/Unsqueeze take axes as an attribute before opset 13. */
static const char *check_squeeze_opset11(Graph *g)
{
    in_decl(g, "x", "float:1,seq,1");
    Op *sq = nd(g, "Squeeze", "sq", "x", "y");
    ints_attr(sq, "axes", (int64_t[]){-1}, 1);
    Op *un = nd(g, "Unsqueeze", "un", "y", "z");
    ints_attr(un, "axes", (int64_t[]){0, 3}, 2);
    nd(g, "Squeeze", "all", "x", "w");
    EXPECT(!infer());
    EXPECT_FACT(g, "y", "float:\\[1,seq]");
    EXPECT_FACT(g, "z", "float:\\[1,1,seq,1]");
    /* without axes every static 1 goes, but seq might be 1: unknown rank */
    EXPECT_FACT(g, "w", "float:?");
    return NULL;
}

static const char *check_squeeze_opset13(Graph *g)
{
    in_decl(g, "x", "float:1,seq,1");
    ints(g, "axes", (int64_t[]){0, 2}, 2);
    nd(g, "Squeeze", "sq", "x,axes", "y");
    nd(g, "Unsqueeze", "un", "y,axes", "z");
    EXPECT(!infer());
    EXPECT_FACT(g, "y", "float:\\[seq]");
    EXPECT_FACT(g, "z", "float:\\[1,seq,1]");
    return NULL;
}

static const char *check_matmul_transpose_concat(Graph *g)
{
    in_decl(g, "q", "float:batch,12,seq,64");
    in_decl(g, "v", "float:64");
    Op *t = nd(g, "Transpose", "t", "q", "k");
    ints_attr(t, "perm", (int64_t[]){0, 1, 3, 2}, 4);
    nd(g, "MatMul", "mm", "q,k", "att");
    nd(g, "MatMul", "mv", "q,v", "qv");
    Op *cat = nd(g, "Concat", "cat", "q,q", "qq");
    must(op_set_attr_int(cat, "axis", 2), "attr");
    nd(g, "Softmax", "sm", "att", "p");
    in_decl(g, "w", "float:64,7");
    must(op_set_attr_string(nd(g, "Einsum", "es1", "q,w", "e1"), "equation", "...ij, jk -> ...ik"), "attr");
    must(op_set_attr_string(nd(g, "Einsum", "es2", "w,w", "e2"), "equation", "ij,ik"), "attr");
    EXPECT(!infer());
    EXPECT_FACT(g, "k", "float:\\[batch,12,64,seq]");
    EXPECT_FACT(g, "att", "float:\\[batch,12,seq,seq]");
    EXPECT_FACT(g, "qv", "float:\\[batch,12,seq]");
    EXPECT_FACT(g, "qq", "float:\\[batch,12,2\\*seq,64]");
    EXPECT_FACT(g, "p", "float:\\[batch,12,seq,seq]");
    EXPECT_FACT(g, "e1", "float:\\[batch,12,seq,7]");
    EXPECT_FACT(g, "e2", "float:\\[7,7]"); /* implicit output: letters used once, sorted */
    return NULL;
}

static const char *check_reduce_topk_cast(Graph *g)
{
    in_decl(g, "x", "float:batch,seq,768");
    ints(g, "ax", (int64_t[]){-1}, 1);
    ints(g, "k", (int64_t[]){5}, 1);
    nd(g, "ReduceMean", "rm", "x", "m"); /* opset 13: axes attribute */
    ints_attr(g->ops[0], "axes", (int64_t[]){-1}, 1);
    nd(g, "ReduceSum", "rs", "x,ax", "s"); /* ReduceSum-13: axes input */
    must(op_set_attr_int(g->ops[1], "keepdims", 0), "attr");
    nd(g, "TopK", "topk", "x,k", "vals,idx");
    nd(g, "Cast", "cast", "x", "h");
    must(op_set_attr_int(g->ops[3], "to", DT_FLOAT16), "attr");
    nd(g, "ArgMax", "am", "x", "arg");
    must(op_set_attr_int(g->ops[4], "axis", 1), "attr");
    EXPECT(!infer());
    EXPECT_FACT(g, "m", "float:\\[batch,seq,1]");
    EXPECT_FACT(g, "s", "float:\\[batch,seq]");
    EXPECT_FACT(g, "vals", "float:\\[batch,seq,5]");
    EXPECT_FACT(g, "idx", "int64:\\[batch,seq,5]");
    EXPECT_FACT(g, "h", "float16:\\[batch,seq,768]");
    EXPECT_FACT(g, "arg", "int64:\\[batch,1,768]");
    return NULL;
}

static const char *check_pad_resize(Graph *g)
{
    in_decl(g, "x", "float:1,3,H,20");
    ints(g, "pads", (int64_t[]){0, 0, 1, 2, 0, 0, 3, 4}, 8);
    Tensor *sc = must(tensor_new(&M->arena, DT_FLOAT, 1, (int64_t[]){4}), "tensor");
    double scale[4] = {1, 1, 2, 1.5};
    for (size_t i = 0; i < 4; i++)
        tensor_set_f64(sc, i, scale[i]);
    must(graph_add_param(g, "scales", sc), "param");
    nd(g, "Pad", "pad", "x,pads", "p");
    nd(g, "Resize", "rs", "x,,scales", "r");
    EXPECT(!infer());
    EXPECT_FACT(g, "p", "float:\\[1,3,H+4,26]");
    EXPECT_FACT(g, "r", "float:\\[1,3,2\\*H,30]");
    return NULL;
}

/* If: equal dims stay, different ones become a fresh symbol. */
static const char *check_if_merge(Graph *g)
{
    in_decl(g, "c", "bool:");
    in_decl(g, "x", "float:batch,3");
    in_decl(g, "y", "float:batch,4");
    Op *op = nd(g, "If", "if1", "c", "out");
    Graph *branches[2];
    const char *src[2] = {"x", "y"};
    for (int i = 0; i < 2; i++) {
        branches[i] = attach_graph(op, i ? "else_branch" : "then_branch");
        Op *relu = nd(branches[i], "Relu", i ? "relu_else" : "relu_then", src[i], i ? "r_else" : "r_then");
        if (graph_add_output(branches[i], relu->outputs[0], (Bytes){0}))
            return "graph_add_output";
    }
    EXPECT(!infer());
    EXPECT_FACT(branches[0], "r_then", "float:\\[batch,3]");
    EXPECT_FACT(branches[1], "r_else", "float:\\[batch,4]");
    EXPECT_FACT(g, "out", "float:\\[batch,unk_if1_*]");
    return NULL;
}

/* Loop: a carried value that grows each iteration is generalised, so the
 * body's facts hold for every iteration, not only the first. */
static const char *check_loop_generalises(Graph *g)
{
    in_decl(g, "n", "int64:");
    in_decl(g, "v0", "float:1");
    Op *loop = nd(g, "Loop", "loop", "n,,v0", "v_final,scan");
    Graph *body = attach_graph(loop, "body");
    in_decl(body, "i", "int64:");
    in_decl(body, "cond_in", "bool:");
    in_decl(body, "v", "float:?");
    floats(body, "one", (int64_t[]){1}, 1);
    nd(body, "Concat", "grow", "v,one", "v_next");
    must(op_set_attr_int(body->ops[0], "axis", 0), "attr");
    nd(body, "Identity", "keep", "cond_in", "cond_out");
    nd(body, "Relu", "emit", "one", "y");
    Var *outs[3] = {find(body, "cond_out"), find(body, "v_next"), find(body, "y")};
    for (int i = 0; i < 3; i++)
        if (graph_add_output(body, outs[i], (Bytes){0}))
            return "graph_add_output";
    EXPECT(!infer());
    EXPECT_FACT(body, "v", "float:\\[unk_loop_*]");
    EXPECT_FACT(body, "v_next", "float:\\[unk_loop_*+1]");
    EXPECT_FACT(g, "v_final", "float:\\[unk_loop_*]");
    EXPECT_FACT(g, "scan", "float:\\[unk_loop_*,1]");
    return NULL;
}

static const char *check_unknown_op_and_conflict(Graph *g)
{
    in_decl(g, "x", "float:2,3");
    Op *foo = nd(g, "FooOp", "foo", "x", "y");
    foo->domain = "com.example";
    nd(g, "Relu", "relu", "x", "z");
    nd(g, "Relu", "relu2", "y", "w");
    if (add_vi(g, "z", "float:2,4") ||
        add_vi(g, "w", "float:7"))
        return "graph_add_value_info";
    EXPECT(!infer());
    EXPECT_FACT(g, "y", "?:?");           /* never guessed */
    EXPECT_FACT(g, "w", "float:\\[7]");   /* a declaration fills in what inference cannot tell */
    size_t n;
    const char *const *unk = infer_unknown_ops(R, &n);
    EXPECT(n == 1 && !strcmp(unk[0], "com.example:FooOp"));
    const InferIssue *is = infer_issues(R, &n);
    EXPECT(n == 1 && !strcmp(is[0].subject, "z") && strstr(is[0].detail, "[2,4]"));
    return NULL;
}

/* A static declaration fills in a dim involving a fresh symbol (here
 * floor((H-3)/2)+1 = unk+1), never one computed from named symbols (H stays
 * H even where value_info, say from a static export, has 7). */
static const char *check_declared_dims_fill_fresh_only(Graph *g)
{
    in_decl(g, "x", "float:1,3,H,W");
    floats(g, "w", (int64_t[]){8, 3, 3, 3}, 4);
    Op *down = nd(g, "Conv", "c2", "x,w", "y");
    ints_attr(down, "strides", (int64_t[]){2, 2}, 2);
    nd(g, "Relu", "relu", "x", "r");
    if (add_vi(g, "y", "float:1,8,5,6") ||
        add_vi(g, "r", "float:1,3,7,7"))
        return "graph_add_value_info";
    EXPECT(!infer());
    EXPECT_FACT(g, "y", "float:\\[1,8,5,6]");
    EXPECT_FACT(g, "r", "float:\\[1,3,H,W]");
    EXPECT(n_issues() == 0);
    return NULL;
}

/* The registry resolves by opset: TopK-1 reads k as an attribute, and an op
 * newer than the model's opset (HardSwish-14 under 13) is unknown. */
static const char *check_opset_resolution(Graph *g)
{
    in_decl(g, "x", "float:4,9");
    Op *topk = nd(g, "TopK", "topk", "x", "v,i");
    must(op_set_attr_int(topk, "k", 3), "attr");
    nd(g, "HardSwish", "hs", "x", "h");
    set_opset(9);
    EXPECT(!infer());
    EXPECT_FACT(g, "v", "float:\\[4,3]");
    EXPECT_FACT(g, "h", "?:?");
    return NULL;
}

/* onnxruntime's contrib ops resolve by the model's com.microsoft opset; with
 * no such import they have no rule. */
static const char *check_contrib_ops(Graph *g)
{
    in_decl(g, "x", "float:batch,seq,8");
    floats(g, "b", (int64_t[]){8}, 1);
    Op *gelu = nd(g, "Gelu", "gelu", "x", "g");
    Op *fast = nd(g, "FastGelu", "fast", "g,b", "f");
    Op *ln = nd(g, "LayerNormalization", "ln", "f,b,b", "y,mean");
    gelu->domain = fast->domain = ln->domain = "com.microsoft";
    EXPECT(!infer());
    EXPECT_FACT(g, "y", "?:?");
    infer_free(R);
    Opset *two = must(arena_array(&M->arena, 2, sizeof *two), "opsets");
    two[0] = M->opsets[0];
    two[1] = (Opset){"com.microsoft", 1};
    M->opsets = two;
    M->n_opsets = 2;
    EXPECT(!infer());
    EXPECT_FACT(g, "g", "float:\\[batch,seq,8]");
    EXPECT_FACT(g, "f", "float:\\[batch,seq,8]");
    EXPECT_FACT(g, "y", "float:\\[batch,seq,8]");
    EXPECT_FACT(g, "mean", "float:\\[batch,seq,1]");
    return NULL;
}

/* Ops shaped like their first input that take further inputs (Trilu's k,
 * CumSum's axis, InstanceNormalization's scale and bias, the Scatter
 * family's indices and updates, ReverseSequence's lengths): a torch
 * causal mask is Trilu(x, k), so a one-input bound lost the whole mask. */
static const char *check_like_input0_extra_inputs(Graph *g)
{
    in_decl(g, "x", "float:batch,seq,seq");
    in_decl(g, "n", "float:batch,8,H,W");
    in_decl(g, "idx", "int64:batch,seq,seq");
    in_decl(g, "nd", "int64:batch,2");
    in_decl(g, "upd", "float:batch,seq");
    in_decl(g, "lens", "int64:seq");
    ints(g, "k", (int64_t[]){1}, -1);
    ints(g, "axis", (int64_t[]){2}, -1);
    floats(g, "scale", (int64_t[]){8}, 1);
    floats(g, "bias", (int64_t[]){8}, 1);
    must(op_set_attr_int(nd(g, "Trilu", "triu", "x,k", "t1"), "upper", 1), "attr");
    nd(g, "Trilu", "tril", "x", "t0");
    nd(g, "CumSum", "cumsum", "x,axis", "cs");
    nd(g, "InstanceNormalization", "inorm", "n,scale,bias", "in");
    nd(g, "ScatterElements", "scat", "x,idx,x", "se");
    nd(g, "ScatterND", "scatnd", "x,nd,upd", "snd");
    nd(g, "ReverseSequence", "rev", "x,lens", "rs");
    EXPECT(!infer());
    static const char *const like_x[] = {"t1", "t0", "cs", "se", "snd", "rs"};
    for (size_t i = 0; i < sizeof like_x / sizeof *like_x; i++)
        EXPECT_FACT(g, like_x[i], "float:\\[batch,seq,seq]");
    EXPECT_FACT(g, "in", "float:\\[batch,8,H,W]");
    EXPECT(n_issues() == 0);
    return NULL;
}

/* The value of an integer Mod, as n_value == 1 entry text, or "?" */
static const char *value_text(Graph *g, const char *name)
{
    const InferFact *f = infer_fact(R, find(g, name));
    return f && f->value && f->n_value == 1 && f->value[0] ? str_of(f->value[0]) : "?";
}

/* Mod's integer contents: the divisor's sign with fmod=0 (10 % -7 = -4,
 * -10 % 7 = 4), the dividend's with fmod=1 (-10 fmod 7 = -3); a symbolic
 * dividend stays unknown, and a size read from a shape is reduced. */
static const char *check_mod_value(Graph *g)
{
    in_decl(g, "x", "float:batch,10");
    ints(g, "i0", (int64_t[]){0}, -1);
    ints(g, "i1", (int64_t[]){1}, -1);
    ints(g, "seven", (int64_t[]){7}, -1);
    ints(g, "mseven", (int64_t[]){-7}, -1);
    ints(g, "mten", (int64_t[]){-10}, -1);
    nd(g, "Shape", "shape", "x", "sh");
    nd(g, "Gather", "gw", "sh,i1", "w");
    nd(g, "Gather", "gb", "sh,i0", "b");
    nd(g, "Mod", "m1", "w,seven", "r1");
    nd(g, "Mod", "m2", "w,mseven", "r2");
    nd(g, "Mod", "m3", "mten,seven", "r3");
    must(op_set_attr_int(nd(g, "Mod", "m4", "mten,seven", "r4"), "fmod", 1), "attr");
    nd(g, "Mod", "m5", "b,seven", "r5");
    EXPECT(!infer());
    EXPECT(!strcmp(value_text(g, "r1"), "3"));
    EXPECT(!strcmp(value_text(g, "r2"), "-4"));
    EXPECT(!strcmp(value_text(g, "r3"), "4"));
    EXPECT(!strcmp(value_text(g, "r4"), "-3"));
    EXPECT(!strcmp(value_text(g, "r5"), "?"));
    EXPECT_FACT(g, "r5", "int64:\\[]");
    return NULL;
}

/* Sequences: an element's shape holds where every element agrees, a dim
 * where they differ is a fresh symbol per tensor taken out (two elements are
 * never claimed the same size), and the kind never leaks into tensor rules. */
static const char *check_sequence_ops(Graph *g)
{
    in_decl(g, "x", "float:2,3");
    in_decl(g, "y", "float:4,3");
    in_decl(g, "z", "float:6,4");
    in_decl(g, "t", "int64:3");
    ints(g, "pos", (int64_t[]){0}, -1);
    nd(g, "SequenceConstruct", "same", "x,x", "s_same");
    nd(g, "SequenceConstruct", "mixed", "x,y", "s_mixed");
    nd(g, "SequenceAt", "at_same", "s_same,pos", "e_same");
    nd(g, "SequenceAt", "at1", "s_mixed,pos", "e1");
    nd(g, "SequenceAt", "at2", "s_mixed,pos", "e2");
    nd(g, "SequenceLength", "len", "s_mixed", "n");
    nd(g, "SequenceInsert", "ins", "s_same,y", "s_ins");
    nd(g, "SequenceErase", "erase", "s_same", "s_erased");
    must(op_set_attr_int(nd(g, "SequenceEmpty", "empty", "", "s_empty"), "dtype", DT_INT64), "attr");
    nd(g, "SequenceInsert", "ins_empty", "s_empty,t", "s_one");
    nd(g, "ConcatFromSequence", "cat", "s_mixed", "cat0");
    Op *stack = nd(g, "ConcatFromSequence", "stack", "s_same", "stacked");
    must(op_set_attr_int(stack, "new_axis", 1), "attr");
    must(op_set_attr_int(stack, "axis", -1), "attr");
    nd(g, "Relu", "relu_seq", "s_same", "not_a_tensor");
    EXPECT(!infer());
    EXPECT_FACT(g, "s_same", "seq(float):\\[2,3]");
    EXPECT_FACT(g, "s_mixed", "seq(float):\\[\\?,3]");
    EXPECT_FACT(g, "e_same", "float:\\[2,3]");
    EXPECT_FACT(g, "e1", "float:\\[unk_at1_*,3]");
    EXPECT(infer_fact(R, find(g, "e1"))->dims[0] != infer_fact(R, find(g, "e2"))->dims[0]);
    EXPECT_FACT(g, "n", "int64:\\[]");
    EXPECT_FACT(g, "s_ins", "seq(float):\\[\\?,3]");
    EXPECT_FACT(g, "s_erased", "seq(float):\\[2,3]");
    EXPECT_FACT(g, "s_empty", "seq(int64):\\?");
    EXPECT_FACT(g, "s_one", "seq(int64):\\?"); /* the empty sequence's elements are unknown */
    EXPECT_FACT(g, "cat0", "float:\\[unk_cat_*,3]");
    EXPECT_FACT(g, "stacked", "float:\\[2,3,unk_stack_*]");
    EXPECT_FACT(g, "not_a_tensor", "?:?");
    return NULL;
}

/* A graph input declared as a sequence (the loader's HeldDecl) seeds its
 * fact; a declared optional fills in an output no rule typed. */
static const char *check_held_declarations(Graph *g)
{
    Var *s = in_decl(g, "s", "float:?");
    s->type = (TypeInfo){0, -1, NULL, NULL}; /* what the loader leaves for a sequence */
    Var *x = in_decl(g, "x", "float:2,3");
    ints(g, "pos", (int64_t[]){0}, -1);
    if (graph_add_held_decl(g, s, TYPE_SEQUENCE, x->type))
        return "graph_add_held_decl";
    nd(g, "SequenceAt", "at", "s,pos", "e");
    Op *foo = nd(g, "FooOp", "foo", "x", "o");
    foo->domain = "com.example";
    if (graph_add_held_decl(g, find(g, "o"), TYPE_OPTIONAL, x->type))
        return "graph_add_held_decl";
    EXPECT(!infer());
    EXPECT_FACT(g, "s", "seq(float):\\[2,3]");
    EXPECT_FACT(g, "e", "float:\\[2,3]");
    EXPECT_FACT(g, "o", "opt(float):\\[2,3]");
    return NULL;
}

/* A dim_param in a declared sequence's elements names each element's own
 * size: two elements taken out are not claimed the same size. */
static const char *check_held_sequence_symbols(Graph *g)
{
    Var *s = in_decl(g, "s", "float:?");
    s->type = (TypeInfo){0, -1, NULL, NULL};
    Var *proto = in_decl(g, "proto", "float:H,3");
    ints(g, "p0", (int64_t[]){0}, -1);
    ints(g, "p1", (int64_t[]){1}, -1);
    if (graph_add_held_decl(g, s, TYPE_SEQUENCE, proto->type))
        return "graph_add_held_decl";
    nd(g, "SequenceAt", "at0", "s,p0", "e0");
    nd(g, "SequenceAt", "at1", "s,p1", "e1");
    EXPECT(!infer());
    EXPECT_FACT(g, "s", "seq(float):\\[\\?,3]");
    EXPECT_FACT(g, "e0", "float:\\[unk_at0_*,3]");
    EXPECT_FACT(g, "e1", "float:\\[unk_at1_*,3]");
    return NULL;
}

/* SequenceMap: the body sees one element (differing dims as a fresh
 * symbol) and the tensor inputs whole; an output dim the body derives from
 * a fresh symbol may differ between positions. */
static const char *check_sequence_map(Graph *g)
{
    in_decl(g, "x", "float:2,3");
    in_decl(g, "y", "float:4,3");
    in_decl(g, "b", "float:3");
    nd(g, "SequenceConstruct", "mixed", "x,y", "s");
    Op *map = nd(g, "SequenceMap", "map", "s,b", "sums,nz,shapes");
    Graph *body = attach_graph(map, "body");
    in_decl(body, "e", "float:?");
    in_decl(body, "bias", "float:?");
    nd(body, "Add", "add", "e,bias", "sum");
    nd(body, "NonZero", "nonzero", "e", "where");
    nd(body, "Shape", "shape", "e", "shape_of");
    const char *outs[] = {"sum", "where", "shape_of"};
    for (int i = 0; i < 3; i++)
        if (graph_add_output(body, find(body, outs[i]), (Bytes){0}))
            return "graph_add_output";
    EXPECT(!infer());
    EXPECT_FACT(body, "e", "float:\\[unk_map_*,3]");
    EXPECT_FACT(body, "bias", "float:\\[3]");
    EXPECT_FACT(g, "sums", "seq(float):\\[\\?,3]");
    EXPECT_FACT(g, "nz", "seq(int64):\\[2,\\?]");
    EXPECT_FACT(g, "shapes", "seq(int64):\\[2]");
    return NULL;
}

/* SplitToSequence: pieces of 1 (axis kept or dropped), a chunk size (the
 * last piece may be shorter), or listed sizes. */
static const char *check_split_to_sequence(Graph *g)
{
    in_decl(g, "z", "float:6,4");
    ints(g, "four", (int64_t[]){4}, -1);
    ints(g, "three", (int64_t[]){3}, -1);
    ints(g, "even", (int64_t[]){2, 2, 2}, 3);
    ints(g, "uneven", (int64_t[]){1, 5}, 2);
    Op *ones = nd(g, "SplitToSequence", "ones", "z", "s_ones");
    must(op_set_attr_int(ones, "axis", 1), "attr");
    must(op_set_attr_int(ones, "keepdims", 0), "attr");
    nd(g, "SplitToSequence", "kept", "z", "s_kept");
    nd(g, "SplitToSequence", "chunk4", "z,four", "s_chunk4");
    nd(g, "SplitToSequence", "chunk3", "z,three", "s_chunk3");
    nd(g, "SplitToSequence", "even", "z,even", "s_even");
    nd(g, "SplitToSequence", "uneven", "z,uneven", "s_uneven");
    EXPECT(!infer());
    EXPECT_FACT(g, "s_ones", "seq(float):\\[6]");
    EXPECT_FACT(g, "s_kept", "seq(float):\\[1,4]");
    EXPECT_FACT(g, "s_chunk4", "seq(float):\\[\\?,4]"); /* 4 then 2 */
    EXPECT_FACT(g, "s_chunk3", "seq(float):\\[3,4]");
    EXPECT_FACT(g, "s_even", "seq(float):\\[2,4]");
    EXPECT_FACT(g, "s_uneven", "seq(float):\\[\\?,4]");
    return NULL;
}

static const char *check_optional_ops(Graph *g)
{
    in_decl(g, "x", "float:2,3");
    nd(g, "Optional", "wrap", "x", "o");
    nd(g, "OptionalHasElement", "has", "o", "h");
    nd(g, "OptionalGetElement", "get", "o", "e");
    nd(g, "Identity", "same", "o", "o2");
    nd(g, "SequenceConstruct", "seq", "x", "s");
    nd(g, "Optional", "wrap_seq", "s", "os");
    nd(g, "OptionalGetElement", "get_seq", "os", "s2");
    nd(g, "Optional", "none", "", "o_none");
    EXPECT(!infer());
    EXPECT_FACT(g, "o", "opt(float):\\[2,3]");
    EXPECT_FACT(g, "h", "bool:\\[]");
    EXPECT_FACT(g, "e", "float:\\[2,3]");
    EXPECT_FACT(g, "o2", "opt(float):\\[2,3]");
    EXPECT_FACT(g, "os", "opt(seq(float)):\\[2,3]");
    EXPECT_FACT(g, "s2", "seq(float):\\[2,3]");
    EXPECT_FACT(g, "o_none", "?:?"); /* its type attribute is not read */
    return NULL;
}

/* DFT-17, STFT-17 and MelWeightMatrix-17 sizes from the spec's formulas:
 * bins = n/2 + 1 one-sided, frames = (length - frame) / step + 1. */
static const char *check_signal_ops(Graph *g)
{
    in_decl(g, "x", "float:1,10,1");
    in_decl(g, "sig", "float:2,128,1");
    in_decl(g, "sig_n", "float:2,L,1");
    ints(g, "n16", (int64_t[]){16}, -1);
    ints(g, "step", (int64_t[]){8}, -1);
    ints(g, "bins", (int64_t[]){8}, -1);
    floats(g, "win", (int64_t[]){16}, 1);
    nd(g, "DFT", "dft", "x", "d_plain");
    must(op_set_attr_int(nd(g, "DFT", "dft1", "x,n16", "d_one"), "onesided", 1), "attr");
    nd(g, "STFT", "stft", "sig,step,win", "st");
    must(op_set_attr_int(nd(g, "STFT", "stft2", "sig,step,,n16", "st_two"), "onesided", 0), "attr");
    nd(g, "STFT", "stft_n", "sig_n,step,win", "st_n");
    nd(g, "MelWeightMatrix", "mel", "bins,n16,n16,n16,n16", "mel");
    EXPECT(!infer());
    EXPECT_FACT(g, "d_plain", "float:\\[1,10,2]");
    EXPECT_FACT(g, "d_one", "float:\\[1,9,2]");
    EXPECT_FACT(g, "st", "float:\\[2,15,9,2]");
    EXPECT_FACT(g, "st_two", "float:\\[2,15,16,2]");
    EXPECT_FACT(g, "st_n", "float:\\[2,unk_stft_n_*,9,2]");
    EXPECT_FACT(g, "mel", "float:\\[9,8]");
    return NULL;
}

/* StringNormalizer, TfIdfVectorizer, and the preview training optimizers:
 * each new tensor has the shape of the one it replaces. */
static const char *check_text_training(Graph *g)
{
    M->opsets = must(arena_array(&M->arena, 2, sizeof *M->opsets), "opsets");
    M->opsets[0] = (Opset){"", 17};
    M->opsets[1] = (Opset){"ai.onnx.preview.training", 1};
    M->n_opsets = 2;
    in_decl(g, "words", "8:1,5");
    in_decl(g, "tokens", "int64:2,7");
    in_decl(g, "r", "float:");
    in_decl(g, "it", "int64:");
    const char *vars[] = {"x1", "x2", "g1", "g2", "v1", "v2", "h1", "h2"};
    for (int i = 0; i < 8; i++)
        in_decl(g, vars[i], i % 2 ? "float:3,4" : "float:5");
    nd(g, "StringNormalizer", "norm", "words", "clean");
    Op *tf = nd(g, "TfIdfVectorizer", "tfidf", "tokens", "freq");
    ints_attr(tf, "ngram_indexes", (int64_t[]){0, 4, 1}, 3);
    const char *train[][3] = {{"Adam", "r,it,x1,x2,g1,g2,v1,v2,h1,h2", "ax1,ax2,av1,av2,ah1,ah2"},
                              {"Adagrad", "r,it,x1,x2,g1,g2,h1,h2", "gx1,gx2,gh1,gh2"},
                              {"Momentum", "r,it,x1,x2,g1,g2,v1,v2", "mx1,mx2,mv1,mv2"},
                              {"Gradient", "x1,x2", "dx1,dx2"}};
    for (int i = 0; i < 4; i++)
        nd(g, train[i][0], train[i][0], train[i][1], train[i][2])->domain =
            "ai.onnx.preview.training";
    EXPECT(!infer());
    EXPECT_FACT(g, "clean", "string:\\[1,unk_norm_*]");
    EXPECT_FACT(g, "freq", "float:\\[2,5]");
    const char *even[] = {"ax1", "av1", "ah1", "gx1", "gh1", "mx1", "mv1", "dx1"};
    const char *odd[] = {"ax2", "av2", "ah2", "gx2", "gh2", "mx2", "mv2", "dx2"};
    for (int i = 0; i < 8; i++) {
        EXPECT_FACT(g, even[i], "float:\\[5]");
        EXPECT_FACT(g, odd[i], "float:\\[3,4]");
    }
    return NULL;
}

/* Scan-8: a batch axis in front of everything, the sequence axis second in
 * scan inputs and outputs; the body sees neither. */
static const char *check_scan8(Graph *g)
{
    in_decl(g, "init", "float:2,4");
    in_decl(g, "xs", "float:2,S,4");
    Op *scan = nd(g, "Scan", "scan", ",init,xs", "final,ys");
    must(op_set_attr_int(scan, "num_scan_inputs", 1), "attr");
    Graph *body = attach_graph(scan, "body");
    in_decl(body, "acc", "float:?");
    in_decl(body, "x_t", "float:?");
    nd(body, "Add", "sum", "acc,x_t", "acc_next");
    nd(body, "Neg", "emit", "x_t", "y_t");
    if (graph_add_output(body, find(body, "acc_next"), (Bytes){0}) ||
        graph_add_output(body, find(body, "y_t"), (Bytes){0}))
        return "graph_add_output";
    EXPECT(!infer());
    EXPECT_FACT(body, "acc", "float:\\[4]");
    EXPECT_FACT(body, "x_t", "float:\\[4]");
    EXPECT_FACT(g, "final", "float:\\[2,4]");
    EXPECT_FACT(g, "ys", "float:\\[2,S,4]");
    return NULL;
}

static int dump_model(const char *path)
{
    Source src;
    Diag d = {0};
    Model *m = NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    if (source_open(&src, path, &d) || onnx_load(src.bytes, dirname(dir), &m, &d)) {
        fprintf(stderr, "test_infer: %s: %s\n", path, d.msg);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    R = infer_model(m, &d, ops_rule);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "test_infer: inference took %.1f ms\n",
            (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    if (!R) {
        fprintf(stderr, "test_infer: %s: %s\n", path, d.msg);
        return 4;
    }
    for (size_t i = 0; i < m->graph->n_vars; i++) {
        const Var *v = m->graph->vars[i];
        char buf[4096];
        if (v->removed || v->shadowed)
            continue;
        fact_text(v, buf, sizeof buf);
        char *colon = strchr(buf, ':');
        *colon = '\0';
        printf("%s\t%s\t%s\n", v->name, buf, colon + 1);
    }
    size_t n;
    const char *const *unk = infer_unknown_ops(R, &n);
    for (size_t i = 0; i < n; i++)
        printf("#unknown-op\t%s\n", unk[i]);
    const InferIssue *is = infer_issues(R, &n);
    for (size_t i = 0; i < n; i++)
        printf("#issue\t%s\t%s\n", is[i].subject, is[i].detail);
    infer_free(R);
    model_free(m);
    source_close(&src);
    return 0;
}

/* Every fold kernel belongs to a registry row of its own version, so that
 * the row says whether its op version folds (ops_registry.h). */
static const char *check_registry_kernels(void)
{
    static char err[160];
    const OpKernel *k;
    for (size_t i = 0; (k = ops_kernel_at(i)); i++) {
        const OpSchema *s = ops_lookup(k->domain, k->type, k->since);
        if (!s || s->since != k->since) {
            snprintf(err, sizeof err, "kernel %s-%d has no row of its version (%s)", k->type,
                     k->since, s ? "an older one" : "none");
            return err;
        }
        if (!ops_kernel(k->domain, k->type, k->since, s->min_in, s->min_out)) {
            snprintf(err, sizeof err, "row %s-%d does not give its own kernel", k->type,
                     k->since);
            return err;
        }
    }
    return NULL;
}

/* Every ai.onnx row has the signature of its own version (the registry
 * makes a row for each version the signatures list, so the other direction
 * holds by construction): a family row at a version onnx does not define is
 * a typo. SimplifiedLayerNormalization is onnxruntime's, in onnx's domain. */
static const char *check_registry_signatures(void)
{
    static char err[160];
    const OpSchema *s;
    size_t rows = 0;
    for (size_t i = 0; (s = ops_at(i)); i++) {
        if (*s->domain || !strcmp(s->type, "SimplifiedLayerNormalization"))
            continue;
        const OpSignature *g = ops_signature(s->type, s->since);
        if (!g || g->since != s->since) {
            snprintf(err, sizeof err, "row %s-%d has no signature of its version", s->type,
                     s->since);
            return err;
        }
        rows++;
    }
    return rows >= OPS_SIGNATURES_N ? NULL : "fewer ai.onnx rows than signatures";
}

#define RUN_DIM(name) run_dim(#name, check_##name)
#define RUN(name, opset) run_graph(#name, opset, check_##name)

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--dump"))
        return dump_model(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "--ops")) { /* the op types with a rule */
        const OpSchema *s, *prev = NULL;
        for (size_t i = 0; (s = ops_at(i)); prev = s, i++)
            if (!prev || strcmp(prev->type, s->type) || strcmp(prev->domain, s->domain))
                printf("%s%s%s\n", s->domain, *s->domain ? ":" : "", s->type);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--rows")) { /* every row: its version and bounds */
        const OpSchema *s;
        for (size_t i = 0; (s = ops_at(i)); i++)
            printf("%s\t%s\t%d\t%u\t%u\t%u\t%u\n", *s->domain ? s->domain : "ai.onnx", s->type,
                   s->since, s->min_in, s->max_in, s->min_out, s->max_out);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: test_infer [--dump MODEL | --ops | --rows]\n");
        return 1;
    }
    RUN_DIM(registry_kernels);
    RUN_DIM(registry_signatures);
    RUN_DIM(dim_interning);
    RUN_DIM(dim_canonical);
    RUN_DIM(dim_exact_division);
    RUN_DIM(dim_floor_ceil);
    RUN_DIM(dim_overflow_is_fresh);
    RUN_DIM(dim_fresh_names);
    RUN(conv_pool_static, 13);
    RUN(like_input0_extra_inputs, 14);
    RUN(mod_value, 13);
    RUN(conv_symbolic, 13);
    RUN(broadcast, 13);
    RUN(data_propagation, 13);
    RUN(condition_values, 13);
    RUN(expand_tile_fill, 13);
    RUN(split_slice, 13);
    RUN(squeeze_opset11, 11);
    RUN(squeeze_opset13, 13);
    RUN(matmul_transpose_concat, 13);
    RUN(reduce_topk_cast, 13);
    RUN(pad_resize, 13);
    RUN(if_merge, 13);
    RUN(loop_generalises, 13);
    RUN(unknown_op_and_conflict, 13);
    RUN(declared_dims_fill_fresh_only, 13);
    RUN(opset_resolution, 13);
    RUN(contrib_ops, 13);
    RUN(sequence_ops, 13);
    RUN(split_to_sequence, 13);
    RUN(held_declarations, 13);
    RUN(held_sequence_symbols, 13);
    RUN(sequence_map, 17);
    RUN(optional_ops, 16);
    RUN(signal_ops, 17);
    RUN(text_training, 17);
    RUN(scan8, 8);
    printf("test_infer: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
