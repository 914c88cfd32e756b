/* IDX files (LeCun's MNIST format, also used by Fashion-MNIST).
 *
 * Magic: two zero bytes, a type code, the number of dimensions; then one
 * big-endian uint32 per dimension; then the data, big-endian, C order.
 * Images are 0x00000803 (ubyte, 3 dims), labels 0x00000801 (ubyte, 1 dim). */
#include <stdio.h>
#include <string.h>

#include "data_io.h"
#include "snn/base/error.h"

static int idx_format(unsigned char code, nc_elem_format *f)
{
    static const struct {
        unsigned char code;
        nc_elem_kind kind;
        int size;
        const char *name;
    } types[] = {
        {0x08, NC_ELEM_UINT, 1, "ubyte"}, {0x09, NC_ELEM_INT, 1, "byte"},
        {0x0B, NC_ELEM_INT, 2, "short"},  {0x0C, NC_ELEM_INT, 4, "int"},
        {0x0D, NC_ELEM_FLOAT, 4, "float"}, {0x0E, NC_ELEM_FLOAT, 8, "double"},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (types[i].code == code) {
            if (f) {
                memset(f, 0, sizeof *f);
                f->kind = types[i].kind;
                f->size = types[i].size;
                f->big_endian = 1;
                snprintf(f->name, sizeof f->name, "%s", types[i].name);
            }
            return 1;
        }
    }
    return 0;
}

int nc_idx_is_magic(const unsigned char magic[4])
{
    return magic[0] == 0 && magic[1] == 0 && idx_format(magic[2], NULL) && magic[3] >= 1;
}

nc_status nc_idx_read_header(nc_data_reader *r, const unsigned char magic[4], nc_data_header *h)
{
    if (!nc_idx_is_magic(magic))
        return nc_errorf(NC_ERR_PARSE, "bad IDX magic 0x%02x%02x%02x%02x", magic[0], magic[1],
                         magic[2], magic[3]);
    if (magic[3] > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_LIMIT, "IDX file declares %d dimensions (at most %d)", magic[3],
                         NC_MAX_DIMS);
    idx_format(magic[2], &h->fmt);
    h->ndim = magic[3];
    for (int i = 0; i < h->ndim; i++) {
        unsigned char b[4];
        nc_status st = nc_reader_read(r, b, 4, "IDX dimensions");
        if (st != NC_OK)
            return st;
        h->shape[i] = (int64_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
                                (uint32_t)b[2] << 8 | (uint32_t)b[3]);
    }
    return NC_OK;
}
