/* mapping.h - the input file's mappings a model reads its tensors from:
 * finding the mapping of some bytes, reading them with pread instead of
 * touching the mapping, and letting their pages go (mapping.c). The model
 * records its mappings (Model.maps); the file stays the caller's. */
#ifndef PPQ_MAPPING_H
#define PPQ_MAPPING_H

#include <stddef.h>
#include <stdint.h>

typedef struct Model Model;
typedef struct MappedFile MappedFile;

/* Records a mapping (see MappedFile); fd stays owned by the caller. */
int model_add_mapping(Model *m, const void *base, size_t len, int fd);
/* The mapping holding [p, p+n), or NULL. */
const MappedFile *model_find_mapping(const Model *m, const void *p, size_t n);
/* Hint: the mapped bytes [p, p+n) will not be read again soon, so their pages
 * can leave memory (they are read back from the file if needed). Keeps the
 * resident size of large models near what passes actually change. */
void model_forget_bytes(const Model *m, const void *p, size_t n);
/* The mapped bytes [p, p+n) as read from their file (pread) into a buffer
 * the model keeps, for a reader that jumps about in them (a transpose): the
 * first touch of each page of a mapping costs a page fault, and on a
 * virtual machine a trap to the hypervisor, several times the price of
 * copying the page, where pread copies from the page cache with no mapping.
 * The last bytes asked for stay in the buffer, so the chunks of one result
 * read the file once. NULL when [p, p+n) is not in a mapping, is larger than
 * MODEL_COPY_MAX, or cannot be read: then read the mapping. Valid until the
 * next call; one caller at a time (the writer fills one chunk at a time). */
enum { MODEL_COPY_MAX = 64 << 20 };
const uint8_t *model_mapped_copy(const Model *m, const void *p, size_t n);
/* The bytes [p, p+n) for a reader going through them once, in order: when
 * they lie in a mapping they are read into buf (pread, which does not touch
 * the mapping: see model_mapped_copy) and buf is returned; otherwise, or if
 * the read fails, p itself. Safe on any thread (no shared state). */
const uint8_t *model_read_bytes(const Model *m, const void *p, size_t n, uint8_t *buf);

#endif
