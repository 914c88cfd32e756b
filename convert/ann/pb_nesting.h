/* Protobuf unpacking with a bound on message nesting, checked on the wire
 * bytes before protobuf-c (which recurses once per level, without a limit)
 * parses them. */
#ifndef NC_CONVERT_PB_NESTING_H
#define NC_CONVERT_PB_NESTING_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "neuroc/neuroc.h"

/* Google's protobuf library refuses deeper messages by default too. A real
 * ONNX model nests about 5 deep, 3 more for each If/Loop body inside it. */
#define NC_PB_MAX_DEPTH 100

/* NC_OK if no message in `p` (a serialized `root`) nests deeper than
 * NC_PB_MAX_DEPTH; else NC_ERR_LIMIT naming `src` and the path of fields,
 * or NC_ERR_PARSE for bytes that are not protobuf at all. */
nc_status nc_pb_check_nesting(const ProtobufCMessageDescriptor *root, const uint8_t *p, size_t n,
                              const char *src);

/* Checks the nesting, then unpacks with neuroc's allocator. NULL with *st
 * set (messages name `src`; `kind` says what was expected, e.g.
 * "an ONNX model") on failure. Free with protobuf_c_message_free_unpacked
 * and nc_onnx_pb_allocator. */
void *nc_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                   const char *src, const char *kind, nc_status *st);

#endif
