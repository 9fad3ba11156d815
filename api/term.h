/* term.h - what ppqfmt shows on a terminal's stderr: colour and a status line.
 *
 * Both exist only for a person watching: when stderr is a file or a pipe the
 * messages are plain text, one line each, and no status line is drawn. */
#ifndef PPQ_TERM_H
#define PPQ_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { TC_RESET, TC_BOLD, TC_WARN, TC_ERROR } TermColour;

/* The escape sequence for c, or "" when stderr gets no colour: it is not a
 * terminal, NO_COLOR is set to anything non-empty, or TERM is "dumb". */
const char *term_colour(TermColour c);

/* The status line: on only for a big model, stderr a terminal and wanted
 * (not with -q, -v, which prints its own lines, or a JSON report). Each show
 * overwrites the last; clear erases it and must come before any other message
 * on stderr. */
void progress_start(size_t model_bytes, bool wanted);
void progress_show(const char *what, const char *name);
void progress_clear(void);

/* The length of the UTF-8 sequence at s (1 to 4) with its code point in *cp,
 * or 0 when s does not start a valid one (a stray, overlong or surrogate). */
size_t utf8_decode(const char *s, uint32_t *cp);

/* Names and strings from a model, safe to show on a terminal: control and
 * bidirectional characters and bytes that are not UTF-8 become visible escapes
 * (\x1b, \u202e), and text beyond max_cols columns is cut with "…". Writes at
 * most cap bytes (NUL included) to dst; returns the columns written. */
size_t term_safe(char *dst, size_t cap, const char *src, size_t max_cols);
/* term_safe to f, for a name (TERM_NAME_COLS) or a message (TERM_TEXT_COLS). */
enum { TERM_NAME_COLS = 80, TERM_TEXT_COLS = 1024 };
void term_put(FILE *f, const char *s, size_t max_cols);

#endif
