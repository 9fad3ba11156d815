/* ops_registry.c - the op registry: every family's table, sorted once, searched by
 * (domain, type) and resolved to the newest since-version the model's
 * opset allows. */
#include "ops_registry.h"

#include "eval.h"
#include "ops.h"
#include "ops_signatures.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const OpTable *const ops_families[] = {
    &ops_elementwise_table, &ops_conv_table, &ops_shape_table, &ops_reduce_table,
    &ops_pad_resize_table, &ops_control_table, &ops_quant_rnn_table, &ops_generate_table,
    &ops_select_table, &ops_sequence_table, &ops_signal_table, &ops_text_train_table,
    &ops_contrib_table, &ops_versions_table, &ops_attention_table, &ops_image_table,
};

static const OpKernelTable *const ops_kernel_families[] = {
    &eval_elementwise_kernels, &eval_shape_kernels, &eval_reduce_kernels, &eval_scatter_kernels,
    &eval_nn_kernels, &eval_conv_kernels, &eval_index_kernels,
    &eval_attention_kernels, &eval_rnn_kernels, &eval_select_kernels, &eval_loss_kernels,
    &eval_transformer_kernels, &eval_activation_kernels, &eval_norm_kernels,
    &eval_resize_kernels, &eval_state_kernels, &eval_sequence_kernels, &eval_string_kernels,
    &eval_integer_kernels, &eval_quant_kernels, &eval_data_kernels, &eval_linalg_kernels,
    &eval_grid_kernels, &eval_signal_kernels, &eval_localnorm_kernels, &eval_image_kernels,
    &eval_roi_kernels,
};

/* The rows: schema, rule, kernel and signature column side by side, sorted
 * by domain, type and since-version. */
static const OpSchema **ops_sorted;
static InferRule *ops_rules;      /* ops_sorted[i]'s bounds and rule */
static OpEvalFn *ops_evals;       /* ops_sorted[i]'s kernel, or NULL: not folded */
static bool *ops_interp;          /* is that kernel the reference interpreter's only? */
static const OpSignature **ops_sigs; /* ops_sorted[i]'s ai.onnx signature, or NULL */
/* every kernel, sorted alike (ops_kernel_at), with its family's interpreter_only */
static struct KernelEntry {
    const OpKernel *k;
    bool interpreter_only;
} *ops_kernels;
static OpSchema *ops_made;        /* the rows made for versions no family lists */
static size_t ops_n, ops_n_made, ops_n_kernels;
static pthread_once_t ops_once = PTHREAD_ONCE_INIT;

static int ops_cmp_key(const char *dom, const char *type, const OpSchema *s)
{
    int c = strcmp(dom, s->domain);
    return c ? c : strcmp(type, s->type);
}

static int ops_cmp(const void *a, const void *b)
{
    const OpSchema *x = *(const OpSchema *const *)a, *y = *(const OpSchema *const *)b;
    int c = ops_cmp_key(x->domain, x->type, y);
    return c ? c : (x->since > y->since) - (x->since < y->since);
}

static int kernel_cmp(const void *a, const void *b)
{
    const OpKernel *x = ((const struct KernelEntry *)a)->k;
    const OpKernel *y = ((const struct KernelEntry *)b)->k;
    int c = strcmp(x->domain, y->domain);
    c = c ? c : strcmp(x->type, y->type);
    return c ? c : (x->since > y->since) - (x->since < y->since);
}

/* The signature of ai.onnx `type` at exactly `since`, or NULL. */
static const OpSignature *signature_of(const char *type, int since)
{
    size_t lo = 0, hi = OPS_SIGNATURES_N;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const OpSignature *g = &OPS_SIGNATURES[mid];
        int c = strcmp(g->type, type);
        if (c < 0 || (c == 0 && g->since < since))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < OPS_SIGNATURES_N && !strcmp(OPS_SIGNATURES[lo].type, type) &&
                   OPS_SIGNATURES[lo].since == since
               ? &OPS_SIGNATURES[lo]
               : NULL;
}

/* Is there a family row of ai.onnx `type` at exactly `since`? (The family
 * rows are sorted already.) */
static bool family_row(const char *type, int since)
{
    OpSchema key = {"", type, since, 0, 0, 0, 0, NULL};
    const OpSchema *k = &key;
    return bsearch(&k, ops_sorted, ops_n, sizeof *ops_sorted, ops_cmp) != NULL;
}

/* A row for every ai.onnx version no family file lists (its types grew, or
 * what changed is nothing its rule reads): one row per op version, each
 * with its signature. Its bounds and rule are resolved in rules_resolve. */
static void rows_make(void)
{
    for (size_t i = 0; i < OPS_SIGNATURES_N; i++) {
        const OpSignature *g = &OPS_SIGNATURES[i];
        if (!family_row(g->type, g->since))
            ops_made[ops_n_made++] = (OpSchema){"", g->type, g->since, 0, 0, 0, 0, NULL};
    }
    for (size_t i = 0; i < ops_n_made; i++)
        ops_sorted[ops_n++] = &ops_made[i];
    qsort(ops_sorted, ops_n, sizeof *ops_sorted, ops_cmp);
}

static bool row_made(const OpSchema *s)
{
    return s >= ops_made && s < ops_made + ops_n_made;
}

/* Row i's bounds and rule: a family row's own, its rule the previous row's
 * when infer is NULL; a made row the previous row's of its op (resolved
 * already), or, the op's first, its signature's bounds and no rule. */
static InferRule rule_of(size_t i, const OpSignature *g, bool same_op)
{
    const OpSchema *s = ops_sorted[i];
    const InferRule *prev = same_op ? &ops_rules[i - 1] : NULL;
    InferRule r = {s->since, s->min_in, s->max_in, s->min_out, s->max_out, s->infer};
    if (row_made(s) && prev) {
        r = *prev;
        r.since = s->since;
    } else if (row_made(s)) {
        r = (InferRule){s->since, 0, g->variadic ? UINT16_MAX : g->n_in, 0, g->n_out, NULL};
    } else if (!r.infer && prev) {
        r.infer = prev->infer;
    }
    return r;
}

/* The rule and signature columns. A row without a signature of its own
 * version (none in ai.onnx but onnxruntime's SimplifiedLayerNormalization)
 * keeps the previous row's. */
static void rules_resolve(void)
{
    for (size_t i = 0; i < ops_n; i++) {
        const OpSchema *s = ops_sorted[i];
        bool same_op = i > 0 && !ops_cmp_key(s->domain, s->type, ops_sorted[i - 1]);
        const OpSignature *g = *s->domain ? NULL : signature_of(s->type, s->since);
        ops_sigs[i] = g ? g : same_op ? ops_sigs[i - 1] : NULL;
        ops_rules[i] = rule_of(i, g, same_op);
        if (row_made(s)) { /* its schema tells the bounds it was given */
            OpSchema *m = &ops_made[s - ops_made];
            m->min_in = ops_rules[i].min_in;
            m->max_in = ops_rules[i].max_in;
            m->min_out = ops_rules[i].min_out;
            m->max_out = ops_rules[i].max_out;
        }
    }
}

/* The kernel column, walking rows and kernels (both sorted) side by side:
 * each row gets the newest kernel of its op not newer than it. A kernel's
 * since-version is always a row's (test_infer checks), so each kernel serves
 * the rows from its version to the next kernel's. */
static void kernels_join(void)
{
    const struct KernelEntry *cur = NULL;
    for (size_t i = 0, j = 0; i < ops_n; i++) {
        const OpSchema *s = ops_sorted[i];
        if (i == 0 || ops_cmp_key(s->domain, s->type, ops_sorted[i - 1]))
            cur = NULL;
        for (; j < ops_n_kernels; j++) {
            const OpKernel *k = ops_kernels[j].k;
            int c = ops_cmp_key(k->domain, k->type, s);
            if (c > 0 || (c == 0 && k->since > s->since))
                break;
            cur = c == 0 ? &ops_kernels[j] : cur;
        }
        ops_evals[i] = cur ? cur->k->eval : NULL;
        ops_interp[i] = cur && cur->interpreter_only;
    }
}

static void kernels_build(void)
{
    for (size_t f = 0; f < sizeof ops_kernel_families / sizeof *ops_kernel_families; f++)
        for (size_t i = 0; i < ops_kernel_families[f]->n; i++)
            ops_kernels[ops_n_kernels++] = (struct KernelEntry){
                &ops_kernel_families[f]->entries[i], ops_kernel_families[f]->interpreter_only};
    qsort(ops_kernels, ops_n_kernels, sizeof *ops_kernels, kernel_cmp);
}

static void ops_build_free(void)
{
    free(ops_sorted);
    free(ops_rules);
    free(ops_evals);
    free(ops_interp);
    free(ops_sigs);
    free(ops_kernels);
    free(ops_made);
    ops_sorted = NULL;
    ops_rules = NULL;
    ops_evals = NULL;
    ops_interp = NULL;
    ops_sigs = NULL;
    ops_kernels = NULL;
    ops_made = NULL;
}

/* Builds the sorted index; on allocation failure lookups find nothing
 * (every op then reads as unknown, which is safe). */
static void ops_build(void)
{
    size_t n = OPS_SIGNATURES_N, k = 0;
    for (size_t f = 0; f < sizeof ops_families / sizeof ops_families[0]; f++)
        n += ops_families[f]->n;
    for (size_t f = 0; f < sizeof ops_kernel_families / sizeof *ops_kernel_families; f++)
        k += ops_kernel_families[f]->n;
    ops_sorted = malloc(n * sizeof *ops_sorted);
    ops_rules = malloc(n * sizeof *ops_rules);
    ops_evals = malloc(n * sizeof *ops_evals);
    ops_interp = malloc(n * sizeof *ops_interp);
    ops_sigs = malloc(n * sizeof *ops_sigs);
    ops_kernels = malloc(k * sizeof *ops_kernels);
    ops_made = malloc(OPS_SIGNATURES_N * sizeof *ops_made);
    if (!ops_sorted || !ops_rules || !ops_evals || !ops_interp || !ops_sigs || !ops_kernels ||
        !ops_made) {
        ops_build_free();
        return;
    }
    kernels_build();
    for (size_t f = 0; f < sizeof ops_families / sizeof ops_families[0]; f++)
        for (size_t i = 0; i < ops_families[f]->n; i++)
            ops_sorted[ops_n++] = &ops_families[f]->entries[i];
    qsort(ops_sorted, ops_n, sizeof *ops_sorted, ops_cmp);
    rows_make();
    rules_resolve();
    kernels_join();
}

/* The index of the entry ops_lookup() finds, or ops_n. */
static size_t ops_find(const char *domain, const char *type, int64_t opset)
{
    pthread_once(&ops_once, ops_build);
    size_t lo = 0, hi = ops_n;
    while (lo < hi) { /* first entry not below (domain, type) */
        size_t mid = lo + (hi - lo) / 2;
        if (ops_cmp_key(domain, type, ops_sorted[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t best = ops_n;
    for (; lo < ops_n && !ops_cmp_key(domain, type, ops_sorted[lo]); lo++)
        if (ops_sorted[lo]->since <= opset)
            best = lo;
    return best;
}

const OpSchema *ops_lookup(const char *domain, const char *type, int64_t opset)
{
    size_t i = ops_find(domain, type, opset);
    return i < ops_n ? ops_sorted[i] : NULL;
}

const InferRule *ops_rule(const char *domain, const char *type, int64_t opset)
{
    size_t i = ops_find(domain, type, opset);
    return i < ops_n && ops_rules[i].infer ? &ops_rules[i] : NULL;
}

const OpSchema *ops_at(size_t i)
{
    pthread_once(&ops_once, ops_build);
    return i < ops_n ? ops_sorted[i] : NULL;
}


/* The row of the op at opset when a node of n_in inputs and n_out outputs
 * is within its bounds, else ops_n. */
static size_t ops_kernel_row(const char *domain, const char *type, int64_t opset, size_t n_in,
                             size_t n_out)
{
    size_t i = ops_find(domain, type, opset);
    return i == ops_n || !infer_rule_counts_ok(&ops_rules[i], n_in, n_out) ? ops_n : i;
}

OpEvalFn ops_kernel(const char *domain, const char *type, int64_t opset, size_t n_in,
                    size_t n_out)
{
    size_t i = ops_kernel_row(domain, type, opset, n_in, n_out);
    return i == ops_n ? NULL : ops_evals[i];
}

OpEvalFn ops_fold_kernel(const char *domain, const char *type, int64_t opset, size_t n_in,
                         size_t n_out)
{
    size_t i = ops_kernel_row(domain, type, opset, n_in, n_out);
    return i == ops_n || ops_interp[i] ? NULL : ops_evals[i];
}

const OpSignature *ops_signature(const char *type, int64_t opset)
{
    size_t i = ops_find("", type, opset);
    return i < ops_n ? ops_sigs[i] : NULL;
}

const OpKernel *ops_kernel_at(size_t i)
{
    pthread_once(&ops_once, ops_build);
    return i < ops_n_kernels ? ops_kernels[i].k : NULL;
}
