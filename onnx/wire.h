/* wire.h - protobuf wire format: a field reader and a zero-copy writer.
 *
 * The loader reads GraphProto, NodeProto, AttributeProto and TensorProto at
 * the wire level so that tensor payloads are never copied and every message
 * keeps the exact bytes it came from. The writer (Out) is a list of segments:
 * bytes it owns plus references to the mapped input, so writing a model copies
 * nothing that no pass changed. */
#ifndef PPQ_WIRE_H
#define PPQ_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/ir/arena.h"
#include "../core/ir/tensor.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct WireField {
    uint32_t num;
    int wt;
    uint64_t u; /* varint, fixed32 or fixed64 value */
    Bytes data; /* WT_LEN payload */
    Bytes whole; /* tag through end of value: the field as it was written */
} WireField;

/* Wire types a known field may have: a set of WT_BIT()s per field number, 0
 * for a field not checked. protobuf refuses a message whose known field has
 * another wire type; the loader, which skips fields it does not use, checks
 * that while it reads (wire_reader_checked). */
#define WT_BIT(wt) (1u << (wt))
enum {
    WTS_LEN = WT_BIT(WT_LEN), WTS_VARINT = WT_BIT(WT_VARINT), WTS_I32 = WT_BIT(WT_I32),
    WTS_INTS = WTS_VARINT | WTS_LEN, /* repeated varints: one by one or packed */
    WTS_FLOATS = WTS_I32 | WTS_LEN, WTS_DOUBLES = WT_BIT(WT_I64) | WTS_LEN,
};

typedef struct WireReader {
    const uint8_t *p, *end;
    const uint8_t *allowed; /* optional: allowed wire types by field number */
    size_t n_allowed;
    uint32_t bad; /* the first field read whose wire type `allowed` refuses, or 0 */
} WireReader;

static inline WireReader wire_reader(Bytes b)
{
    /* NULL + 0 is undefined */
    return (WireReader){b.ptr, b.len ? b.ptr + b.len : b.ptr, NULL, 0, 0};
}
/* A reader that also checks each field's wire type against table (an array
 * indexed by field number): after reading, r.bad names the first mismatch. */
#define wire_reader_checked(b, table) \
    ((WireReader){(b).ptr, (b).len ? (b).ptr + (b).len : (b).ptr, (table), \
                  sizeof(table) / sizeof *(table), 0})
/* 1: *f holds the next field; 0: end of message; -1: malformed bytes. */
int wire_next(WireReader *r, WireField *f);
/* Could the bytes of r be the head of a longer message: well-formed fields
 * (wire types checked as r checks them), the last one perhaps cut short? */
bool wire_head_ok(WireReader r);
/* Reads one varint from a packed run; -1 when malformed. */
int wire_varint(WireReader *r, uint64_t *v);

typedef struct Seg {
    const uint8_t *p; /* NULL for bytes computed by gen */
    size_t len;
    const TensorGen *gen;
    size_t gen_off; /* where in gen's bytes this piece starts */
} Seg;

typedef struct Out {
    Arena *arena; /* owns the copied bytes; the segment array is malloc'ed */
    Seg *segs;
    size_t n, cap;
    size_t size; /* total bytes */
    struct OutPool *pool; /* small copied bytes, shared with child outputs */
    bool failed; /* out of memory: the output is unusable */
    const struct EncodeOptions *opt; /* the encoder's settings, passed to children */
} Out;

void out_init(Out *o, Arena *a);
/* An empty output for a submessage, sharing o's arena and settings. */
void out_child(Out *child, const Out *o);
/* Appends n bytes the caller writes at the address returned (NULL when n is
 * 0 or out of memory), as out_copy would have copied them. */
uint8_t *out_space(Out *o, size_t n);
/* Appends a copy of n bytes (for small, short-lived data). */
void out_copy(Out *o, const void *p, size_t n);
/* Appends a reference to n bytes that stay valid until the output is written. */
void out_ref(Out *o, const void *p, size_t n);
/* Appends n bytes that gen computes when the output is written. */
void out_gen(Out *o, const TensorGen *gen, size_t n);
void out_varint(Out *o, uint64_t v);
/* v as a varint: its length in bytes; written at p (room for 10 bytes),
 * returning the end. */
size_t wire_varint_len(uint64_t v);
uint8_t *wire_put_varint(uint8_t *p, uint64_t v);
void out_tag(Out *o, uint32_t num, int wt);
void out_varint_field(Out *o, uint32_t num, uint64_t v);
void out_fixed32_field(Out *o, uint32_t num, uint32_t v);
/* A length-delimited field whose bytes are referenced, not copied: they must
 * outlive the output (input bytes or arena memory, never the stack). */
void out_tensor_bytes_field(Out *o, uint32_t num, const Tensor *t);
void out_bytes_field(Out *o, uint32_t num, const void *p, size_t n);
void out_string_field(Out *o, uint32_t num, const char *s);
/* Field num holding body, where body is a part of `within` (the input file)
 * that the file already holds as exactly this field: the tag and length are
 * referenced with it, so the unchanged fields of a run in the file stay one
 * piece of the output. false (nothing written) when the bytes before body
 * are not that tag and length. */
bool out_ref_field(Out *o, uint32_t num, Bytes body, Bytes within);
/* A submessage field: tag, length, then the segments of child, whose own
 * segment list is freed (the bytes it points at stay). */
void out_message_field(Out *o, uint32_t num, Out *child);
/* Frees o's segment list (out_init's output, once written). */
void out_free(Out *o);
void out_append(Out *o, const Out *child);

#endif
