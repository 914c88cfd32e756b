/* A small JSON reader, the writer's counterpart (json.h), for the files
 * neuroc reads (sim/loihi_params.json). The whole text is parsed into a
 * tree of values before anything uses it, so a caller never sees half a
 * file. Written for hostile input: the text and the nesting depth have
 * limits, the grammar is strict RFC 8259 (no comments, no trailing commas,
 * no NaN), strings are decoded (\uXXXX with surrogate pairs to UTF-8;
 * control characters and \u0000 refused), and every error names the file,
 * line and column. */
#ifndef NC_BASE_JSON_READ_H
#define NC_BASE_JSON_READ_H

#include <stddef.h>

#include "neuroc/neuroc.h"
#include "error.h"

#define NC_JSON_READ_MAX_BYTES ((size_t)16 << 20) /* default text limit: 16 MiB */
#define NC_JSON_READ_MAX_DEPTH 64                 /* default nesting limit */

typedef enum nc_json_type {
    NC_JSON_NULL = 0,
    NC_JSON_BOOL,
    NC_JSON_NUMBER,
    NC_JSON_STRING,
    NC_JSON_ARRAY,
    NC_JSON_OBJECT
} nc_json_type;

/* One value of the tree; owned by its document. */
typedef struct nc_json_value {
    nc_json_type type;
    const char *key;      /* the member's name inside an object, else NULL */
    const char *str;      /* NC_JSON_STRING: decoded, NUL-terminated */
    double num;           /* NC_JSON_NUMBER (finite); NC_JSON_BOOL: 0 or 1 */
    int n;                /* NC_JSON_ARRAY, NC_JSON_OBJECT: number of children */
    int child, next;      /* indices of the first child and of the next sibling; -1: none */
    int line, col;        /* where the value starts, from 1 */
} nc_json_value;

typedef struct nc_json_doc nc_json_doc;

/* Parses len bytes of text; `name` (e.g. the file's path) heads every error
 * message. max_bytes / max_depth 0 mean the defaults above; a longer text
 * fails with NC_ERR_LIMIT, a deeper one or any syntax error with
 * NC_ERR_PARSE ("name:line:col: what"). The caller owns *out. */
nc_status nc_json_parse(const char *text, size_t len, const char *name, size_t max_bytes, int max_depth,
                        nc_json_doc **out);
/* Reads and parses a file (NC_ERR_IO when it cannot be read). */
nc_status nc_json_read_file(const char *path, size_t max_bytes, int max_depth, nc_json_doc **out);
void nc_json_doc_free(nc_json_doc *d);

/* The top value; never NULL for a parsed document. */
const nc_json_value *nc_json_root(const nc_json_doc *d);
/* The first child of an array or object, the sibling after v; NULL at the end. */
const nc_json_value *nc_json_first(const nc_json_doc *d, const nc_json_value *v);
const nc_json_value *nc_json_next(const nc_json_doc *d, const nc_json_value *v);
/* The first member of object `obj` named key, or NULL (also when obj is
 * not an object). */
const nc_json_value *nc_json_get(const nc_json_doc *d, const nc_json_value *obj, const char *key);
/* A static name of a type ("number", "object", ...), for messages. */
const char *nc_json_type_name(nc_json_type t);

/* Fails with `st`, the message naming the document, v's line and column,
 * and what follows (printf format). Returns st. */
nc_status nc_json_errorf(const nc_json_doc *d, const nc_json_value *v, nc_status st, const char *fmt, ...)
    NC_PRINTF(4, 5);

#endif
