/* check.h - ppqfmt --check: the input and the formatted model run by the
 * reference interpreter (core/ops/eval_run.h) on seeded random inputs, every
 * graph output compared. */
#ifndef PPQ_CHECK_H
#define PPQ_CHECK_H

#include "../core/ir/graph.h"
#include "../onnx/source.h"
#include "options.h"

enum { CHECK_MAX_OUTPUTS = 256 };

/* One graph output of the formatted model over all runs: the largest
 * |out - ref| and max|ref| seen; why is set when type or shape differ. */
typedef struct CheckError {
    double abs, ref;
    bool differs;
    const char *why;
} CheckError;

/* What a finished check found, for the JSON report (names belong to the
 * formatted model). */
typedef struct CheckResult {
    bool done; /* every run finished: the verdicts below hold */
    int runs;
    uint64_t seed;
    size_t n;
    const char *names[CHECK_MAX_OUTPUTS];
    CheckError e[CHECK_MAX_OUTPUTS];
} CheckResult;

/* 0 when every output agrees on every run (each output's errors printed on
 * stderr unless quiet); PPQ_EMISMATCH naming the first output that does
 * not; PPQ_ECHECK naming the node that could not run. formatted: the model
 * as written; src: the input, loaded again; res: what was found
 * (res->done false when no verdict was reached). */
int check_model(Model *formatted, const Source *src, const Options *o, CheckResult *res,
                Diag *d);

#endif
