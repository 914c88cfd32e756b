/* The report JSON writer: nesting, commas, escaping, non-finite numbers. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "snn/base/json.h"
#include "snn/base/alloc.h"

static void test_nested(void **state)
{
    (void)state;
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    nc_json_string(&j, "name", "a\"b\\c\n");
    nc_json_begin_array(&j, "acc");
    nc_json_number(&j, NULL, 0.5);
    nc_json_number(&j, NULL, NAN);
    nc_json_end_array(&j);
    nc_json_begin_object(&j, "empty");
    nc_json_end_object(&j);
    nc_json_int(&j, "n", -12);
    nc_json_bool(&j, "ok", 1);
    nc_json_end_object(&j);
    char *s = nc_json_take(&j);
    assert_non_null(s);
    assert_string_equal(s, "{\n  \"name\": \"a\\\"b\\\\c\\u000a\",\n  \"acc\": [\n    0.5,\n    null\n  ],\n"
                           "  \"empty\": {},\n  \"n\": -12,\n  \"ok\": true\n}\n");
    nc_free(s);
}

static void test_unbalanced(void **state)
{
    (void)state;
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    assert_null(nc_json_take(&j)); /* an open object is not a document */
    nc_json_end_array(&j);         /* closing at depth 0 */
    assert_null(nc_json_take(&j));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_nested), cmocka_unit_test(test_unbalanced)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
