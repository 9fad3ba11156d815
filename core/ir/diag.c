/* diag.c - first-error-wins diagnostics, and the edit distance their
 * "did you mean" suggestions use. */
#include "diag.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int diag_set(Diag *d, int code, const char *fmt, ...)
{
    if (d && !d->code) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
        d->code = code;
    }
    return code;
}

/* One row of the Levenshtein table at a time. */
size_t diag_edit_distance(const char *a, const char *b)
{
    enum { LONGEST = 64 };
    size_t la = strlen(a), lb = strlen(b), row[LONGEST + 1];
    if (la > LONGEST || lb > LONGEST)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost < up + 1 ? diag + cost : up + 1;
            row[j] = best < row[j - 1] + 1 ? best : row[j - 1] + 1;
            diag = up;
        }
    }
    return row[lb];
}
