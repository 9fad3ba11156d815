/* external_write.h - the data files an output needs beside it.
 *
 * An output can need three kinds of data file in its folder: the one
 * --external-data (or a pass giving new values to external tensors) creates,
 * and, when the output goes to another folder than the input, copies (or,
 * with --link-external, hard links) of the input's data files the output
 * still names. Before anything is written every such target is checked:
 * an existing file is replaced only when the output owns it, that is when
 * the model now at the output path names it as its external data (a rerun
 * onto the same output); a file with exactly the bytes to be copied is left
 * as it is; any other existing file (another model's data) is refused with
 * exit code 3. */
#ifndef PPQ_EXTERNAL_WRITE_H
#define PPQ_EXTERNAL_WRITE_H

#include "encode.h"
#include "staging.h"
#include "write_options.h"

typedef struct DataTarget {
    const char *name; /* relative to the output's folder */
    char *path;       /* output folder / name */
    char *src;        /* the input's file to copy or link; NULL: the generated data file */
    bool keep;        /* the target already holds src's bytes: nothing to write */
} DataTarget;

typedef struct DataPlan {
    DataTarget *t;
    size_t n, cap;
} DataPlan;

/* Did a pass give a new value to a tensor stored externally? Its new bytes
 * then go to a data file beside the output too. */
bool model_has_new_external(const Model *m);
/* Is name a plain file name for --external-data? */
int external_name_ok(const char *name, Diag *d);
/* Refuses to write a model that still names external files to stdout. */
int external_check_target(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                          Diag *d);
/* Lists and checks every data file the output needs in out_dir (the
 * generated one, opt->location, first); writes nothing. */
int external_plan(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                  const char *out_dir, DataPlan *p, Arena *a, Diag *d);
/* Stages the copies (or links) of the plan's input data files. */
int external_stage_copies(const DataPlan *p, bool link, Staging *s, Diag *d);

#endif
