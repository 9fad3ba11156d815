/* eval_linalg.c - kernels of Einsum and Det for the reference interpreter
 * (eval.h).
 *
 * Einsum: the general equation. Each input's term names its axes with
 * letters; "..." stands for the axes the letters leave, broadcast numpy-wise
 * across the inputs; a letter repeated within a term reads a diagonal.
 * Without "->" the output is the broadcast "..." axes, then the letters
 * named once in the whole equation, in alphabetical order. An output
 * element sums, over every value of the letters the output drops, the
 * product of the inputs' elements: floats in double, rounded once (as
 * MatMul), integers in int64 wrapped to the type.
 *
 * Det: the determinant of each trailing square matrix, by LU decomposition
 * with partial pivoting in double, rounded once. */
#include <math.h>
#include <string.h>

#include "eval.h"

/* Labels: letters a-z as 0..25, A-Z as 26..51, the "..." axes from 52 on. */
enum { EIN_LETTERS = 52, EIN_LABELS = EIN_LETTERS + EVAL_MAX_RANK };

typedef struct Einsum {
    size_t n_in;
    int n_ell; /* broadcast rank of "..." */
    int n_out, n_all; /* output labels, then the summed ones, in all[] */
    int all[EIN_LABELS];
    int64_t size[EIN_LABELS];
    int64_t stride[EVAL_MAX_IN][EIN_LABELS]; /* element stride of each label per input */
    int uses[EIN_LABELS];                    /* how many axes name each letter */
} Einsum;

static int ein_letter(char ch)
{
    return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 26 : -1;
}

/* One term's labels into lab[] (rank at most EVAL_MAX_RANK, "..." as -2);
 * its length, or -1 when malformed. */
static int ein_term(const char *s, size_t n, int *lab)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ')
            continue;
        if (k == EVAL_MAX_RANK)
            return -1;
        if (s[i] == '.') {
            if (i + 2 >= n || s[i + 1] != '.' || s[i + 2] != '.')
                return -1;
            lab[k++] = -2;
            i += 2;
        } else if ((lab[k++] = ein_letter(s[i])) < 0) {
            return -1;
        }
    }
    return k;
}

/* Binds a label to an axis of size d with element stride st: letters must
 * agree in size everywhere; "..." axes broadcast (size 1 reads stride 0). */
static int ein_bind(Einsum *e, size_t in, int label, int64_t d, int64_t st)
{
    if (label < EIN_LETTERS) {
        if (e->size[label] >= 0 && e->size[label] != d)
            return -1;
        e->size[label] = d;
        e->uses[label]++;
    } else if (d != 1) {
        if (e->size[label] > 1 && e->size[label] != d)
            return -1;
        e->size[label] = d;
    } else if (e->size[label] < 0) {
        e->size[label] = 1;
    }
    e->stride[in][label] += d == 1 ? 0 : st;
    return 0;
}

/* One input's term against its tensor t. */
static int ein_input(Einsum *e, size_t in, const int *lab, int k, const Tensor *t)
{
    int64_t strides[EVAL_MAX_RANK];
    int ell = (int)t->ndims - (k - 1), a = 0, seen = 0;
    for (int j = 0; j < k; j++)
        seen += lab[j] == -2;
    if (seen > 1 || (!seen && (int)t->ndims != k) || (seen && ell < 0))
        return -1;
    eval_strides(t->dims, t->ndims, strides);
    for (int j = 0; j < k; j++) {
        if (lab[j] != -2) {
            if (ein_bind(e, in, lab[j], t->dims[a], strides[a]))
                return -1;
            a++;
            continue;
        }
        if (ell > e->n_ell)
            e->n_ell = ell;
        for (int q = 0; q < ell; q++, a++)
            /* right-aligned: the last "..." axis is label 52 + EVAL_MAX_RANK - 1 */
            if (ein_bind(e, in, EIN_LABELS - ell + q, t->dims[a], strides[a]))
                return -1;
    }
    return 0;
}

static void ein_add_out(Einsum *e, int label, bool *in_out)
{
    e->all[e->n_out++] = label;
    in_out[label] = true;
}

/* The output labels (explicit after "->", else implicit), then the rest. */
static int ein_output(Einsum *e, const char *arrow, size_t n)
{
    bool in_out[EIN_LABELS] = {false};
    if (arrow) {
        int lab[EVAL_MAX_RANK], k = ein_term(arrow, n, lab), ell = 0;
        for (int j = 0; j < k; j++)
            ell += lab[j] == -2;
        /* "..." axes the output leaves out: numpy and onnxruntime part ways */
        if (k < 0 || ell > 1 || (e->n_ell && !ell))
            return -1;
        for (int j = 0; j < k; j++) {
            if (lab[j] == -2)
                for (int q = 0; q < e->n_ell; q++)
                    ein_add_out(e, EIN_LABELS - e->n_ell + q, in_out);
            else if (e->size[lab[j]] < 0 || in_out[lab[j]])
                return -1;
            else
                ein_add_out(e, lab[j], in_out);
        }
    } else {
        for (int q = 0; q < e->n_ell; q++)
            ein_add_out(e, EIN_LABELS - e->n_ell + q, in_out);
        for (int l = 0; l < EIN_LETTERS; l++)
            if (e->uses[l] == 1)
                ein_add_out(e, l, in_out);
    }
    e->n_all = e->n_out;
    for (int l = 0; l < EIN_LABELS; l++)
        if (e->size[l] >= 0 && !in_out[l])
            e->all[e->n_all++] = l;
    return e->n_out <= EVAL_MAX_RANK ? 0 : -1;
}

static int ein_parse(Einsum *e, const char *eq, size_t len, const Tensor *const *ins, size_t n_in)
{
    memset(e, 0, sizeof *e);
    e->n_in = n_in;
    for (int l = 0; l < EIN_LABELS; l++)
        e->size[l] = -1;
    const char *arrow = NULL, *end = eq + len, *p = eq;
    for (const char *q = eq; q + 1 < end; q++)
        if (q[0] == '-' && q[1] == '>')
            arrow = q;
    const char *terms_end = arrow ? arrow : end;
    for (size_t in = 0; in < e->n_in; in++) {
        const char *comma = memchr(p, ',', (size_t)(terms_end - p));
        const char *stop = in + 1 < e->n_in ? comma : terms_end;
        int lab[EVAL_MAX_RANK], k;
        if (!stop || (in + 1 == e->n_in && comma) ||
            (k = ein_term(p, (size_t)(stop - p), lab)) < 0 || ein_input(e, in, lab, k, ins[in]))
            return -1;
        p = stop + 1;
    }
    return ein_output(e, arrow ? arrow + 2 : NULL, arrow ? (size_t)(end - arrow - 2) : 0);
}

/* Steps the summed labels' indices (idx[n_out..n_all)) as an odometer,
 * the last fastest; false once they have all been visited. */
static bool ein_next(const Einsum *e, int64_t *idx)
{
    for (int j = e->n_all; j-- > e->n_out;) {
        if (++idx[j] < e->size[e->all[j]])
            return true;
        idx[j] = 0;
    }
    return false;
}

/* Output element by element; the summed labels by an odometer. */
static void ein_compute(const Einsum *e, const uint8_t *const *b, Tensor *y)
{
    int32_t dt = y->dtype;
    bool fl = dtype_is_float(dt);
    size_t size = dtype_size(dt), n = (size_t)tensor_numel(y);
    int64_t idx[EIN_LABELS] = {0};
    for (size_t o = 0; o < n; o++) {
        size_t rest = o;
        for (int j = e->n_out; j-- > 0;) {
            idx[j] = (int64_t)(rest % (size_t)e->size[e->all[j]]);
            rest /= (size_t)e->size[e->all[j]];
        }
        for (int j = e->n_out; j < e->n_all; j++)
            idx[j] = 0;
        double f = 0;
        uint64_t i = 0;
        bool more = true;
        while (more) {
            double pf = 1;
            uint64_t pi = 1;
            for (size_t in = 0; in < e->n_in; in++) {
                int64_t off = 0;
                for (int j = 0; j < e->n_all; j++)
                    off += idx[j] * e->stride[in][e->all[j]];
                EvalNum v = eval_load(dt, b[in] + (size_t)off * size);
                pf *= fl ? v.f : 1;
                pi *= fl ? 1 : (uint64_t)v.i;
            }
            f += pf;
            i += pi;
            more = ein_next(e, idx);
        }
        eval_store(dt, (uint8_t *)y->data + o * size,
                   fl ? (EvalNum){.f = f} : (EvalNum){.i = (int64_t)i});
    }
}

static int eval_einsum(EvalCtx *c)
{
    const Attr *eq = op_attr(c->op, "equation");
    const Tensor *ins[EVAL_MAX_IN];
    const uint8_t *b[EVAL_MAX_IN];
    Einsum e;
    if (!eq || !c->n_in || c->n_in > EVAL_MAX_IN)
        return eval_decline(c, "no equation, or too many inputs");
    for (size_t k = 0; k < c->n_in; k++)
        if (!(ins[k] = eval_in(c, k)) || ins[k]->dtype != ins[0]->dtype ||
            ins[k]->dtype == DT_BOOL || ins[k]->dtype == DT_UINT64 ||
            !(b[k] = eval_bytes(c, ins[k])))
            return c->why ? EVAL_DECLINE : eval_decline(c, "inputs of unsupported or mixed types");
    if (ein_parse(&e, (const char *)eq->s.ptr, eq->s.len, ins, c->n_in))
        return eval_decline(c, "an equation that does not fit the inputs");
    double macs = (double)c->n_in;
    int64_t dims[EVAL_MAX_RANK];
    for (int j = 0; j < e.n_all; j++)
        macs *= (double)e.size[e.all[j]];
    for (int j = 0; j < e.n_out; j++)
        dims[j] = e.size[e.all[j]];
    if (eval_over_macs(c, macs))
        return eval_decline(c, "too many multiply-adds for a fold");
    Tensor *y = eval_out(c, 0, ins[0]->dtype, (size_t)e.n_out, dims);
    if (!y)
        return eval_out_failed(c);
    ein_compute(&e, b, y);
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

/* The determinant of the m x m matrix a (overwritten). */
static double det_lu(double *a, int64_t m)
{
    double det = 1;
    for (int64_t k = 0; k < m; k++) {
        int64_t p = k;
        for (int64_t r = k + 1; r < m; r++)
            if (fabs(a[r * m + k]) > fabs(a[p * m + k]))
                p = r;
        if (a[p * m + k] == 0)
            return 0;
        if (p != k) {
            for (int64_t j = 0; j < m; j++) {
                double t = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        det *= a[k * m + k];
        for (int64_t r = k + 1; r < m; r++) {
            double f = a[r * m + k] / a[k * m + k];
            for (int64_t j = k + 1; j < m; j++)
                a[r * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

static int eval_det(EvalCtx *c)
{
    const Tensor *x = eval_in(c, 0);
    if (!x || !dtype_is_float(x->dtype) || x->ndims < 2 ||
        x->dims[x->ndims - 1] != x->dims[x->ndims - 2])
        return eval_decline(c, "an input that is not float square matrices");
    int64_t m = x->dims[x->ndims - 1];
    double *d = eval_doubles(c, x);
    Tensor *y = d ? eval_out(c, 0, x->dtype, x->ndims - 2, x->dims) : NULL;
    if (!y)
        return c->why ? EVAL_DECLINE : eval_out_failed(c);
    size_t size = dtype_size(x->dtype), n = (size_t)tensor_numel(y);
    for (size_t k = 0; k < n; k++)
        eval_store(x->dtype, (uint8_t *)y->data + k * size,
                   (EvalNum){.f = det_lu(d + (size_t)(k * m * m), m)});
    c->exact = EVAL_ROUNDS;
    return EVAL_OK;
}

static const OpKernel kernels[] = {
    {"", "Einsum", 12, eval_einsum},
    {"", "Det", 11, eval_det},
};

const OpKernelTable eval_linalg_kernels = {kernels, sizeof kernels / sizeof *kernels, true};
