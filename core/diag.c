/* diag.c - first-error-wins diagnostics. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

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
