/* Which graph of a .nir file neuroc reads, and what its standard graph
 * loses (nc_nir_file_info_read); the standard form behind the public API
 * (nc_snn_nir_standard, snn/ir/snn_standard.c). */
#include <stdio.h>
#include <string.h>

#include "export/data/h5io.h"
#include "nir_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/input_file.h"

nc_status nc_snn_nir_standard(const nc_snn *s, nc_snn **out, char *loss, size_t cap)
{
    if (out)
        *out = NULL;
    if (loss && cap)
        loss[0] = '\0';
    if (!s || s->n_layers < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_nir_standard: network missing");
    nc_snn_std_loss *l = nc_calloc(1, sizeof *l);
    if (!l)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_snn *t = NULL;
    nc_status st = nc_snn_standard_form(s, &t, l);
    if (st == NC_OK && loss && cap)
        snprintf(loss, cap, "%s", l->text);
    if (st == NC_OK && out)
        *out = t;
    else
        nc_snn_free(t);
    nc_free(l);
    return st;
}

nc_status nc_nir_file_info_read(const char *path, nc_nir_file_info *out)
{
    if (!path || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_nir_file_info_read: path or out missing");
    memset(out, 0, sizeof *out);
    nc_status ist = nc_input_check(path, NULL); /* a FIFO would block HDF5's open; a directory is named */
    if (ist != NC_OK)
        return ist;
    nc_h5_quiet q;
    nc_h5_quiet_begin(&q);
    hid_t f = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
    nc_status st = NC_OK;
    if (f < 0) {
        st = nc_errorf(NC_ERR_PARSE, "%s: bad NIR file: not an HDF5 file, or truncated", path);
    } else if (!nc_h5_is_group(f, "node")) {
        st = nc_errorf(NC_ERR_PARSE, "%s: no '/node' group (not a NIR file)", path);
    } else if ((out->neuroc_format = nir_neuroc_usable(f)) > 0) {
        out->exact_graph = out->neuroc_format >= 4;
        hid_t g = H5Gopen2(f, "neuroc", H5P_DEFAULT);
        char *loss = NULL;
        if (g >= 0 && nc_h5_exists(g, "standard_loss") &&
            (st = nc_h5_read_string(g, "standard_loss", &loss)) == NC_OK) {
            out->loss_known = 1;
            snprintf(out->standard_loss, sizeof out->standard_loss, "%s", loss);
        }
        nc_free(loss);
        if (g >= 0)
            H5Gclose(g);
        if (st != NC_OK)
            nc_error_prefix("%s: /neuroc/standard_loss", path);
    }
    if (f >= 0)
        H5Fclose(f);
    nc_h5_quiet_end(&q);
    return st;
}
