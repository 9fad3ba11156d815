/* eval_string.c - kernels on string tensors, for the reference interpreter
 * only: StringConcat, StringSplit, StringNormalizer, RegexFullMatch and
 * TfIdfVectorizer (formatter/fold.c never folds them), and the string cases
 * of Equal and Cast/CastLike, which their kernels (eval_elementwise.c) hand
 * here and which decline while folding, so that what the formatter writes
 * does not depend on them.
 *
 * Where onnxruntime and onnx's reference disagree, or depend on the locale
 * or on Unicode tables, the kernels decline rather than pick one: strings
 * outside ASCII where case or whitespace matters, a float written as text
 * (onnxruntime prints 8 significant digits, numpy the shortest that reads
 * back), StringNormalizer's elements holding spaces or empty strings. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval.h"
#include "eval_regex.h"

/* Input i as a string tensor whose strings match its dims (NULL otherwise). */
static const Tensor *str_in(const EvalCtx *c, size_t i)
{
    const Tensor *t = i < c->n_in ? c->in[i] : NULL;
    return t && t->dtype == DT_STRING && t->ndims <= EVAL_MAX_RANK &&
                   (int64_t)t->n_strings == tensor_numel(t)
               ? t
               : NULL;
}

/* A new string tensor as output i, every element empty. */
static Tensor *str_out(EvalCtx *c, size_t i, size_t rank, const int64_t *dims)
{
    int64_t n = dims_numel(dims, rank);
    if (n < 0 || (uint64_t)n > c->limit / sizeof(Bytes)) {
        eval_decline_too_large(c);
        return NULL;
    }
    c->why = NULL;
    Bytes *s = arena_array(c->arena, n ? (size_t)n : 1, sizeof *s);
    Tensor *t = s ? tensor_new_strings(c->arena, rank, dims, s, (size_t)n) : NULL;
    for (int64_t k = 0; t && k < n; k++)
        s[k] = (Bytes){(const uint8_t *)"", 0};
    if (t && i < c->n_out)
        c->out[i] = t;
    return t;
}

/* dst = a copy of a[0..na) followed by b[0..nb) in the arena. */
static int str_set(EvalCtx *c, Bytes *dst, const uint8_t *a, size_t na, const uint8_t *b,
                   size_t nb)
{
    uint8_t *p = arena_alloc(c->arena, na + nb + 1);
    if (!p)
        return EVAL_OOM;
    if (na)
        memcpy(p, a, na);
    if (nb)
        memcpy(p + na, b, nb);
    p[na + nb] = 0;
    *dst = (Bytes){p, na + nb};
    return EVAL_OK;
}

static bool str_ascii(Bytes s)
{
    for (size_t k = 0; k < s.len; k++)
        if (s.ptr[k] >= 0x80)
            return false;
    return true;
}

static bool str_eq(Bytes a, Bytes b)
{
    return a.len == b.len && (!a.len || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int str_refuse_folding(EvalCtx *c)
{
    return eval_decline(c, "string ops are left to the runtime when folding");
}

/* --- StringConcat and Equal: elementwise with broadcasting --- */

/* Output 0 of dtype dt (DT_STRING or DT_BOOL) from inputs 0 and 1 broadcast,
 * element by element: concatenated, or compared. */
static int str_binary(EvalCtx *c, bool concat)
{
    const Tensor *ts[2] = {str_in(c, 0), str_in(c, 1)};
    int64_t dims[EVAL_MAX_RANK];
    if (c->folding)
        return str_refuse_folding(c);
    if (!ts[0] || !ts[1] || c->n_in != 2)
        return eval_decline(c, "an input is absent or not a string tensor");
    int rank = eval_broadcast(ts, 2, dims);
    if (rank < 0)
        return eval_decline(c, "the inputs do not broadcast");
    Tensor *z = concat ? str_out(c, 0, (size_t)rank, dims)
                       : eval_out(c, 0, DT_BOOL, (size_t)rank, dims);
    if (!z)
        return eval_out_failed(c);
    int64_t n = dims_numel(dims, (size_t)rank);
    for (int64_t e = 0; e < n; e++) {
        Bytes a = ts[0]->strings[eval_broadcast_offset(ts[0], dims, (size_t)rank, (size_t)e)];
        Bytes b = ts[1]->strings[eval_broadcast_offset(ts[1], dims, (size_t)rank, (size_t)e)];
        if (!concat)
            ((uint8_t *)z->data)[e] = str_eq(a, b);
        else if (str_set(c, &z->strings[e], a.ptr, a.len, b.ptr, b.len))
            return EVAL_OOM;
    }
    return EVAL_OK;
}

static int eval_string_concat(EvalCtx *c)
{
    return str_binary(c, true);
}

int eval_string_equal(EvalCtx *c)
{
    return str_binary(c, false);
}

/* --- StringSplit --- */

/* The pieces of s: split at each sep (nsep > 0), else at runs of spaces
 * (leading and trailing ones ignored), at most max splits (max < 0: no
 * limit), as Python's str.split. Pieces go to out (when not NULL); the count. */
static size_t split_one(Bytes s, const uint8_t *sep, size_t nsep, int64_t max, Bytes *out)
{
    size_t count = 0, k = 0;
    if (!nsep)
        while (k < s.len && s.ptr[k] == ' ')
            k++;
    while (nsep || k < s.len) {
        size_t end = k;
        bool last = max >= 0 && (int64_t)count == max;
        while (!last && end < s.len &&
               !(nsep ? end + nsep <= s.len && memcmp(s.ptr + end, sep, nsep) == 0
                      : s.ptr[end] == ' '))
            end++;
        if (last)
            end = s.len;
        if (out)
            out[count] = (Bytes){s.ptr + k, end - k};
        count++;
        if (end >= s.len)
            break;
        k = end + nsep;
        while (!nsep && k < s.len && s.ptr[k] == ' ')
            k++;
    }
    return count;
}

/* Whitespace other than ' ' (or any byte outside ASCII) in s: Python's and
 * onnxruntime's notions of whitespace may differ there. */
static bool split_unsure(Bytes s, int64_t max)
{
    for (size_t k = 0; k < s.len; k++)
        if (s.ptr[k] >= 0x80 || (s.ptr[k] != ' ' && strchr("\t\n\v\f\r\x1c\x1d\x1e\x1f", s.ptr[k])))
            return true;
    return max >= 0 && s.len && s.ptr[s.len - 1] == ' '; /* the rest keeps trailing spaces */
}

static int eval_string_split(EvalCtx *c)
{
    const Tensor *x = str_in(c, 0);
    const Attr *d = op_attr(c->op, "delimiter");
    int64_t max = op_attr(c->op, "maxsplit") ? op_attr_int(c->op, "maxsplit", -1) : -1;
    if (c->folding)
        return str_refuse_folding(c);
    if (!x || x->ndims + 1 > EVAL_MAX_RANK)
        return eval_decline(c, "the input is not a string tensor");
    if (op_attr(c->op, "maxsplit") && max <= 0)
        return eval_decline(c, "a maxsplit under 1");
    size_t nsep = d ? d->s.len : 0, widest = 0;
    for (size_t e = 0; e < x->n_strings; e++) {
        if (!nsep && split_unsure(x->strings[e], max))
            return eval_decline(c, "whitespace other than spaces, or text outside ASCII");
        if (nsep && !x->strings[e].len) /* numpy: one empty piece; onnxruntime: none */
            return eval_decline(c, "an empty string split at a delimiter");
        size_t k = split_one(x->strings[e], nsep ? d->s.ptr : NULL, nsep, max, NULL);
        widest = k > widest ? k : widest;
    }
    int64_t dims[EVAL_MAX_RANK];
    memcpy(dims, x->dims, x->ndims * sizeof *dims);
    dims[x->ndims] = (int64_t)widest;
    Tensor *y = str_out(c, 0, x->ndims + 1, dims);
    Tensor *z = y && c->n_out > 1 ? eval_out(c, 1, DT_INT64, x->ndims, x->dims) : y;
    if (!z)
        return eval_out_failed(c);
    for (size_t e = 0; e < x->n_strings; e++) {
        Bytes *piece = y->strings + e * widest;
        size_t k = split_one(x->strings[e], nsep ? d->s.ptr : NULL, nsep, max, piece);
        for (size_t j = 0; j < k; j++) /* copies: x's memory may be freed before y's */
            if (str_set(c, &piece[j], piece[j].ptr, piece[j].len, NULL, 0))
                return EVAL_OOM;
        if (c->n_out > 1)
            tensor_set_i64(z, e, (int64_t)k);
    }
    return EVAL_OK;
}

/* --- RegexFullMatch --- */

static int eval_regex_full_match(EvalCtx *c)
{
    const Tensor *x = str_in(c, 0);
    const Attr *p = op_attr(c->op, "pattern");
    char ere[4096], text[4096];
    regex_t re;
    if (c->folding)
        return str_refuse_folding(c);
    if (!x || !p || p->type != ATTR_STRING)
        return eval_decline(c, "the input is not a string tensor, or no pattern");
    if (!eval_regex_to_ere((const char *)p->s.ptr, p->s.len, ere, sizeof ere))
        return eval_decline(c, "the pattern uses RE2 syntax POSIX regular expressions "
                               "do not read the same way");
    if (regcomp(&re, ere, REG_EXTENDED | REG_NOSUB))
        return eval_decline(c, "the pattern does not compile as a POSIX regular expression");
    Tensor *y = eval_out(c, 0, DT_BOOL, x->ndims, x->dims);
    int rc = y ? EVAL_OK : eval_out_failed(c);
    for (size_t e = 0; !rc && e < x->n_strings; e++) {
        Bytes s = x->strings[e];
        if (!str_ascii(s) || s.len >= sizeof text || memchr(s.ptr, '\n', s.len) ||
            (s.len && memchr(s.ptr, 0, s.len))) {
            rc = eval_decline(c, "a string outside ASCII, with a newline or too long");
            break;
        }
        memcpy(text, s.ptr, s.len);
        text[s.len] = 0;
        ((uint8_t *)y->data)[e] = regexec(&re, text, 0, NULL, 0) == 0;
    }
    regfree(&re);
    return rc;
}

/* --- StringNormalizer --- */

static bool norm_is_stop(const Attr *stops, Bytes s, bool sensitive)
{
    for (size_t k = 0; stops && k < stops->n; k++)
        if (sensitive ? str_eq(stops->strings[k], s)
                      : stops->strings[k].len == s.len &&
                            strncasecmp((const char *)stops->strings[k].ptr,
                                        (const char *)s.ptr, s.len) == 0)
            return true;
    return false;
}

/* Declines what onnxruntime and onnx's reference do differently, or what
 * depends on the locale: text outside ASCII (case tables, the reference's
 * accent stripping), empty elements (the reference drops them), spaces in
 * an element (the reference removes stopwords word by word), a locale other
 * than the default or English. */
static const char *norm_unsure(const EvalCtx *c, const Tensor *x, const Attr *stops)
{
    const Attr *loc = op_attr(c->op, "locale");
    const char *l = loc ? (const char *)loc->s.ptr : "";
    size_t ln = loc ? loc->s.len : 0;
    if (ln && !(ln >= 2 && strncmp(l, "en", 2) == 0) && !(ln == 1 && l[0] == 'C') &&
        !(ln >= 2 && strncmp(l, "C.", 2) == 0) && !(ln == 5 && strncmp(l, "POSIX", 5) == 0))
        return "a locale other than English, C or POSIX";
    for (size_t e = 0; e < x->n_strings; e++) {
        Bytes s = x->strings[e];
        if (!s.len || !str_ascii(s) || (stops && memchr(s.ptr, ' ', s.len)))
            return "an empty element, text outside ASCII, or spaces with stopwords";
    }
    for (size_t k = 0; stops && k < stops->n; k++)
        if (!str_ascii(stops->strings[k]))
            return "a stopword outside ASCII";
    return NULL;
}

static int eval_string_normalizer(EvalCtx *c)
{
    static const char *const actions[] = {"NONE", "LOWER", "UPPER"};
    const Tensor *x = str_in(c, 0);
    const Attr *stops = op_attr(c->op, "stopwords");
    int action = eval_attr_choice(c->op, "case_change_action", actions, 3);
    bool sensitive = op_attr_int(c->op, "is_case_sensitive", 0) != 0;
    if (c->folding)
        return str_refuse_folding(c);
    if (!x || action == 3 || !x->n_strings ||
        !(x->ndims == 1 || (x->ndims == 2 && x->dims[0] == 1)))
        return eval_decline(c, "not a [C] or [1, C] string tensor, or an unknown case action");
    const char *why = norm_unsure(c, x, stops && stops->n ? stops : NULL);
    if (why)
        return eval_decline(c, why);
    size_t kept = 0;
    for (size_t e = 0; e < x->n_strings; e++)
        kept += !norm_is_stop(stops, x->strings[e], sensitive);
    int64_t dims[2] = {1, kept ? (int64_t)kept : 1};
    Tensor *y = str_out(c, 0, x->ndims, dims + (x->ndims == 1));
    if (!y)
        return eval_out_failed(c);
    for (size_t e = 0, k = 0; e < x->n_strings; e++) {
        Bytes s = x->strings[e];
        if (norm_is_stop(stops, s, sensitive))
            continue;
        if (str_set(c, &y->strings[k], s.ptr, s.len, NULL, 0))
            return EVAL_OOM;
        uint8_t *p = (uint8_t *)y->strings[k++].ptr;
        for (size_t j = 0; action && j < s.len; j++)
            p[j] = (uint8_t)(action == 1 ? tolower(p[j]) : toupper(p[j]));
    }
    return EVAL_OK;
}

/* --- Cast and CastLike to and from strings --- */

/* Is s a decimal number numpy and the C library read alike: [+-]digits
 * [.digits][e[+-]digits] (integral: digits only, with its sign)? */
static bool cast_plain_number(Bytes s, bool integral)
{
    size_t k = s.len && (s.ptr[0] == '+' || s.ptr[0] == '-'), digits = 0;
    for (; k < s.len && isdigit(s.ptr[k]); k++)
        digits++;
    if (!integral && k < s.len && s.ptr[k] == '.')
        for (k++; k < s.len && isdigit(s.ptr[k]); k++)
            digits++;
    if (!integral && digits && k < s.len && (s.ptr[k] == 'e' || s.ptr[k] == 'E')) {
        size_t e = ++k < s.len && (s.ptr[k] == '+' || s.ptr[k] == '-') ? ++k : k;
        for (; k < s.len && isdigit(s.ptr[k]); k++)
            ;
        if (k == e)
            return false;
    }
    return digits && k == s.len;
}

static const char *const CAST_SPECIAL[] = {"NaN", "INF", "+INF", "-INF"};

/* String s read as a number of type to into v; false when unsure. */
static bool cast_parse(Bytes s, int32_t to, EvalNum *v)
{
    char buf[64];
    bool special = false; /* the spec's "NaN", "INF", "+INF", "-INF", any case */
    for (int k = 0; k < 4; k++)
        special |= strlen(CAST_SPECIAL[k]) == s.len &&
                   strncasecmp(CAST_SPECIAL[k], (const char *)s.ptr, s.len) == 0;
    if (special && (to == DT_FLOAT || to == DT_DOUBLE)) {
        v->f = tolower(s.ptr[s.len - 1]) == 'n' ? NAN : s.ptr[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (s.len >= sizeof buf || !cast_plain_number(s, !dtype_is_float(to)))
        return false;
    memcpy(buf, s.ptr, s.len);
    buf[s.len] = 0;
    if (to == DT_DOUBLE || to == DT_FLOAT) {
        double d = strtod(buf, NULL);
        float f = strtof(buf, NULL); /* read once to float: a double rounding differs */
        v->f = to == DT_DOUBLE ? d : (double)f;
        return to == DT_DOUBLE || (float)d == f || (isnan(d) && isnan(f));
    }
    if (dtype_is_float(to) || to == DT_BOOL || to == DT_UINT64)
        return false;
    long long i = strtoll(buf, NULL, 10);
    EvalNum back = eval_convert(eval_convert((EvalNum){.i = i}, DT_INT64, to), to, DT_INT64);
    v->i = i;
    return back.i == i && i != LLONG_MAX && i != LLONG_MIN;
}

/* Element value v of type from as text, into buf; false when onnxruntime
 * and onnx's reference write it differently (floats: onnxruntime's "%.8g",
 * numpy's shortest text that reads back, with ".0" on whole numbers). */
static bool cast_format(EvalNum v, int32_t from, char *buf, size_t cap)
{
    if (from == DT_FLOAT) {
        char shortest[64];
        float f = (float)v.f;
        if (!isfinite(f))
            return false;
        for (int p = 1; p <= 9; p++) {
            snprintf(shortest, sizeof shortest, "%.*g", p, v.f);
            if (strtof(shortest, NULL) == f)
                break;
        }
        snprintf(buf, cap, "%.8g", v.f);
        return strcmp(buf, shortest) == 0 && strchr(buf, '.') && !strchr(buf, 'e');
    }
    if (dtype_is_float(from) || from == DT_BOOL || from == DT_UINT64)
        return false;
    snprintf(buf, cap, "%lld", (long long)v.i);
    return true;
}

int eval_string_cast(EvalCtx *c, int32_t to)
{
    const Tensor *x = c->n_in ? c->in[0] : NULL;
    if (c->folding)
        return str_refuse_folding(c);
    if (!x || (x->dtype == DT_STRING ? !str_in(c, 0) : !eval_in(c, 0)) ||
        (to != DT_STRING && !eval_dtype_ok(to)))
        return eval_decline(c, "a cast between strings and an unsupported type");
    if (x->dtype == DT_STRING && to == DT_STRING) {
        c->out[0] = tensor_copy_strings(c->arena, x);
        return c->out[0] ? EVAL_OK : EVAL_OOM;
    }
    Tensor *y = to == DT_STRING ? str_out(c, 0, x->ndims, x->dims)
                                : eval_out(c, 0, to, x->ndims, x->dims);
    const uint8_t *b = x->dtype == DT_STRING ? NULL : eval_bytes(c, x);
    if (!y || (x->dtype != DT_STRING && !b))
        return y ? EVAL_DECLINE : eval_out_failed(c);
    size_t n = (size_t)tensor_numel(x), size = dtype_size(x->dtype);
    for (size_t e = 0; e < n; e++) {
        char text[64];
        EvalNum v;
        if (to != DT_STRING && !cast_parse(x->strings[e], to, &v))
            return eval_decline(c, "a string that is not a plain decimal number of the type");
        if (to != DT_STRING)
            eval_store(to, (uint8_t *)y->data + e * dtype_size(to), v);
        else if (!cast_format(eval_load(x->dtype, b + e * size), x->dtype, text, sizeof text))
            return eval_decline(c, "a number onnxruntime and numpy write differently");
        else if (str_set(c, &y->strings[e], (const uint8_t *)text, strlen(text), NULL, 0))
            return EVAL_OOM;
    }
    return EVAL_OK;
}

/* --- TfIdfVectorizer --- */

/* The pool: pool_int64s or pool_strings, n-grams of size n from
 * ngram_counts[n-1] to the next start; n-gram j (counted over all sizes)
 * goes to output column ngram_indexes[j]. */
typedef struct TfIdfPool {
    const Attr *ints, *strs, *counts, *indexes;
    size_t items;
} TfIdfPool;

/* Does pool item p equal input element e of x? */
static bool tfidf_item_eq(const TfIdfPool *pool, size_t p, const Tensor *x, const uint8_t *xb,
                          size_t e)
{
    if (pool->strs)
        return str_eq(pool->strs->strings[p], x->strings[e]);
    return pool->ints->ints[p] == eval_load(x->dtype, xb + e * dtype_size(x->dtype)).i;
}

/* The first pool n-gram of size n equal to x's elements at (start,
 * start+step, ...): its number over all sizes, or -1. */
static int64_t tfidf_find(const TfIdfPool *pool, size_t n, const Tensor *x, const uint8_t *xb,
                          size_t start, size_t step)
{
    size_t begin = (size_t)pool->counts->ints[n - 1];
    size_t end = n < pool->counts->n ? (size_t)pool->counts->ints[n] : pool->items;
    int64_t id = 0;
    for (size_t m = 1; m < n; m++) /* n-grams of smaller sizes come first */
        id += (int64_t)(((m < pool->counts->n ? (size_t)pool->counts->ints[m] : pool->items) -
                         (size_t)pool->counts->ints[m - 1]) / m);
    for (size_t p = begin; p + n <= end; p += n, id++) {
        size_t k = 0;
        while (k < n && tfidf_item_eq(pool, p + k, x, xb, start + k * step))
            k++;
        if (k == n)
            return id;
    }
    return -1;
}

/* Does an n-gram of size n appear twice from pool item begin to end?
 * onnxruntime refuses such a pool, onnx's reference counts the later one. */
static bool tfidf_repeats(const TfIdfPool *pool, size_t n, size_t begin, size_t end)
{
    for (size_t p = begin; p + n <= end; p += n)
        for (size_t q = p + n; q + n <= end; q += n) {
            size_t k = 0;
            while (k < n && (pool->strs ? str_eq(pool->strs->strings[p + k],
                                                 pool->strs->strings[q + k])
                                        : pool->ints->ints[p + k] == pool->ints->ints[q + k]))
                k++;
            if (k == n)
                return true;
        }
    return false;
}

static bool tfidf_pool_ok(const TfIdfPool *pool, int64_t width)
{
    if (!pool->counts || !pool->indexes || !pool->counts->n || (!pool->ints == !pool->strs))
        return false;
    int64_t prev = 0, grams = 0;
    for (size_t m = 0; m < pool->counts->n; m++) {
        int64_t at = pool->counts->ints[m], next = m + 1 < pool->counts->n
                                                       ? pool->counts->ints[m + 1]
                                                       : (int64_t)pool->items;
        if (at < prev || next < at || (next - at) % (int64_t)(m + 1) ||
            next > (int64_t)pool->items || tfidf_repeats(pool, m + 1, (size_t)at, (size_t)next))
            return false;
        grams += (next - at) / (int64_t)(m + 1);
        prev = at;
    }
    for (size_t j = 0; j < pool->indexes->n; j++)
        if (pool->indexes->ints[j] < 0 || pool->indexes->ints[j] >= width)
            return false;
    return grams == (int64_t)pool->indexes->n;
}

/* onnxruntime wants a weight per n-gram and weighs a column by the n-gram
 * that hit it, onnx's reference weighs column k by weights[k]: they agree
 * when n-gram k goes to column k. */
static bool tfidf_weights_ok(const Attr *w, const Attr *indexes)
{
    for (size_t j = 0; j < indexes->n; j++)
        if (indexes->ints[j] != (int64_t)j)
            return false;
    return w->n == indexes->n;
}

/* Counts the n-grams of row r (elements [r*cols, (r+1)*cols) of x) into f. */
static void tfidf_row(const EvalCtx *c, const TfIdfPool *pool, const Tensor *x,
                      const uint8_t *xb, size_t r, size_t cols, int64_t *f)
{
    int64_t lo = op_attr_int(c->op, "min_gram_length", 1);
    int64_t hi = op_attr_int(c->op, "max_gram_length", 1);
    int64_t skips = op_attr_int(c->op, "max_skip_count", 0);
    for (int64_t n = lo; n <= hi && n <= (int64_t)pool->counts->n; n++)
        for (int64_t s = 0; s <= (n == 1 ? 0 : skips); s++)
            for (size_t i = 0; i + (size_t)((n - 1) * (s + 1)) < cols; i++) {
                int64_t id = tfidf_find(pool, (size_t)n, x, xb, r * cols + i, (size_t)s + 1);
                if (id >= 0)
                    f[pool->indexes->ints[id]]++;
            }
}

static int eval_tfidf_vectorizer(EvalCtx *c)
{
    static const char *const modes[] = {"TF", "IDF", "TFIDF"};
    const Tensor *x = c->n_in ? c->in[0] : NULL;
    TfIdfPool pool = {op_attr(c->op, "pool_int64s"), op_attr(c->op, "pool_strings"),
                      op_attr(c->op, "ngram_counts"), op_attr(c->op, "ngram_indexes"), 0};
    const Attr *w = op_attr(c->op, "weights");
    int mode = eval_attr_choice(c->op, "mode", modes, 3);
    int64_t width = 0, lo = op_attr_int(c->op, "min_gram_length", 1);
    if (c->folding)
        return str_refuse_folding(c);
    bool typed = x && (pool.strs ? str_in(c, 0) != NULL
                                 : eval_in(c, 0) && (x->dtype == DT_INT32 || x->dtype == DT_INT64));
    pool.items = pool.ints ? pool.ints->n : pool.strs ? pool.strs->n : 0;
    for (size_t j = 0; pool.indexes && j < pool.indexes->n; j++)
        width = pool.indexes->ints[j] + 1 > width ? pool.indexes->ints[j] + 1 : width;
    if (!typed || (x->ndims != 1 && x->ndims != 2) || (x->ndims == 2 && x->dims[0] < 1) ||
        mode == 3 || lo < 1 || op_attr_int(c->op, "max_gram_length", 1) < lo ||
        op_attr_int(c->op, "max_skip_count", 0) < 0 || !tfidf_pool_ok(&pool, width) ||
        (w && !tfidf_weights_ok(w, pool.indexes)))
        return eval_decline(c, "an input, pool or attribute TfIdfVectorizer does not take");
    size_t rows = x->ndims == 2 ? (size_t)x->dims[0] : 1, cols = (size_t)x->dims[x->ndims - 1];
    int64_t dims[2] = {(int64_t)rows, width};
    Tensor *y = eval_out(c, 0, DT_FLOAT, x->ndims, dims + (x->ndims == 1));
    int64_t *f = y ? arena_array(c->arena, (size_t)width ? (size_t)width : 1, sizeof *f) : NULL;
    const uint8_t *xb = pool.strs ? NULL : eval_bytes(c, x);
    if (!y || !f || (!pool.strs && !xb))
        return !y ? eval_out_failed(c) : f ? EVAL_DECLINE : EVAL_OOM;
    for (size_t r = 0; r < rows; r++) {
        memset(f, 0, (size_t)width * sizeof *f);
        tfidf_row(c, &pool, x, xb, r, cols, f);
        for (int64_t k = 0; k < width; k++) {
            double wk = w ? (double)w->floats[k] : 1.0;
            double v = mode == 0 ? (double)f[k] : mode == 1 ? (f[k] > 0) * wk : (double)f[k] * wk;
            tensor_set_f64(y, r * (size_t)width + (size_t)k, (double)(float)v);
        }
    }
    return EVAL_OK;
}

static const OpKernel STRING_KERNELS[] = {
    {"", "StringNormalizer", 10, eval_string_normalizer},
    {"", "TfIdfVectorizer", 9, eval_tfidf_vectorizer},
    {"", "StringConcat", 20, eval_string_concat},
    {"", "StringSplit", 20, eval_string_split},
    {"", "RegexFullMatch", 20, eval_regex_full_match},
};

const OpKernelTable eval_string_kernels = {STRING_KERNELS,
                                           sizeof STRING_KERNELS / sizeof *STRING_KERNELS, true};
