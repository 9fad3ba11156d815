/* loader.h - the state the loader's files share while reading one model
 * (load.c, load_tensor.c, external.c), and their error helpers. */
#ifndef PPQ_LOADER_H
#define PPQ_LOADER_H

#include "../core/graph.h"
#include "wire.h"

typedef struct External External;
typedef struct LinkScope LinkScope;
typedef struct Loader {
    Model *m;
    Diag *d;
    int depth; /* subgraph nesting, bounded against hostile recursion */
    const char *dir;
    External *ext; /* mapped external data files, owned by the model */
    LinkScope *scope; /* the names visible to the graph being read (load.c) */
} Loader;

int loader_error(Loader *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int loader_oom(Loader *L);
/* An arena copy of a protobuf string; NULL (with an error) if it holds a NUL. */
const char *loader_str(Loader *L, Bytes b);
#endif
