/* cse.c - pass "cse": common subexpressions. Two nodes of the same
 * default-domain operator with equal attributes reading the same inputs
 * compute the same values: the later one's readers read the earlier one's
 * outputs and the later node goes. "The same input" is the same value, or two
 * small initializers of equal type, shape and bytes (Constant nodes turned
 * into initializers, split-params' copies).
 *
 * Never merged: operators whose result is random (Random*, Multinomial,
 * Bernoulli, Dropout), QuantizeLinear/DequantizeLinear (a quantized model's
 * pairs stay as the quantizer wrote them, one per consumer), nodes with
 * subgraphs, nodes of other domains (their semantics are unknown here), and
 * a later node that writes a graph output (its name must stay).
 *
 * One walk in node order with a hash table of the nodes seen, keyed by a
 * hash of operator, attributes and inputs: linear in the graph's size. A
 * node's readers move before the next node is hashed, so a chain of
 * duplicates (Shape -> Gather -> Unsqueeze repeated) collapses in one walk. */
#include <string.h>

#include "../core/ir/hashtab.h"
#include "params.h"
#include "passes.h"

enum { CSE_MAX_CONST_BYTES = 4096 }; /* initializers compared by value up to this */

static const char *const RANDOM[] = {
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
    "Bernoulli", "Dropout",
};

static bool cse_candidate(const Op *op)
{
    if (op->removed || !op->n_outputs || (*op->domain && strcmp(op->domain, "ai.onnx") != 0) ||
        op_is_quantized(op))
        return false;
    for (size_t i = 0; i < sizeof RANDOM / sizeof *RANDOM; i++)
        if (strcmp(op->type, RANDOM[i]) == 0)
            return false;
    for (size_t k = 0; k < op->n_attrs; k++)
        if (op->attrs[k].type == ATTR_GRAPH || op->attrs[k].type == ATTR_GRAPHS)
            return false;
    for (size_t j = 0; j < op->n_outputs; j++)
        if (!op->outputs[j])
            return false;
    return true;
}

/* v's bytes when it is a small constant compared by value, else NULL. */
static const Tensor *cse_small_const(const Var *v)
{
    const Tensor *t = v ? param_numeric(v) : NULL;
    return t && t == v->param && t->data && t->nbytes <= CSE_MAX_CONST_BYTES ? t : NULL;
}

static uint64_t hash_input(uint64_t h, const Var *v)
{
    const Tensor *t = cse_small_const(v);
    if (!t)
        return hash_word(h, (uint64_t)(uintptr_t)v);
    h = hash_word(hash_word(h, (uint64_t)t->dtype), t->ndims);
    h = hash_bytes(h, t->dims, t->ndims * sizeof *t->dims);
    return hash_bytes(h, t->data, t->nbytes);
}

/* Attributes hash by name, type and scalar value (order-free: summed); lists
 * and tensors are left to the full comparison. */
static uint64_t hash_attrs(const Op *op)
{
    uint64_t sum = 0;
    for (size_t k = 0; k < op->n_attrs; k++) {
        const Attr *a = &op->attrs[k];
        uint64_t h = hash_bytes(hash_word(HASH_START, (uint64_t)a->type), a->name,
                               strlen(a->name));
        sum += hash_word(hash_word(h, (uint64_t)a->i), a->n);
    }
    return sum;
}

static uint64_t cse_hash(const Op *op)
{
    uint64_t h = hash_bytes(HASH_START, op->type, strlen(op->type));
    h = hash_word(hash_word(h, op->n_inputs), op->n_outputs);
    for (size_t s = 0; s < op->n_inputs; s++)
        h = hash_input(h, op->inputs[s]);
    h = hash_word(h, hash_attrs(op));
    return h ? h : 1;
}

static bool same_input(const Var *a, const Var *b)
{
    if (a == b)
        return true;
    const Tensor *x = cse_small_const(a), *y = cse_small_const(b);
    return x && y && x->dtype == y->dtype && x->ndims == y->ndims && x->nbytes == y->nbytes &&
           !memcmp(x->dims, y->dims, x->ndims * sizeof *x->dims) &&
           !memcmp(x->data, y->data, x->nbytes);
}

static bool same_tensor(const Tensor *x, const Tensor *y)
{
    return x->dtype == y->dtype && x->ndims == y->ndims && x->nbytes == y->nbytes && x->data &&
           y->data && !memcmp(x->dims, y->dims, x->ndims * sizeof *x->dims) &&
           !memcmp(x->data, y->data, x->nbytes);
}

static bool same_attr(const Attr *a, const Attr *b)
{
    if (a->type != b->type || a->n != b->n || a->i != b->i ||
        memcmp(&a->f, &b->f, sizeof a->f) != 0 || a->s.len != b->s.len ||
        (a->s.len && memcmp(a->s.ptr, b->s.ptr, a->s.len) != 0))
        return false;
    if ((a->ints && memcmp(a->ints, b->ints, a->n * sizeof *a->ints)) ||
        (a->floats && memcmp(a->floats, b->floats, a->n * sizeof *a->floats)))
        return false;
    for (size_t i = 0; a->strings && i < a->n; i++)
        if (a->strings[i].len != b->strings[i].len ||
            memcmp(a->strings[i].ptr, b->strings[i].ptr, a->strings[i].len))
            return false;
    size_t n_tensors = a->type == ATTR_TENSOR ? 1 : a->type == ATTR_TENSORS ? a->n : 0;
    for (size_t i = 0; i < n_tensors; i++)
        if (!a->tensors || !b->tensors || !same_tensor(a->tensors[i], b->tensors[i]))
            return false;
    return true;
}

static bool same_attrs(const Op *a, const Op *b)
{
    if (a->n_attrs != b->n_attrs)
        return false;
    for (size_t k = 0; k < a->n_attrs; k++) {
        const Attr *other = op_attr(b, a->attrs[k].name);
        if (!other || !same_attr(&a->attrs[k], other))
            return false;
    }
    return true;
}

static bool cse_equal(const Op *a, const Op *b)
{
    if (strcmp(a->type, b->type) || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs)
        return false;
    for (size_t s = 0; s < a->n_inputs; s++)
        if (!same_input(a->inputs[s], b->inputs[s]))
            return false;
    return same_attrs(a, b);
}

/* dup's readers read keep's outputs instead, and dup goes. */
static bool cse_merge(Op *keep, Op *dup)
{
    for (size_t j = 0; j < dup->n_outputs; j++)
        if (dup->outputs[j]->n_output_lists || !readers_may_move_to(keep->outputs[j]))
            return false;
    for (size_t j = 0; j < dup->n_outputs; j++)
        var_replace_all_uses(dup->outputs[j], keep->outputs[j]);
    return graph_remove_op(dup, NULL) == 0;
}

static bool cse_same(const void *stored, const void *op)
{
    return cse_equal(stored, op);
}

static int pass_cse(PassCtx *pc)
{
    Graph *g = pc->g;
    Diag *d = pc->d;
    HashTab t;
    if (hashtab_init(&t, g->n_ops))
        return diag_set(d, PPQ_EINTERNAL, "out of memory (cse)");
    for (size_t i = 0; i < g->n_ops; i++) {
        Op *op = g->ops[i];
        if (!cse_candidate(op))
            continue;
        Op *keep = hashtab_find_or_add(&t, cse_hash(op), op, cse_same);
        const char *label = keep ? op_label(op) : NULL;
        if (keep && cse_merge(keep, op))
            model_note(g->model, "merged into an equal node", label);
    }
    hashtab_free(&t);
    return 0;
}

const Pass cse_pass = {
    .name = "cse",
    .help = "merge nodes computing the same operator on the same inputs",
    .on_by_default = true,
    .run = pass_cse,
    .facts = FACTS_NONE,
    .acts_on = NULL,
};
