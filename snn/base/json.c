#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

void nc_json_init(nc_json *j) { memset(j, 0, sizeof *j); }

void nc_json_free(nc_json *j)
{
    nc_free(j->buf);
    nc_json_init(j);
}

static void put(nc_json *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (cap < j->len + n + 1)
            cap *= 2;
        char *b = nc_realloc(j->buf, cap);
        if (!b) {
            j->failed = 1;
            return;
        }
        j->buf = b;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(nc_json *j, const char *s) { put(j, s, strlen(s)); }

static void quoted(nc_json *j, const char *s)
{
    puts_(j, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p, esc[2] = '\0';
            puts_(j, esc);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(j, esc);
        } else {
            put(j, (const char *)p, 1);
        }
    }
    puts_(j, "\"");
}

/* Comma and key before a value at the current depth. */
static void lead(nc_json *j, const char *key)
{
    if (j->count[j->depth]++)
        puts_(j, ",");
    if (j->depth > 0)
        puts_(j, "\n");
    for (int i = 0; i < j->depth; i++)
        puts_(j, "  ");
    if (key) {
        quoted(j, key);
        puts_(j, ": ");
    }
}

static void open_(nc_json *j, const char *key, const char *br)
{
    lead(j, key);
    puts_(j, br);
    if (j->depth + 1 >= NC_JSON_MAX_DEPTH) {
        j->failed = 1;
        return;
    }
    j->count[++j->depth] = 0;
}

static void close_(nc_json *j, const char *br)
{
    if (j->depth == 0) {
        j->failed = 1;
        return;
    }
    int had = j->count[j->depth--];
    if (had) {
        puts_(j, "\n");
        for (int i = 0; i < j->depth; i++)
            puts_(j, "  ");
    }
    puts_(j, br);
}

void nc_json_begin_object(nc_json *j, const char *key) { open_(j, key, "{"); }
void nc_json_end_object(nc_json *j) { close_(j, "}"); }
void nc_json_begin_array(nc_json *j, const char *key) { open_(j, key, "["); }
void nc_json_end_array(nc_json *j) { close_(j, "]"); }

void nc_json_string(nc_json *j, const char *key, const char *v)
{
    lead(j, key);
    quoted(j, v);
}

void nc_json_number(nc_json *j, const char *key, double v)
{
    char b[40];
    lead(j, key);
    if (!isfinite(v))
        puts_(j, "null");
    else {
        snprintf(b, sizeof b, "%.9g", v);
        puts_(j, b);
    }
}

void nc_json_int(nc_json *j, const char *key, int64_t v)
{
    char b[32];
    lead(j, key);
    snprintf(b, sizeof b, "%lld", (long long)v);
    puts_(j, b);
}

void nc_json_bool(nc_json *j, const char *key, int v)
{
    lead(j, key);
    puts_(j, v ? "true" : "false");
}

void nc_json_null(nc_json *j, const char *key)
{
    lead(j, key);
    puts_(j, "null");
}

char *nc_json_take(nc_json *j)
{
    if (j->failed || j->depth != 0) {
        nc_json_free(j);
        return NULL;
    }
    puts_(j, "\n");
    char *b = j->failed ? NULL : j->buf;
    if (!b)
        nc_free(j->buf);
    nc_json_init(j);
    return b;
}
