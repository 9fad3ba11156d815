/* term.c - colour and the progress status line on stderr. */
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Models this big take seconds to load and write; smaller ones finish before
 * a status line could be read. */
#define PROGRESS_MIN_BYTES ((size_t)1 << 30)

static bool colour_on(void)
{
    static int on = -1; /* -1: not decided yet */
    if (on < 0) {
        const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
        on = isatty(STDERR_FILENO) && !(no && *no) && !(term && strcmp(term, "dumb") == 0);
    }
    return on;
}

const char *term_colour(TermColour c)
{
    static const char *const seq[] = {
        [TC_RESET] = "\033[0m", [TC_BOLD] = "\033[1m",
        [TC_WARN] = "\033[1;35m", [TC_ERROR] = "\033[1;31m",
    };
    return colour_on() ? seq[c] : "";
}

static bool progress_on;
static int progress_width; /* length of the line now shown, to blank it */

void progress_start(size_t model_bytes, int verbosity)
{
    progress_on = model_bytes > PROGRESS_MIN_BYTES && verbosity == 0 && isatty(STDERR_FILENO);
}

void progress_show(const char *what, const char *name)
{
    if (!progress_on)
        return;
    int w = fprintf(stderr, "\rppqfmt: %s%s%s...", what, name ? " " : "", name ? name : "");
    int len = w > 0 ? w - 1 : 0; /* without the '\r' */
    if (len < progress_width)
        fprintf(stderr, "%*s", progress_width - len, ""); /* blank the longer last line */
    else
        progress_width = len;
    fflush(stderr);
}

void progress_clear(void)
{
    if (!progress_on || !progress_width)
        return;
    fprintf(stderr, "\r%*s\r", progress_width, "");
    fflush(stderr);
    progress_width = 0;
}
