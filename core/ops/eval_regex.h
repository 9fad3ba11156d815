/* eval_regex.h - RE2 patterns (RegexFullMatch's syntax) as POSIX extended
 * regular expressions, for the reference interpreter (eval_string.c). */
#ifndef PPQ_EVAL_REGEX_H
#define PPQ_EVAL_REGEX_H

#include <stdbool.h>
#include <stddef.h>

/* The POSIX ERE, anchored at both ends, that accepts exactly the ASCII
 * strings without a newline the RE2 pattern re[0..n) fully matches, into
 * out[0..cap); false when the pattern uses a construct without such a
 * translation (the caller declines). */
bool eval_regex_to_ere(const char *re, size_t n, char *out, size_t cap);

#endif
