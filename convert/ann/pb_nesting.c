/* Bounded protobuf unpacking (pb_nesting.h). protobuf-c's unpack recurses
 * once per nested message with no limit, so a small file of deeply nested
 * messages (a TypeProto sequence inside a sequence ..., an If whose branch
 * holds an If ...) overflows the stack. This scanner walks the wire bytes
 * with an explicit stack of bounded size, using the generated descriptors
 * to know which length-delimited fields are messages, before protobuf-c
 * sees them. */
#include "pb_nesting.h"

#include <stdio.h>
#include <string.h>

#include "onnx_tensor.h"
#include "snn/base/error.h"

typedef struct frame {
    const ProtobufCMessageDescriptor *desc;
    size_t end;         /* offset just past this message's bytes */
    const char *field;  /* the field of the parent that holds it (NULL at the root) */
} frame;

/* Reads a base-128 varint of at most 10 bytes ending before `end`. */
static int read_varint(const uint8_t *p, size_t *i, size_t end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70 && *i < end; shift += 7) {
        uint8_t b = p[(*i)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 1;
    }
    return 0;
}

/* "graph.node.attribute.g.node … (15003 levels) … sequence_type.elem_type":
 * the first and last fields of the path, enough to see what repeats. */
static void path_str(const frame *st, int depth, char *buf, size_t cap)
{
    enum { HEAD = 9, TAIL = 4 };
    size_t off = 0;
    buf[0] = '\0';
    for (int d = 1; d <= depth && off < cap; d++) {
        if (depth > HEAD + TAIL && d == HEAD + 1) {
            off += (size_t)snprintf(buf + off, cap - off, " … ");
            d = depth - TAIL;
        }
        off += (size_t)snprintf(buf + off, cap - off, "%s%s", d > 1 && buf[off - 1] != ' ' ? "." : "",
                                st[d].field);
    }
}

static nc_status malformed(const char *src, const char *what, size_t at)
{
    return nc_errorf(NC_ERR_PARSE, "%s: not an ONNX model or truncated (%s at byte %zu)", src, what, at);
}

nc_status nc_pb_check_nesting(const ProtobufCMessageDescriptor *root, const uint8_t *p, size_t n,
                              const char *src)
{
    frame st[NC_PB_MAX_DEPTH + 1];
    int depth = 0;
    st[0] = (frame){root, n, NULL};
    size_t i = 0;
    for (;;) {
        while (depth > 0 && i == st[depth].end)
            depth--;
        if (i == n)
            return NC_OK;
        size_t end = st[depth].end, at = i;
        uint64_t tag, len;
        if (!read_varint(p, &i, end, &tag))
            return malformed(src, "a field tag runs past its message", at);
        switch (tag & 7) {
        case 0:
            if (!read_varint(p, &i, end, &len))
                return malformed(src, "a varint runs past its message", at);
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (end - i < w)
                return malformed(src, "a fixed-size field runs past its message", at);
            i += w;
            break;
        }
        case 2: {
            if (!read_varint(p, &i, end, &len) || len > end - i)
                return malformed(src, "a length-delimited field runs past its message", at);
            const ProtobufCFieldDescriptor *f =
                tag >> 3 <= UINT32_MAX
                    ? protobuf_c_message_descriptor_get_field(st[depth].desc, (unsigned)(tag >> 3))
                    : NULL;
            if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE) {
                i += (size_t)len;
                break;
            }
            if (depth == NC_PB_MAX_DEPTH) {
                char path[400];
                path_str(st, depth, path, sizeof path);
                return nc_errorf(NC_ERR_LIMIT,
                                 "%s: messages nested more than %d deep (%s.%s at byte %zu): refused "
                                 "before parsing, as no real model nests so deep",
                                 src, NC_PB_MAX_DEPTH, path, f->name, at);
            }
            st[++depth] = (frame){f->descriptor, i + (size_t)len, f->name};
            break;
        }
        default: /* groups (3, 4) and 6, 7: protobuf-c reads none of them */
            return malformed(src, "an unsupported wire type", at);
        }
    }
}

void *nc_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                   const char *src, const char *kind, nc_status *st)
{
    *st = nc_pb_check_nesting(desc, data, size, src);
    if (*st != NC_OK)
        return NULL;
    ProtobufCAllocator pa;
    int oom;
    nc_onnx_pb_allocator_init(&pa, &oom);
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &pa, size, data);
    if (!m)
        *st = oom ? nc_errorf(NC_ERR_NOMEM, "%s: out of memory parsing it", src)
                  : nc_errorf(NC_ERR_PARSE, "%s: not %s or truncated", src, kind);
    return m;
}
