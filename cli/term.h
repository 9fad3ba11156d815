/* term.h - what ppqfmt shows on a terminal's stderr: colour and a status line.
 *
 * Both exist only for a person watching: when stderr is a file or a pipe the
 * messages are plain text, one line each, and no status line is drawn. */
#ifndef PPQ_TERM_H
#define PPQ_TERM_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { TC_RESET, TC_BOLD, TC_WARN, TC_ERROR } TermColour;

/* The escape sequence for c, or "" when stderr gets no colour: it is not a
 * terminal, NO_COLOR is set to anything non-empty, or TERM is "dumb". */
const char *term_colour(TermColour c);

/* The status line: on only for a big model, stderr a terminal and neither -q
 * nor -v (which prints its own lines). Each show overwrites the last; clear
 * erases it and must come before any other message on stderr. */
void progress_start(size_t model_bytes, int verbosity);
void progress_show(const char *what, const char *name);
void progress_clear(void);

#endif
