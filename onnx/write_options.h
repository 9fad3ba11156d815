/* write_options.h - what the command line asks of the writer (write.h,
 * external_write.h). */
#ifndef PPQ_WRITE_OPTIONS_H
#define PPQ_WRITE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct WriteOptions {
    const char *path;          /* "-": standard output (refused on a terminal) */
    const char *in_dir;        /* the input model's folder; NULL for standard input */
    const char *external_data; /* move initializers into this file; NULL: keep */
    size_t size_threshold;     /* ... those of at least this many bytes */
    bool page_align;           /* external tensors at 4 KiB offsets, not 64 bytes */
    bool link_external;        /* hard-link the input's data files instead of copying */
} WriteOptions;

#endif
