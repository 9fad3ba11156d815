/* diag.h - error codes and the one-line message that goes with them.
 *
 * Functions that can fail return a non-zero code and fill a Diag; main()
 * prints the message once and exits with the code. The codes are the
 * documented exit codes of ppqfmt. */
#ifndef PPQ_DIAG_H
#define PPQ_DIAG_H

#include <stddef.h>

enum {
    PPQ_OK = 0,
    PPQ_EUSAGE = 1,    /* bad command line */
    PPQ_EINPUT = 2,    /* unreadable or invalid model */
    PPQ_EOUTPUT = 3,   /* output cannot be written */
    PPQ_EINTERNAL = 4, /* out of memory or a pass failed */
    PPQ_EMISMATCH = 5, /* --check: an output of the formatted model differs */
    PPQ_ECHECK = 6,    /* --check: a node could not be run (no kernel) */
};

typedef struct Diag {
    int code;
    char msg[1024];
} Diag;

/* Records the first error only (later ones are consequences); returns code. */
int diag_set(Diag *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Edit distance between a and b, ignoring case, for a message suggesting
 * the nearest name ("did you mean"); SIZE_MAX past 64 characters. */
size_t diag_edit_distance(const char *a, const char *b);

#endif
