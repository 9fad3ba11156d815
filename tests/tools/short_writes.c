/* short_writes.c - an LD_PRELOAD shim for tests/test_cli.py: every writev
 * moves only part of its buffers (in order), as a write to a pipe or a
 * device may, so the writer's resumption after a short write, in the middle
 * of a segment (a computed one included), runs on nearly every call. The
 * lengths come from a fixed pseudo-random sequence between 1 and MAX_CUT
 * bytes: a call may end inside its first segment or after several, so a cut
 * falls inside segments wherever they sit in the call. Built without the
 * sanitizers: it is preloaded into the ordinary build only. */
#include <dlfcn.h>
#include <errno.h>
#include <sys/uio.h>

enum { MAX_CUT = 700, MAX_IOV = 256 };

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real)
        real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    static unsigned seed = 12345;
    seed = seed * 1103515245u + 12345u;
    struct iovec cut[MAX_IOV];
    size_t left = 1 + (seed >> 16) % MAX_CUT;
    int m = 0;
    for (int k = 0; k < n && m < MAX_IOV && left; k++) {
        size_t len = iov[k].iov_len < left ? iov[k].iov_len : left;
        cut[m].iov_base = iov[k].iov_base;
        cut[m++].iov_len = len;
        left -= len;
    }
    return real(fd, cut, m);
}
