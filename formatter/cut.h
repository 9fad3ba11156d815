/* cut.h - --inputs/--outputs: the part of the main graph between given
 * values becomes the model (as onnx's extract_model, polygraphy's surgeon
 * extract): cut inputs become graph inputs, cut outputs the graph outputs,
 * and what does not lead from the one to the other goes. */
#ifndef PPQ_CUT_H
#define PPQ_CUT_H

#include "../core/ir/graph.h"

/* Cuts m's main graph. With no inputs the graph inputs stay (those the
 * outputs still need); with no outputs the graph outputs stay. A name that
 * is no value of the main graph is a usage error naming the nearest value;
 * a value whose type cannot be told, or an output that needs a graph input
 * not among `inputs`, is an input error; nothing is changed then. */
int model_cut(Model *m, const char *const *inputs, size_t n_inputs,
              const char *const *outputs, size_t n_outputs, Diag *d);
/* After the passes: the graph inputs they left unread go too (not those
 * `inputs` names), so that cutting the output again changes nothing. */
void model_cut_finish(Model *m, const char *const *inputs, size_t n_inputs);

#endif
