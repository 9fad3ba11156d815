/* tempfile.c - the registry of temporary files and the signal handlers that
 * remove them (see tempfile.h).
 *
 * Several threads may add and drop entries at once (the library formats
 * models on as many threads as its user likes): an entry is claimed by an
 * atomic compare-and-swap of its state from FREE to CLAIMED, its path written,
 * and only then is it made LIVE; only the thread that made an entry drops
 * it. A handler may run at any moment, and reads only LIVE entries. Blocks
 * of entries are chained (again by compare-and-swap) and never freed, so a
 * handler never follows a dangling pointer.
 *
 * Helgrind does not see the order C11 atomics give: an entry's path written
 * by one thread after another dropped it looks like a race to it. The
 * annotations (no-ops outside valgrind) tell it the drop happens before the
 * next claim. */
#include "tempfile.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif
#ifndef ANNOTATE_HAPPENS_BEFORE
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)(obj))
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)(obj))
#endif

enum { TEMP_SLOTS = 8 };
enum { TEMP_FREE, TEMP_CLAIMED, TEMP_LIVE }; /* an entry's state */

/* Lock-free atomics only: a signal handler reads them. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "tempfile: int atomics must be lock-free");

typedef struct TempBlock {
    char path[TEMP_SLOTS][PATH_MAX];
    atomic_int used[TEMP_SLOTS];
    atomic_int owner[TEMP_SLOTS]; /* the temp_thread_id of the thread that made it */
    struct TempBlock *_Atomic next;
} TempBlock;

/* A number per thread, 1 and up: a thread reads the path only of its own
 * entries, which no other thread writes (another's may be rewritten as soon
 * as its owner drops it). */
static atomic_int temp_threads;
static _Thread_local int temp_thread_id;

static int temp_self(void)
{
    if (!temp_thread_id)
        temp_thread_id = atomic_fetch_add(&temp_threads, 1) + 1;
    return temp_thread_id;
}

static TempBlock temp_first;
static char temp_bus_msg[PATH_MAX + 128];
static size_t temp_bus_len;

static const char TEMP_CHANGED[] =
    "input changed while reading (a file the model is read from was truncated)";

const char *tempfile_input_changed(void) { return TEMP_CHANGED; }

/* The block after b, chaining a new one if there is none; NULL when out of
 * memory. Of two threads chaining at once, the loser frees its block. */
static TempBlock *temp_next_block(TempBlock *b)
{
    TempBlock *next = atomic_load(&b->next);
    if (next)
        return next;
    TempBlock *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    if (atomic_compare_exchange_strong(&b->next, &next, fresh))
        return fresh;
    free(fresh); /* next is now the block the other thread chained */
    return next;
}

/* A free entry, claimed (CLAIMED) for the caller; NULL when out of memory. */
static TempBlock *temp_free_slot(int *slot)
{
    for (TempBlock *b = &temp_first; b; b = temp_next_block(b))
        for (int i = 0; i < TEMP_SLOTS; i++) {
            int expected = TEMP_FREE;
            if (atomic_load(&b->used[i]) == TEMP_FREE &&
                atomic_compare_exchange_strong(&b->used[i], &expected, TEMP_CLAIMED)) {
                ANNOTATE_HAPPENS_AFTER(&b->used[i]);
                *slot = i;
                return b;
            }
        }
    return NULL;
}

/* The entry free again, for any thread to claim. */
static void temp_drop(TempBlock *b, int slot)
{
    ANNOTATE_HAPPENS_BEFORE(&b->used[slot]);
    atomic_store(&b->used[slot], TEMP_FREE);
}

int tempfile_create(const char *dir, char *path, size_t size)
{
    int slot;
    TempBlock *b = temp_free_slot(&slot);
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    if (snprintf(path, size, "%s/.ppqfmt-XXXXXX", dir) >= (int)size ||
        strlen(path) >= sizeof b->path[slot]) {
        temp_drop(b, slot);
        errno = ENAMETOOLONG;
        return -1;
    }
    /* A signal between creating the file and registering it would leave
     * it: it waits until the file is registered. */
    sigset_t old;
    tempfile_block_signals(&old);
    int fd = mkstemp(path);
    if (fd >= 0) {
        strcpy(b->path[slot], path);
        atomic_store(&b->owner[slot], temp_self());
    }
    /* seq_cst: the path is written before the entry is LIVE, for handlers too */
    if (fd >= 0)
        atomic_store(&b->used[slot], TEMP_LIVE);
    else
        temp_drop(b, slot);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return fd;
}

void tempfile_done(const char *path)
{
    int self = temp_self();
    for (TempBlock *b = &temp_first; b; b = atomic_load(&b->next))
        for (int i = 0; i < TEMP_SLOTS; i++)
            if (atomic_load(&b->used[i]) == TEMP_LIVE && atomic_load(&b->owner[i]) == self &&
                strcmp(b->path[i], path) == 0)
                temp_drop(b, i);
}

void tempfile_remove(const char *path)
{
    unlink(path);
    tempfile_done(path);
}

/* Async-signal-safe: unlink only. */
static void temp_unlink_all(void)
{
    for (TempBlock *b = &temp_first; b; b = atomic_load(&b->next))
        for (int i = 0; i < TEMP_SLOTS; i++)
            if (atomic_load(&b->used[i]) == TEMP_LIVE)
                unlink(b->path[i]);
}

static void temp_on_terminate(int sig)
{
    temp_unlink_all();
    signal(sig, SIG_DFL);
    raise(sig); /* pending until this handler returns, then fatal */
}

/* BUS_ADRERR: a page of a file mapping past the file's end, which here can
 * only be an input file (or its external data) truncated while mapped.
 * Another SIGBUS is a real fault: die by it, as without the handler. */
static void temp_on_bus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    temp_unlink_all();
    if (si->si_code == BUS_ADRERR) {
        ssize_t w = write(STDERR_FILENO, temp_bus_msg, temp_bus_len);
        (void)w;
        _exit(2);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void temp_termination_set(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGINT);
    sigaddset(s, SIGTERM);
    sigaddset(s, SIGHUP);
}

void tempfile_block_signals(sigset_t *old)
{
    sigset_t s;
    temp_termination_set(&s);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

void tempfile_install_handlers(const char *input)
{
    static const int terminating[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    int n = snprintf(temp_bus_msg, sizeof temp_bus_msg, "ppqfmt: %s: %s\n",
                     strcmp(input, "-") ? input : "standard input", TEMP_CHANGED);
    temp_bus_len = n < 0                              ? 0
                   : (size_t)n < sizeof temp_bus_msg ? (size_t)n
                                                     : sizeof temp_bus_msg - 1;
    memset(&sa, 0, sizeof sa);
    temp_termination_set(&sa.sa_mask); /* one handler at a time */
    sigaddset(&sa.sa_mask, SIGBUS);
    sa.sa_handler = temp_on_terminate;
    for (size_t i = 0; i < sizeof terminating / sizeof *terminating; i++)
        if (sigaction(terminating[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(terminating[i], &sa, NULL);
    sa.sa_handler = NULL;
    sa.sa_sigaction = temp_on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
    signal(SIGXFSZ, SIG_IGN);
}
