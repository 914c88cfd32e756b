/* The JSON reader (snn/base/json_read): a valid document read back whole,
 * every truncation of it refused, and hostile text (deep nesting, huge
 * sizes, malformed tokens, random mutations) refused cleanly with the
 * file, line and column named. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snn/base/json_read.h"

static const char DOC[] = "{\n"
                          "  \"name\": \"caf\\u00e9 \\\"q\\\" \\ud83d\\ude00\\n\",\n"
                          "  \"n\": -12.5e1, \"zero\": 0, \"big\": 1E2,\n"
                          "  \"flags\": [true, false, null],\n"
                          "  \"nested\": {\"empty\": {}, \"list\": [], \"x\": {\"y\": [1, [2, [3]]]}}\n"
                          "}\n";

static nc_status parse(const char *text, nc_json_doc **d)
{
    return nc_json_parse(text, strlen(text), "doc.json", 0, 0, d);
}

static void test_valid(void **state)
{
    (void)state;
    nc_json_doc *d = NULL;
    NC_ASSERT_OK(parse(DOC, &d));
    const nc_json_value *root = nc_json_root(d);
    assert_int_equal(root->type, NC_JSON_OBJECT);
    assert_int_equal(root->n, 6);
    const nc_json_value *name = nc_json_get(d, root, "name");
    assert_int_equal(name->type, NC_JSON_STRING);
    assert_string_equal(name->str, "caf\xc3\xa9 \"q\" \xf0\x9f\x98\x80\n");
    assert_int_equal(name->line, 2);
    assert_int_equal(name->col, 11);
    assert_true(nc_json_get(d, root, "n")->num == -125.0);
    assert_true(nc_json_get(d, root, "zero")->num == 0.0);
    assert_true(nc_json_get(d, root, "big")->num == 100.0);
    const nc_json_value *flags = nc_json_get(d, root, "flags"), *f = nc_json_first(d, flags);
    assert_int_equal(flags->n, 3);
    assert_int_equal(f->type, NC_JSON_BOOL);
    assert_true(f->num == 1.0);
    assert_null(f->key);
    f = nc_json_next(d, f);
    assert_true(f->type == NC_JSON_BOOL && f->num == 0.0);
    f = nc_json_next(d, f);
    assert_int_equal(f->type, NC_JSON_NULL);
    assert_null(nc_json_next(d, f));
    const nc_json_value *nested = nc_json_get(d, root, "nested");
    assert_int_equal(nc_json_get(d, nested, "empty")->n, 0);
    assert_null(nc_json_first(d, nc_json_get(d, nested, "list")));
    const nc_json_value *y = nc_json_get(d, nc_json_get(d, nested, "x"), "y");
    assert_int_equal(y->n, 2);
    assert_null(nc_json_get(d, root, "missing"));
    assert_null(nc_json_get(d, flags, "name")); /* not an object */
    /* members come in file order */
    const char *order[] = {"name", "n", "zero", "big", "flags", "nested"};
    int k = 0;
    for (const nc_json_value *m = nc_json_first(d, root); m; m = nc_json_next(d, m), k++)
        assert_string_equal(m->key, order[k]);
    assert_int_equal(k, 6);
    assert_int_equal(nc_json_errorf(d, y, NC_ERR_PARSE, "bad %s", "y"), NC_ERR_PARSE);
    assert_string_equal(nc_last_error(), "doc.json:5:50: bad y");
    nc_json_doc_free(d);

    /* scalars at the top, whitespace around */
    NC_ASSERT_OK(parse(" \t\r\n\"s\" \n", &d));
    assert_string_equal(nc_json_root(d)->str, "s");
    nc_json_doc_free(d);
    NC_ASSERT_OK(parse("-0.25", &d));
    assert_true(nc_json_root(d)->num == -0.25);
    nc_json_doc_free(d);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n = strlen(DOC);
    size_t end = n - 1; /* the final newline is whitespace: DOC without it is whole */
    for (size_t len = 0; len < end; len++) {
        nc_json_doc *d = (nc_json_doc *)1;
        nc_status st = nc_json_parse(DOC, len, "cut.json", 0, 0, &d);
        if (st != NC_ERR_PARSE)
            fail_msg("prefix of %zu bytes: status %d", len, (int)st);
        assert_null(d);
        assert_non_null(strstr(nc_last_error(), "cut.json:"));
    }
    nc_json_doc *d = NULL;
    assert_int_equal(nc_json_parse(DOC, 16, "cut.json", 0, 0, &d), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "truncated"));
    assert_int_equal(nc_json_parse("", 0, "empty.json", 0, 0, &d), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "empty.json:1:1: expected a value"));
}

static void expect_parse_error(const char *text, const char *where)
{
    nc_json_doc *d = NULL;
    nc_status st = parse(text, &d);
    if (st != NC_ERR_PARSE)
        fail_msg("'%s': status %d, not a parse error", text, (int)st);
    assert_null(d);
    if (!strstr(nc_last_error(), where))
        fail_msg("'%s': error '%s' lacks '%s'", text, nc_last_error(), where);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_parse_error("{\n  \"a\": tru\n}", "doc.json:2:8: expected a value");
    expect_parse_error("{\"a\": 1,}", "doc.json:1:9: expected a member name");
    expect_parse_error("[1, 2,]", "expected a value");
    expect_parse_error("[01]", "expected ',' or ']'");
    expect_parse_error("[1.]", "decimal point");
    expect_parse_error("[1e]", "exponent");
    expect_parse_error("[NaN]", "expected a value");
    expect_parse_error("[Infinity]", "expected a value");
    expect_parse_error("[-]", "expected a value");
    expect_parse_error("[1e999]", "out of the range");
    expect_parse_error("[\"a\tb\"]", "control character");
    expect_parse_error("[\"a\\u0000b\"]", "\\u0000");
    expect_parse_error("[\"\\ud800\"]", "surrogate");
    expect_parse_error("[\"\\udc00x\"]", "surrogate");
    expect_parse_error("[\"\\u12g4\"]", "four hexadecimal");
    expect_parse_error("[\"\\x\"]", "unknown escape");
    expect_parse_error("{\"a\" 1}", "expected ':'");
    expect_parse_error("{1: 2}", "member name");
    expect_parse_error("{'a': 1}", "member name");
    expect_parse_error("{} {}", "doc.json:1:4: text after the JSON value");
    expect_parse_error("{} // comment", "text after");
    expect_parse_error("[1 2]", "expected ',' or ']'");
    expect_parse_error("[\"unterminated", "unterminated string");
    char nul[] = "[1, \0 2]";
    nc_json_doc *d = NULL;
    assert_int_equal(nc_json_parse(nul, sizeof nul - 1, "nul.json", 0, 0, &d), NC_ERR_PARSE);
    assert_null(d);
}

static void test_limits(void **state)
{
    (void)state;
    /* nesting: 64 levels pass, 65 fail, and a million fail without recursing that deep */
    int big = 1000000;
    char *deep = malloc((size_t)2 * big + 1);
    assert_non_null(deep);
    for (int levels = 64; levels <= 65; levels++) {
        memset(deep, '[', (size_t)levels);
        memset(deep + levels, ']', (size_t)levels);
        nc_json_doc *d = NULL;
        nc_status st = nc_json_parse(deep, (size_t)2 * levels, "deep.json", 0, 0, &d);
        assert_int_equal(st, levels == 64 ? NC_OK : NC_ERR_PARSE);
        nc_json_doc_free(d);
    }
    assert_non_null(strstr(nc_last_error(), "nesting deeper than 64 levels"));
    memset(deep, '[', (size_t)big);
    memset(deep + big, ']', (size_t)big);
    nc_json_doc *d = NULL;
    assert_int_equal(nc_json_parse(deep, (size_t)2 * big, "deep.json", 0, 0, &d), NC_ERR_PARSE);
    /* the caller's own depth limit */
    assert_int_equal(nc_json_parse(deep + big - 3, 6, "d.json", 0, 2, &d), NC_ERR_PARSE);
    NC_ASSERT_OK(nc_json_parse(deep + big - 2, 4, "d.json", 0, 2, &d));
    nc_json_doc_free(d);
    free(deep);

    /* size */
    assert_int_equal(nc_json_parse("[1, 2, 3]", 9, "size.json", 8, 0, &d), NC_ERR_LIMIT);
    assert_non_null(strstr(nc_last_error(), "size.json: 9 bytes"));
    NC_ASSERT_OK(nc_json_parse("[1, 2, 3]", 9, "size.json", 9, 0, &d));
    assert_int_equal(nc_json_root(d)->n, 3);
    nc_json_doc_free(d);

    /* files: missing, and over the limit */
    assert_int_equal(nc_json_read_file("/nonexistent/p.json", 0, 0, &d), NC_ERR_IO);
    assert_non_null(strstr(nc_last_error(), "/nonexistent/p.json"));
    char path[] = "/tmp/nc_test_json_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 5000; i++)
        fputs(i ? ", 1" : "[1", f);
    fputs("]", f);
    fclose(f);
    assert_int_equal(nc_json_read_file(path, 1000, 0, &d), NC_ERR_LIMIT);
    assert_non_null(strstr(nc_last_error(), path));
    NC_ASSERT_OK(nc_json_read_file(path, 0, 0, &d));
    assert_int_equal(nc_json_root(d)->n, 5000);
    nc_json_doc_free(d);
    unlink(path);
}

/* Random byte mutations of DOC: each parses or fails with NC_ERR_PARSE,
 * never anything else (and, under ASan, never touches memory it should not). */
static void test_mutations(void **state)
{
    (void)state;
    size_t n = strlen(DOC);
    char *buf = malloc(n);
    assert_non_null(buf);
    uint64_t rng = 12345;
    int ok = 0;
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, DOC, n);
        int edits = 1 + (int)(round % 4);
        for (int e = 0; e < edits; e++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(rng >> 33) % n;
            buf[at] = (char)(rng >> 17);
        }
        size_t len = round % 3 == 0 ? (size_t)(rng >> 40) % (n + 1) : n;
        nc_json_doc *d = NULL;
        nc_status st = nc_json_parse(buf, len, "mut.json", 0, 0, &d);
        if (st != NC_OK && st != NC_ERR_PARSE)
            fail_msg("round %d: status %d", round, (int)st);
        ok += st == NC_OK;
        nc_json_doc_free(d);
    }
    assert_true(ok > 0); /* some mutations (inside strings) stay valid */
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),     cmocka_unit_test(test_truncated), cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_limits),    cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
