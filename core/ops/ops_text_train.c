/* ops_text_train.c - rules for the text operators (StringNormalizer,
 * TfIdfVectorizer) and the training operators of the
 * ai.onnx.preview.training domain (Adagrad, Momentum, Adam, Gradient), whose
 * outputs have the shapes of the tensors they update or differentiate. */
#include "ops.h"

/* StringNormalizer-10: [C] or [1, C] strings; stop words may remove any
 * number of them, so the last dim is not known. */
static int text_normalize(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0)
        return infer_set_dtype(c, 0, DT_STRING);
    if (x->rank < 1 || x->rank > 2)
        return infer_bad(c, "input must have rank 1 or 2");
    Dim d[2] = {x->dims[0], dim_fresh(c->dt)};
    if (x->rank == 1)
        d[0] = d[1];
    return infer_set(c, 0, DT_STRING, x->rank, d);
}

/* TfIdfVectorizer-9: [C] -> [max(ngram_indexes) + 1], [N, C] -> [N, that]. */
static int text_tfidf(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    const Attr *idx = op_attr(c->op, "ngram_indexes");
    if (x->rank >= 0 && (x->rank < 1 || x->rank > 2))
        return infer_bad(c, "input must have rank 1 or 2");
    if (x->rank < 0 || !idx || idx->type != ATTR_INTS || !idx->n)
        return infer_set_dtype(c, 0, DT_FLOAT);
    int64_t top = idx->ints[0];
    for (size_t i = 1; i < idx->n; i++)
        top = idx->ints[i] > top ? idx->ints[i] : top;
    Dim d[2] = {x->dims[0], dim_const(c->dt, top + 1)};
    if (x->rank == 1)
        d[0] = d[1];
    return infer_set(c, 0, DT_FLOAT, x->rank, d);
}

/* An optimizer's inputs are R, T, then `groups` blocks of n tensors (X, G,
 * then its state blocks); its outputs are the new X, then each new state:
 * every output has the shape of the input block it replaces. */
static int train_update(InferCtx *c, size_t groups)
{
    size_t n = (c->n_in - 2) / groups;
    if (c->n_in < 2 + groups || (c->n_in - 2) % groups || c->n_out != n * (groups - 1))
        return infer_bad(c, "inputs and outputs do not come in matching groups");
    for (size_t o = 0; o < c->n_out; o++) {
        size_t block = o / n; /* 0: X; then the state blocks after G */
        if (infer_copy(c, o, 2 + (block ? block + 1 : 0) * n + o % n))
            return -1;
    }
    return 0;
}

static int train_adagrad(InferCtx *c) { return train_update(c, 3); }
static int train_adam(InferCtx *c) { return train_update(c, 4); }

/* Gradient: output i is the gradient with respect to xs[i], input i. */
static int train_gradient(InferCtx *c)
{
    for (size_t i = 0; i < c->n_out; i++)
        if (infer_copy(c, i, i))
            return -1;
    return 0;
}

/* StringSplit-20: the substrings [..., max count] (the count known only at
 * run time) and their number per input string, of the input's shape. */
static int text_split(InferCtx *c)
{
    const InferFact *x = infer_in(c, 0);
    if (x->rank < 0 || x->rank >= 64)
        return infer_set_dtype(c, 0, DT_STRING) ? -1 : infer_set_dtype(c, 1, DT_INT64);
    Dim d[64];
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dims[i];
    d[x->rank] = dim_fresh(c->dt);
    if (infer_set(c, 0, DT_STRING, x->rank + 1, d))
        return -1;
    return infer_set(c, 1, DT_INT64, x->rank, x->dims);
}

#define TRAINING "ai.onnx.preview.training"

static const OpSchema ops_text_train[] = {
    {"", "StringNormalizer", 10, 1, 1, 1, 1, text_normalize},
    {"", "TfIdfVectorizer", 9, 1, 1, 1, 1, text_tfidf},
    {"", "StringSplit", 20, 1, 1, 2, 2, text_split},
    {TRAINING, "Adagrad", 1, 5, OPS_VARIADIC, 2, OPS_VARIADIC, train_adagrad},
    {TRAINING, "Momentum", 1, 5, OPS_VARIADIC, 2, OPS_VARIADIC, train_adagrad},
    {TRAINING, "Adam", 1, 6, OPS_VARIADIC, 3, OPS_VARIADIC, train_adam},
    {TRAINING, "Gradient", 1, 1, OPS_VARIADIC, 1, OPS_VARIADIC, train_gradient},
};

const OpTable ops_text_train_table = {ops_text_train,
                                      sizeof ops_text_train / sizeof ops_text_train[0]};
