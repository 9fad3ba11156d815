/* loader.c - the loader's error helpers. */
#include "loader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int loader_error(Loader *L, const char *fmt, ...)
{
    char buf[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    diag_set(L->d, PPQ_EINPUT, "%s", buf);
    return -1;
}

int loader_oom(Loader *L)
{
    diag_set(L->d, PPQ_EINTERNAL, "out of memory while loading the model");
    return -1;
}

const char *loader_str(Loader *L, Bytes b)
{
    if (memchr(b.ptr, 0, b.len)) {
        loader_error(L, "a name contains a NUL byte");
        return NULL;
    }
    const char *s = arena_strndup(&L->m->arena, (const char *)b.ptr, b.len);
    if (!s)
        loader_oom(L);
    return s;
}

const char *loader_intern(Loader *L, Bytes b)
{
    char buf[256];
    if (b.len >= sizeof buf)
        return loader_str(L, b);
    if (memchr(b.ptr, 0, b.len)) {
        loader_error(L, "a name contains a NUL byte");
        return NULL;
    }
    memcpy(buf, b.ptr, b.len);
    buf[b.len] = 0;
    const char *s = model_intern(L->m, buf);
    if (!s)
        loader_oom(L);
    return s;
}
