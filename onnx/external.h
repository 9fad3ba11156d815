/* external.h - tensors whose bytes live in files beside the model.
 *
 * Loading: each external_data location is checked to stay inside the model's
 * folder (no absolute path, no "..", no symlink leading out), its range to lie
 * within the file and to match the tensor's dims; the file is mapped once and
 * the tensor points into the mapping. Writing: see external_write.h. */
#ifndef PPQ_EXTERNAL_H
#define PPQ_EXTERNAL_H

#include "loader.h"

/* Maps the external bytes of t (declared by its external_data entries). */
int load_external(Loader *L, Tensor *t, Bytes wire);

#endif
