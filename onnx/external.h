/* external.h - tensors whose bytes live in files beside the model.
 *
 * Loading: each external_data location is checked to stay inside the model's
 * folder (no absolute path, no "..", no symlink leading out), its range to lie
 * within the file and to match the tensor's dims; the file is mapped once and
 * the tensor points into the mapping. Writing: see write.h. */
#ifndef PPQ_EXTERNAL_H
#define PPQ_EXTERNAL_H

#include "encode.h"
#include "load.h"
#include "write.h"

/* Did a pass give a new value to a tensor stored externally? Its new bytes
 * then go to a data file beside the output too. */
bool model_has_new_external(const Model *m);
/* Is name a plain relative file name for --external-data? */
int external_name_ok(const char *name, Diag *d);
/* Refuses to write a model that still names external files to stdout. */
int external_check_target(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                          Diag *d);
/* Copies the external files the output still names into out_dir, unless
 * out_dir is the input's folder. */
int external_copy_beside(const Model *m, const WriteOptions *wo, const EncodeOptions *opt,
                         const char *out_dir, Diag *d);

#endif
