/* term.c - colour, the progress status line on stderr, and model text made
 * safe for a terminal (a name can hold escape sequences or megabytes). */
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
    /* -1: not decided yet; atomic: threads formatting at once may decide it together */
    static _Atomic int on = -1;
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

/* Per thread: a library user may format models on several threads at once, and
 * the status line is only ever drawn by the thread that started it. */
static _Thread_local bool progress_on;
static _Thread_local int progress_width; /* length of the line now shown, to blank it */

void progress_start(size_t model_bytes, bool wanted)
{
    progress_on = model_bytes > PROGRESS_MIN_BYTES && wanted && isatty(STDERR_FILENO);
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

size_t utf8_decode(const char *s, uint32_t *cp)
{
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000}; /* no overlong forms */
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    size_t n = u[0] >= 0xf0 ? 4 : u[0] >= 0xe0 ? 3 : u[0] >= 0xc0 ? 2 : 0;
    if (!n || u[0] > 0xf4)
        return 0;
    uint32_t c = u[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        c = c << 6 | (u[i] & 0x3f);
    }
    if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* C0 and C1 controls and DEL (a terminal obeys them), and the bidirectional
 * marks that reorder the text after them on screen. */
static bool term_escaped(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x061c || c == 0x200e || c == 0x200f ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

size_t term_safe(char *dst, size_t cap, const char *src, size_t max_cols)
{
    static const char cut[] = "\u2026"; /* "…", one column */
    size_t len = 0, cols = 0;
    for (const char *p = src; *p;) {
        uint32_t c;
        char esc[8];
        size_t n = utf8_decode(p, &c), w = 1, bytes = n;
        const char *piece = p;
        if (!n || term_escaped(c)) {
            w = bytes = (size_t)snprintf(esc, sizeof esc, !n || c < 0x80 ? "\\x%02x" : "\\u%04x",
                                         !n ? (unsigned char)*p : (unsigned)c);
            piece = esc;
            n = n ? n : 1;
        }
        size_t room = p[n] ? max_cols - (max_cols > 0) : max_cols; /* keep a column for "…" */
        if (cols + w > room || len + bytes + sizeof cut > cap) {
            if (len + sizeof cut <= cap && cols < max_cols) {
                memcpy(dst + len, cut, sizeof cut - 1);
                len += sizeof cut - 1;
                cols++;
            }
            break;
        }
        memcpy(dst + len, piece, bytes);
        len += bytes;
        cols += w;
        p += n;
    }
    if (cap)
        dst[len] = '\0';
    return cols;
}

void term_put(FILE *f, const char *s, size_t max_cols)
{
    char buf[4 * TERM_TEXT_COLS + 8]; /* a column takes at most 4 bytes */
    term_safe(buf, sizeof buf, s ? s : "", max_cols < TERM_TEXT_COLS ? max_cols : TERM_TEXT_COLS);
    fputs(buf, f);
}
