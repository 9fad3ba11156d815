/* dim.h - symbolic tensor dimensions for shape inference.
 *
 * A dimension is an integer known exactly (3), a named symbol from the model
 * (`batch`, `seq`), or an expression of them (`seq+1`, `2*seq`, `seq/2`,
 * `batch*seq`). Expressions are kept in one canonical form - a sum of terms,
 * each an integer coefficient times a sorted product of symbols, over an
 * exact positive divisor - and interned in a DimTable, so two equal dims are
 * the same handle: compare them with ==.
 *
 * The divisor is exact by construction: it only comes from a division the
 * model guarantees (a Split into equal parts, a Reshape's -1) or one proven
 * exact. Whatever the form cannot hold (a floor division that may round, a
 * product too large to keep) becomes a fresh symbol with a readable name
 * (`unk_<origin>_<i>`), never a wrong value. */
#ifndef PPQ_DIM_H
#define PPQ_DIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct DimExpr DimExpr;
typedef const DimExpr *Dim;
typedef struct DimTable DimTable;

DimTable *dim_table_new(void);
void dim_table_free(DimTable *t);
/* Names the place fresh symbols come from (a node), until the next call:
 * they are called unk_<origin>_0, unk_<origin>_1, ... (made unique). */
void dim_table_set_origin(DimTable *t, const char *origin);
/* Whether the table ran out of memory at some point: every result since
 * then may be a stand-in constant 0 and must not be trusted. */
bool dim_table_oom(const DimTable *t);

Dim dim_const(DimTable *t, int64_t v);
/* The symbol called name (the same handle for the same name). */
Dim dim_sym(DimTable *t, const char *name);
/* A symbol distinct from every other, named after the current origin:
 * unk_<origin>_<i>, unique among fresh symbols but not against the model's
 * names, so that the same node gives the same name on every run (a
 * declaration an earlier run wrote may hold it: dim_sym(name) still means
 * that declared symbol, not this one). */
Dim dim_fresh(DimTable *t);

bool dim_is_const(Dim d);
/* The value of a constant dim (0 for a symbolic one: check dim_is_const). */
int64_t dim_value(Dim d);
/* Whether d involves a symbol made by dim_fresh (a size inference could
 * not tell, such as unk_conv_0+1). */
bool dim_has_fresh(const DimTable *t, Dim d);
/* A single symbol with coefficient 1 and no divisor: its name, else NULL. */
const char *dim_sym_name(const DimTable *t, Dim d);

/* Whether d >= 0 follows from every symbol being >= 0 (no negative
 * coefficient): true for sizes built from sizes, e.g. seq+1 or batch*seq. */
bool dim_nonneg(Dim d);

Dim dim_add(DimTable *t, Dim a, Dim b);
Dim dim_sub(DimTable *t, Dim a, Dim b);
Dim dim_mul(DimTable *t, Dim a, Dim b);
/* a / c where the model guarantees the division is exact (c != 0). */
Dim dim_div_exact(DimTable *t, Dim a, int64_t c);
/* a / b for dims where the model guarantees exactness (Reshape's -1): exact
 * when b is a constant or a monomial dividing every term of a, else fresh. */
Dim dim_div_exact_dim(DimTable *t, Dim a, Dim b);
/* floor(a / c) and ceil(a / c) for c > 0: exact when provable, else fresh. */
Dim dim_floordiv(DimTable *t, Dim a, int64_t c);
Dim dim_ceildiv(DimTable *t, Dim a, int64_t c);

/* Writes a readable form ("2*seq+1", "(seq+1)/2", "batch*seq") into buf;
 * returns buf. Symbol names that are not identifiers are written with every
 * other character as '_' so that the text parses as an expression. */
char *dim_str(const DimTable *t, Dim d, char *buf, size_t size);

/* The dim that dim_str printed as s ("2*seq+1", "(seq+1)/2", "batch"),
 * or NULL when s is not in that form or names no expression (a plain name
 * such as "batch size" is a symbol: use dim_sym). Lets a declared dim_param
 * that an earlier run wrote mean the same expression again. */
Dim dim_parse(DimTable *t, const char *s);

#endif
