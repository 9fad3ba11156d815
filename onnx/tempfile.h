/* tempfile.h - temporary files that an interrupted run must not leave behind.
 *
 * Every file ppqfmt writes goes first to a hidden temporary file in the
 * target's folder (DIR/.ppqfmt-XXXXXX), renamed over the target once complete.
 * The temporaries live in a registry that signal handlers can read without
 * locks or allocation: on SIGINT, SIGTERM or SIGHUP the handler removes them
 * and the process dies by that same signal, so its exit status still says
 * "killed by signal"; on SIGBUS because a mapped input file shrank under
 * ppqfmt (another program truncated it) it removes them, prints one line and
 * exits with status 2. Several temporaries may be registered at once (the
 * model and its external data files). */
#ifndef PPQ_TEMPFILE_H
#define PPQ_TEMPFILE_H

#include <signal.h>
#include <stddef.h>

/* Creates and opens DIR/.ppqfmt-XXXXXX (mode 0600), registered for removal;
 * its name goes to path. Returns the descriptor, or -1 with errno set. */
int tempfile_create(const char *dir, char *path, size_t size);
/* The temporary at path was renamed into place: no longer to be removed. */
void tempfile_done(const char *path);
/* Removes the temporary at path and forgets it. */
void tempfile_remove(const char *path);

/* Installs the handlers described above; input names the model in the
 * SIGBUS message ("-": standard input). Signals ignored when ppqfmt started
 * (nohup, background jobs) stay ignored. SIGXFSZ is ignored, so that a write
 * past the file size limit fails with EFBIG (exit 3) instead of killing the
 * process before it can remove its temporaries. */
void tempfile_install_handlers(const char *input);
/* Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (old: the previous
 * mask): a worker thread started meanwhile inherits the mask and leaves these
 * signals to the main thread. */
void tempfile_block_signals(sigset_t *old);
/* The message for a mapped input whose bytes disappeared. */
const char *tempfile_input_changed(void);

#endif
