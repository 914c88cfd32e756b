/* The JSON reader (snn/base/json_read, behind nc_loihi_options.params_path):
 * any bytes parse or fail cleanly; a parsed tree is walked whole, so every
 * link and string it hands out is touched. */
#include <string.h>

#include "fuzz_util.h"
#include "snn/base/json_read.h"

static size_t walk(const nc_json_doc *d, const nc_json_value *v)
{
    size_t n = 1;
    if (v->key)
        n += strlen(v->key);
    if (v->type == NC_JSON_STRING)
        n += strlen(v->str);
    for (const nc_json_value *c = nc_json_first(d, v); c; c = nc_json_next(d, c))
        n += walk(d, c); /* depth bounded by the parser's limit */
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_json_doc *d = NULL;
    if (nc_json_parse((const char *)data, size, "fuzz.json", 1 << 20, 0, &d) == NC_OK) {
        volatile size_t n = walk(d, nc_json_root(d));
        (void)n;
        nc_json_doc_free(d);
    }
    return 0;
}
