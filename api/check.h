/* check.h - ppqfmt --check: the input and the formatted model run by the
 * reference interpreter (core/ops/eval_run.h) on seeded random inputs, every
 * graph output compared. */
#ifndef PPQ_CHECK_H
#define PPQ_CHECK_H

#include "../core/ir/graph.h"
#include "../onnx/source.h"
#include "options.h"

/* 0 when every output agrees on every run (each output's errors printed on
 * stderr unless quiet); PPQ_EMISMATCH naming the first output that does
 * not; PPQ_ECHECK naming the node that could not run. formatted: the model
 * as written; src: the input, loaded again. */
int check_model(Model *formatted, const Source *src, const Options *o, Diag *d);

#endif
