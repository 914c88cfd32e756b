/* Internal pieces of the data-file reader (npy.c, idx.c, data_io.c).
 *
 * Both formats are read through zlib's gzFile, which reads plain files
 * unchanged, so a gzip-compressed file of either kind works too. */
#ifndef NC_SNN_DATA_IO_H
#define NC_SNN_DATA_IO_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "neuroc/neuroc.h"

typedef enum nc_elem_kind {
    NC_ELEM_FLOAT,
    NC_ELEM_INT,
    NC_ELEM_UINT,
    NC_ELEM_BOOL
} nc_elem_kind;

/* How one element is stored in the file. */
typedef struct nc_elem_format {
    nc_elem_kind kind;
    int size;       /* bytes: 1, 2, 4 or 8 */
    int big_endian; /* IDX is big-endian; npy reading accepts little-endian only */
    char name[16];  /* as the file spells it, for messages ("<f8", "ubyte") */
} nc_elem_format;

/* What a header says: element format and shape (C order). */
typedef struct nc_data_header {
    nc_elem_format fmt;
    int ndim;
    int64_t shape[NC_MAX_DIMS];
} nc_data_header;

typedef struct nc_data_reader {
    gzFile gz;
    int64_t file_size; /* bytes on disk (compressed size for gzip files) */
    int compressed;
    int64_t pos;       /* bytes consumed from the (decompressed) stream */
} nc_data_reader;

/* Reads exactly n bytes; NC_ERR_PARSE naming `what` if the stream ends early. */
nc_status nc_reader_read(nc_data_reader *r, void *buf, size_t n, const char *what);

/* Parse the rest of a header whose first four bytes (`magic`) were already read. */
nc_status nc_npy_read_header(nc_data_reader *r, const unsigned char magic[4], nc_data_header *h);
nc_status nc_idx_read_header(nc_data_reader *r, const unsigned char magic[4], nc_data_header *h);

int nc_npy_is_magic(const unsigned char magic[4]);
int nc_idx_is_magic(const unsigned char magic[4]);
int nc_h5_is_magic(const unsigned char magic[4]);

/* The dtype nc_data_load returns for elements stored as f when the caller
 * wants `want` (0 = keep: floats become F32, one-byte unsigned U8, other
 * integers I64); an error if the data cannot be had as `want`. */
nc_status nc_data_pick_dtype(const nc_elem_format *f, nc_dtype want, nc_dtype *out);

/* Reads dataset `dset` (an absolute path inside the file) of the HDF5 file
 * `file` (data_h5.c). Errors name the dataset; the caller adds the file. */
nc_status nc_data_load_h5(const char *file, const char *dset, nc_dtype want, nc_tensor **out);
/* Before reading a compact or contiguous dataset of numbers or fixed-length
 * strings (file type ft): NC_ERR_PARSE naming dset unless its stored size is
 * what numel elements need. HDF5 1.10 itself copies what the file says,
 * past the end of the reader's buffer (found by fuzzing). A chunked
 * dataset must store enough to hold what it declares: as many bytes without
 * a filter, 1/NC_DEFLATE_MAX_RATIO of them compressed. Chunks never written
 * read as the fill value, so without this a 1 MB file made the reader
 * allocate and fill gigabytes it declared. */
#define NC_DEFLATE_MAX_RATIO 1032 /* deflate cannot expand data by more than about 1032:1 */
nc_status nc_h5_check_storage(int64_t ds, int64_t ft, int64_t numel, const char *dset);
/* The error for a bare HDF5 file given where a dataset was expected: it
 * says how to name one and lists the datasets at the file's root. */
nc_status nc_data_h5_hint(const char *file);

#endif
