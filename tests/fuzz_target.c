/* fuzz_target.c - the whole ppqfmt pipeline on untrusted bytes.
 *
 * Built two ways:
 *   - with -DPPQ_LIBFUZZER and clang -fsanitize=fuzzer,... (scripts/fuzz.sh):
 *     a libFuzzer target; every property violation calls abort() so libFuzzer
 *     records the input as a crash;
 *   - without it (the Makefile's tests/%.c rule): a regression runner that
 *     replays files and folders given as arguments (default tests/regress)
 *     in a child process each, and prints "fuzz_target: N passed, M failed".
 *
 * The pipeline: load, verify the IR, every registered pass with the IR check
 * after each (pass_pipeline: rounds until nothing changes), encode to memory;
 * then load that output again and run the pipeline on it once more.
 * Properties checked:
 *   - the loader either accepts or refuses with PPQ_EINPUT and a message;
 *     PPQ_EINTERNAL is only acceptable as an honest out-of-memory report,
 *     which libFuzzer's malloc limit turns into a crash anyway;
 *   - a loaded graph passes graph_verify; a pass never fails with
 *     PPQ_EINTERNAL (that includes "IR check failed after pass ...");
 *   - the encoded output loads again (the writer never emits bytes the loader
 *     refuses) and formats again without an internal error;
 *   - external data is looked up in the folder PPQ_FUZZ_DIR names (refused
 *     when it is unset, as for a model read from standard input);
 *   - formatting the output again gives the same bytes (docs/ARCHITECTURE.md rule 5:
 *     idempotent): checked by the regression runner unless
 *     PPQ_FUZZ_IDEMPOTENT=0, and by the libFuzzer build when
 *     PPQ_FUZZ_IDEMPOTENT=1 (scripts/fuzz.sh: FUZZ_IDEMPOTENT=1). */
#include <dirent.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/ir/log.h"
#include "../formatter/pass.h"
#include "../onnx/load.h"
#include "../onnx/write.h"

/* Rounds of the whole pipeline, as api/run.c runs them. */

/* One violated property, described for the report. */
static char why[1200];
/* Compare the second formatting with the first (set from the environment). */
static bool check_idempotent;

static int bug(const char *stage, const Diag *d)
{
    snprintf(why, sizeof why, "%s: code %d: %s", stage, d->code, d->msg);
    return 1;
}

/* Loads, formats and encodes. Returns 0 when the input was handled (accepted
 * or refused properly), 1 on a property violation (why says which). On
 * success with out != NULL, *out and *out_len hold the encoding (malloc'd). */
static int pipeline(const uint8_t *data, size_t size, int round, uint8_t **out, size_t *out_len)
{
    Diag d = {0};
    Model *m = NULL;
    if (out)
        *out = NULL;
    if (onnx_load((Bytes){data, size}, getenv("PPQ_FUZZ_DIR"), &m, &d) != 0) {
        if (round > 0)
            return bug("the loader refuses the writer's output", &d);
        if (d.code != PPQ_EINPUT || !d.msg[0])
            return bug("load failed without an input error", &d);
        return 0;
    }
    if (graph_verify(m->graph, &d)) {
        model_free(m);
        return bug(round ? "IR check failed after re-load" : "IR check failed after load", &d);
    }
    const Pass *failed;
    int rc = 0;
    PipelineOptions po = {.verify = true};
    if (pass_pipeline(m, &po, &failed, &d) != 0) {
        if (d.code == PPQ_EINTERNAL || d.code == PPQ_EOUTPUT || d.code == PPQ_EUSAGE ||
            !d.msg[0])
            rc = bug(failed ? failed->name : "IR check before the passes", &d);
        else if (round > 0)
            rc = bug("a pass refuses the pipeline's own output", &d);
        /* else: an input a pass refuses with a message */
    }
    if (!rc && !d.code) {
        uint8_t *buf = NULL;
        size_t len = 0;
        if (onnx_write_mem(m, &buf, &len, &d) != 0)
            rc = bug("encoding failed", &d);
        else if (out) {
            *out = buf;
            *out_len = len;
        } else
            free(buf);
    }
    model_free(m);
    return rc;
}

static int check_one(const uint8_t *data, size_t size)
{
    uint8_t *out1 = NULL, *out2 = NULL;
    size_t len1 = 0, len2 = 0;
    why[0] = 0;
    if (pipeline(data, size, 0, &out1, &len1))
        return 1;
    if (!out1)
        return 0; /* refused: nothing more to check */
    int rc = pipeline(out1, len1, 1, &out2, &len2);
    if (!rc && out2) {
        if (check_idempotent && (len1 != len2 || memcmp(out1, out2, len1) != 0)) {
            snprintf(why, sizeof why,
                     "not idempotent: formatting the output again gives other bytes "
                     "(%zu vs %zu bytes)", len1, len2);
            rc = 1;
        }
    }
    free(out1);
    free(out2);
    return rc;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *env = getenv("PPQ_FUZZ_IDEMPOTENT");
    check_idempotent = env && *env == '1';
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (check_one(data, size)) {
        fprintf(stderr, "fuzz_target: %s\n", why);
        abort();
    }
    return 0;
}

#ifndef PPQ_LIBFUZZER
/* ---- regression runner ---- */

static int n_passed, n_failed;

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Runs one file in a child, so a crash or hang is one failure, not the end. */
static void replay(const char *path)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        size_t len;
        uint8_t *data = read_file(path, &len);
        if (!data) {
            printf("FAIL %s: cannot read\n", path);
            fflush(stdout);
            _exit(10);
        }
        int rc = check_one(data, len);
        if (rc)
            printf("FAIL %s: %s\n", path, why);
        fflush(stdout);
        free(data);
        _exit(rc ? 10 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) {
        printf("FAIL %s: cannot run a child\n", path);
        n_failed++;
        return;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        printf("ok %s\n", path);
        n_passed++;
    } else {
        if (WIFSIGNALED(st))
            printf("FAIL %s: killed by signal %d%s\n", path, WTERMSIG(st),
                   WTERMSIG(st) == SIGALRM ? " (hang)" : "");
        else if (WEXITSTATUS(st) != 10) /* 10: the child said why */
            printf("FAIL %s: exit %d\n", path, WEXITSTATUS(st));
        n_failed++;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("FAIL %s: no such file\n", path);
        n_failed++;
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        replay(path);
        return;
    }
    DIR *dir = opendir(path);
    if (!dir)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md") || strstr(e->d_name, ".txt"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                break;
            names = nn;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len)))
            break;
        snprintf(names[n++], len, "%s/%s", path, e->d_name);
    }
    closedir(dir);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        replay(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *env = getenv("PPQ_FUZZ_IDEMPOTENT");
    check_idempotent = !env || *env != '0'; /* on unless PPQ_FUZZ_IDEMPOTENT=0 */
    if (argc < 2)
        replay_path("tests/regress");
    for (int i = 1; i < argc; i++)
        replay_path(argv[i]);
    printf("fuzz_target: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
#endif
