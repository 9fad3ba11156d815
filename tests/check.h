/* check.h - the reporting both C test programs share: a test function
 * returns NULL when it passes or, through EXPECT/failf, why it failed. */
#ifndef PPQ_TESTS_CHECK_H
#define PPQ_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int n_passed, n_failed;
static char why[2048];

static const char *failf(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *failf(int line, const char *fmt, ...)
{
    int k = snprintf(why, sizeof why, "line %d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + k, sizeof why - (size_t)k, fmt, ap);
    va_end(ap);
    return why;
}

#define EXPECT(cond)                             \
    do {                                         \
        if (!(cond))                             \
            return failf(__LINE__, "%s", #cond); \
    } while (0)

#endif
