/* A small JSON writer for reports (conversion, evaluation). Values are
 * appended in order; a key is given inside objects and NULL inside arrays or
 * at the top. An allocation failure is remembered and reported by
 * nc_json_take, so callers need not check every call. */
#ifndef NC_EXPORT_JSON_H
#define NC_EXPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#define NC_JSON_MAX_DEPTH 32

typedef struct nc_json {
    char *buf;
    size_t len, cap;
    int depth;
    int count[NC_JSON_MAX_DEPTH]; /* values written at each depth, for commas */
    int failed;
} nc_json;

void nc_json_init(nc_json *j);
void nc_json_begin_object(nc_json *j, const char *key);
void nc_json_end_object(nc_json *j);
void nc_json_begin_array(nc_json *j, const char *key);
void nc_json_end_array(nc_json *j);
void nc_json_string(nc_json *j, const char *key, const char *v);
/* Non-finite numbers are written as null (JSON has no NaN). */
void nc_json_number(nc_json *j, const char *key, double v);
void nc_json_int(nc_json *j, const char *key, int64_t v);
void nc_json_bool(nc_json *j, const char *key, int v);
void nc_json_null(nc_json *j, const char *key);
/* The text (caller frees with nc_free), or NULL if anything failed; resets j. */
char *nc_json_take(nc_json *j);
void nc_json_free(nc_json *j);

#endif
