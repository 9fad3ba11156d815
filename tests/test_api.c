/* test_api.c - libppqfmt's public API (api/ppqfmt.h), linked against the
 * shared library as a user would: options by name and their errors, a file
 * and a buffer formatted to the same bytes the command line writes ($PPQFMT,
 * default build/ppqfmt), error codes equal to the exit codes, the JSON
 * report, and two models formatted on two threads at once giving the bytes
 * they give one after the other.
 * The last line is "test_api: N passed, M failed"; exit status 1 on failure. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ppqfmt.h"

static int n_passed, n_failed;

static void check(int ok, const char *what)
{
    if (ok) {
        n_passed++;
        printf("ok %s\n", what);
    } else {
        n_failed++;
        printf("FAIL %s\n", what);
    }
}

/* The whole file at path, malloc'd, or NULL. */
static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            unsigned char *grown = realloc(buf, cap = cap * 2 + 65536);
            if (!grown)
                break;
            buf = grown;
        }
        size_t got = fread(buf + *len, 1, cap - *len, f);
        if (!got)
            break;
        *len += got;
    }
    fclose(f);
    return buf;
}

static int same_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
    return a && b && alen == blen && memcmp(a, b, alen) == 0;
}

/* What `ppqfmt ARGS IN -o OUT` writes, read back; NULL if it failed. */
static unsigned char *cli_output(const char *args, const char *in, const char *out, size_t *len)
{
    const char *cli = getenv("PPQFMT") ? getenv("PPQFMT") : "build/ppqfmt";
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s -q %s %s -o %s", cli, args, in, out);
    return system(cmd) == 0 ? read_all(out, len) : NULL;
}

static void test_options(void)
{
    ppqfmt_options *o = ppqfmt_options_new();
    check(strlen(ppqfmt_version()) > 0, "version is given");
    check(ppqfmt_options_set(o, "target-opset", "17") == PPQFMT_OK, "target-opset=17 is taken");
    check(ppqfmt_options_set(o, "disable", "fuse-gelu") == PPQFMT_OK, "disable=fuse-gelu");
    check(ppqfmt_options_set(o, "no-fuse_bn", NULL) == PPQFMT_OK, "no-P with '_' for '-'");
    check(ppqfmt_options_set(o, "input-shape", "x=1,3,224,224") == PPQFMT_OK, "input-shape");
    check(ppqfmt_options_set(o, "target-opset", "99") == PPQFMT_EUSAGE &&
              strstr(ppqfmt_last_error(o), "--target-opset=99"),
          "target-opset=99: usage error naming the option");
    check(ppqfmt_options_set(o, "no-such-option", "1") == PPQFMT_EUSAGE &&
              strstr(ppqfmt_last_error(o), "unknown option '--no-such-option'"),
          "an unknown option: usage error");
    check(ppqfmt_options_set(o, "disable", "fuse-bm") == PPQFMT_EUSAGE &&
              strstr(ppqfmt_last_error(o), "did you mean 'fuse-bn'"),
          "a misspelt pass: the nearest name suggested");
    check(ppqfmt_options_set(o, "fold-limit", NULL) == PPQFMT_EUSAGE, "a value missing");
    check(ppqfmt_options_set(o, "print", "yes") == PPQFMT_EUSAGE, "a needless value");
    check(ppqfmt_options_set(o, "help", NULL) == PPQFMT_EUSAGE, "help is the command line's");
    check(ppqfmt_options_set(o, "report", NULL) == PPQFMT_OK && !*ppqfmt_last_error(o),
          "a good option clears the last error");
    ppqfmt_options_free(o);
    ppqfmt_options_free(NULL);
}

/* The sample formatted by path and from memory: the command line's bytes. */
static void test_same_as_cli(const char *dir)
{
    char out[4096], ref[4096];
    size_t ref_len = 0, out_len = 0, in_len = 0;
    snprintf(out, sizeof out, "%s/api.onnx", dir);
    snprintf(ref, sizeof ref, "%s/cli.onnx", dir);
    unsigned char *want = cli_output("--target-opset=13", "testdata/sample.onnx", ref, &ref_len);
    ppqfmt_options *o = ppqfmt_options_new();
    ppqfmt_options_set(o, "target-opset", "13");
    int rc = ppqfmt_format_file(o, "testdata/sample.onnx", out);
    unsigned char *got = read_all(out, &out_len);
    check(rc == 0 && same_bytes(got, out_len, want, ref_len), "format_file: the CLI's bytes");
    const char *report = ppqfmt_report_json(o);
    check(report[0] == '{' && strstr(report, "\"passes\""), "the JSON report is kept");
    unsigned char *in = read_all("testdata/sample.onnx", &in_len);
    void *mem = NULL;
    size_t mem_len = 0;
    rc = ppqfmt_format_buffer(o, in, in_len, &mem, &mem_len);
    check(rc == 0 && same_bytes(mem, mem_len, want, ref_len), "format_buffer: the CLI's bytes");
    ppqfmt_free(mem);
    free(in);
    free(got);
    free(want);
    ppqfmt_options_free(o);
}

static void test_errors(const char *dir)
{
    char out[4096];
    ppqfmt_options *o = ppqfmt_options_new();
    void *mem = (void *)1;
    size_t len = 1;
    int rc = ppqfmt_format_buffer(o, "not a model", 11, &mem, &len);
    check(rc == PPQFMT_EINPUT && !mem && !len && strstr(ppqfmt_last_error(o), "model bytes: "),
          "bad bytes: input error (2), no buffer, the message says where");
    check(ppqfmt_format_file(o, "testdata/no-such.onnx", NULL) == PPQFMT_EINPUT,
          "a missing input file: input error (2)");
    snprintf(out, sizeof out, "%s/no-such-dir/out.onnx", dir);
    check(ppqfmt_format_file(o, "testdata/sample.onnx", out) == PPQFMT_EOUTPUT &&
              access(out, F_OK) != 0,
          "an unwritable output: output error (3), nothing written");
    check(ppqfmt_format_file(o, "testdata/sample.onnx", "testdata/sample.onnx") ==
              PPQFMT_EUSAGE, "output = input refused, as the command line does (1)");
    ppqfmt_options_set(o, "passes", "dedup-initializers,split-params");
    check(ppqfmt_format_file(o, "testdata/sample.onnx", NULL) == PPQFMT_EUSAGE,
          "options that contradict: usage error (1) at format time");
    ppqfmt_options_free(o);
}

/* A "check" verdict keeps the output and the report, as the command line
 * keeps the file (check-break is the test-only switch that makes one). */
static void test_check_verdict(void)
{
    size_t in_len = 0, mem_len = 0;
    void *mem = NULL;
    unsigned char *in = read_all("testdata/sample.onnx", &in_len);
    ppqfmt_options *o = ppqfmt_options_new();
    ppqfmt_options_set(o, "check", "1");
    int rc = ppqfmt_format_buffer(o, in, in_len, &mem, &mem_len);
    check(rc == PPQFMT_OK && strstr(ppqfmt_report_json(o), "\"verdict\": \"equal\""),
          "check: equal, in the report");
    ppqfmt_free(mem);
    ppqfmt_options_set(o, "check-break", NULL);
    rc = ppqfmt_format_buffer(o, in, in_len, &mem, &mem_len);
    check(rc == PPQFMT_EMISMATCH && mem && mem_len &&
              strstr(ppqfmt_report_json(o), "\"verdict\": \"differs\"") &&
              strstr(ppqfmt_last_error(o), "differs"),
          "check mismatch (5): the output and the report are kept");
    ppqfmt_free(mem);
    free(in);
    ppqfmt_options_free(o);
}

typedef struct Job {
    const char *path;
    void *out;
    size_t len;
    int rc;
} Job;

/* Formats job->path from memory with fold and shape inference at work. */
static void *format_job(void *arg)
{
    Job *job = arg;
    size_t in_len;
    unsigned char *in = read_all(job->path, &in_len);
    ppqfmt_options *o = ppqfmt_options_new();
    job->rc = !in || !o ? -1 : ppqfmt_format_buffer(o, in, in_len, &job->out, &job->len);
    ppqfmt_options_free(o);
    free(in);
    return NULL;
}

static void test_threads(void)
{
    const char *paths[2] = {"testdata/sample.onnx", "testdata/fold/conv.onnx"};
    Job seq[2] = {{.path = paths[0]}, {.path = paths[1]}};
    for (int i = 0; i < 2; i++)
        format_job(&seq[i]);
    int same = seq[0].rc == 0 && seq[1].rc == 0;
    for (int round = 0; round < 20 && same; round++) {
        Job par[2] = {{.path = paths[0]}, {.path = paths[1]}};
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, format_job, &par[i]);
        for (int i = 0; i < 2; i++) {
            pthread_join(t[i], NULL);
            same &= par[i].rc == 0 && same_bytes(par[i].out, par[i].len, seq[i].out, seq[i].len);
            ppqfmt_free(par[i].out);
        }
    }
    check(same, "two models on two threads at once (20 rounds): the sequential bytes");
    for (int i = 0; i < 2; i++)
        ppqfmt_free(seq[i].out);
}

/* Files written on two threads at once (the temporary-file registry). */
static void *write_job(void *arg)
{
    const char *out = arg;
    ppqfmt_options *o = ppqfmt_options_new();
    int rc = 0;
    for (int i = 0; i < 20 && !rc; i++)
        rc = ppqfmt_format_file(o, "testdata/sample.onnx", out);
    ppqfmt_options_free(o);
    return (void *)(long)rc;
}

static void test_thread_files(const char *dir)
{
    char out[2][4096];
    pthread_t t[2];
    void *rc[2];
    for (int i = 0; i < 2; i++) {
        snprintf(out[i], sizeof out[i], "%s/thread%d.onnx", dir, i);
        pthread_create(&t[i], NULL, write_job, out[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &rc[i]);
    size_t a_len = 0, b_len = 0;
    unsigned char *a = read_all(out[0], &a_len), *b = read_all(out[1], &b_len);
    check(!rc[0] && !rc[1] && same_bytes(a, a_len, b, b_len),
          "files written on two threads at once: both complete and equal");
    free(a);
    free(b);
}

int main(void)
{
    char dir[] = "/tmp/ppqfmt-test-api-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_options();
    test_same_as_cli(dir);
    test_errors(dir);
    test_check_verdict();
    test_threads();
    test_thread_files(dir);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_api: could not remove %s\n", dir);
    printf("test_api: %d passed, %d failed\n", n_passed, n_failed);
    return n_failed ? 1 : 0;
}
