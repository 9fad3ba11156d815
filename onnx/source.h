/* source.h - the bytes of an input model: a read-only mapping of the file.
 * Standard input, pipes, devices and files that report size 0 (/proc) are
 * first copied into an unlinked temporary file in $TMPDIR (default /tmp),
 * which is mapped the same way; a stream whose first KiB cannot start a
 * model is refused without reading the rest. Tensors of the loaded model
 * point into these bytes, so the source stays open until the output is
 * written. */
#ifndef PPQ_SOURCE_H
#define PPQ_SOURCE_H

#include <stdbool.h>
#include <sys/types.h>

#include "../core/ir/diag.h"
#include "../core/ir/tensor.h"

typedef struct Source {
    Bytes bytes;
    bool mapped;
    int fd;           /* the open file behind the mapping (maybe the temporary), or -1 */
    const char *path; /* "-" for standard input */
    dev_t dev;        /* identity of the input file, to refuse -o INPUT */
    ino_t ino;
    bool is_file;
} Source;

int source_open(Source *s, const char *path, Diag *d);
void source_close(Source *s);

#endif
