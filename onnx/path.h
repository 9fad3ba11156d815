/* path.h - file-name helpers for the writer and the command line. */
#ifndef PPQ_PATH_H
#define PPQ_PATH_H

#include <stddef.h>

/* The folder part of path ("." when there is none, "/" for the root). */
void path_folder(const char *path, char *dir, size_t size);

#endif
