/* Shape manipulation: ops that move or select elements without arithmetic,
 * and the int64 shape arithmetic PyTorch exports around them (Shape, Gather,
 * Concat, ...). They work on any dtype by element size, and always compute
 * int64 outputs, even in a shape-only pass. */
#include "ann_ops.h"

#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"

static nc_status new_out(nc_dtype dt, int ndim, const int64_t *shape, nc_tensor **o)
{
    *o = nc_tensor_new(dt, ndim, shape);
    return *o ? NC_OK : nc_tensor_new_failure(dt, ndim, shape);
}

static int skip_float(const nc_exec_ctx *ctx, nc_dtype dt)
{
    return ctx && ctx->shape_only && dt == NC_DTYPE_F32;
}

static nc_status need_input(const nc_tensor *const *in, int n_in, int i, const char *op,
                            const char *what)
{
    if (i >= n_in || !in[i])
        return nc_errorf(NC_ERR_MODEL, "%s: input '%s' is missing", op, what);
    return NC_OK;
}

static char *shp(const nc_tensor *t, char *buf, size_t len)
{
    return nc_shape_str(t->ndim, t->shape, buf, len);
}

/* Maps axis in [-rank, rank-1] to [0, rank-1]; 0 when it is out of range. */
static int norm_axis(int64_t axis, int rank, int64_t *out)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

/* The values of a 1-D (or 0-D) int64 tensor, at most `max` of them. */
static nc_status read_ints(const nc_tensor *t, const char *op, const char *what, int64_t *buf,
                           int max, int *count)
{
    char s[160];
    if (t->dtype != NC_DTYPE_I64)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: '%s' must be int64, got %s", op, what,
                         nc_dtype_name(t->dtype));
    if (t->ndim > 1)
        return nc_errorf(NC_ERR_SHAPE, "%s: '%s' must be 1-D, got shape %s", op, what,
                         shp(t, s, sizeof s));
    if (t->numel > max)
        return nc_errorf(NC_ERR_LIMIT, "%s: '%s' has %lld values, more than the %d supported", op,
                         what, (long long)t->numel, max);
    *count = (int)t->numel;
    if (t->numel)
        memcpy(buf, t->data, (size_t)t->numel * sizeof *buf);
    return NC_OK;
}

/* A copy of x's elements under a new shape (the data may be skipped for a
 * float output in a shape-only pass). */
static nc_status reshaped(const nc_tensor *x, int ndim, const int64_t *shape,
                          const nc_exec_ctx *ctx, nc_tensor **out)
{
    nc_tensor *o;
    nc_status st = new_out(x->dtype, ndim, shape, &o);
    if (st != NC_OK)
        return st;
    if (o->numel != x->numel) {
        nc_tensor_free(o);
        return nc_errorf(NC_ERR_INTERNAL, "reshaped copy with a different element count");
    }
    if (o->numel && !skip_float(ctx, o->dtype))
        memcpy(o->data, x->data, (size_t)x->numel * nc_dtype_size(x->dtype));
    *out = o;
    return NC_OK;
}

/* ------------------------------------------------------------ Flatten, Reshape */

nc_status nc_op_flatten(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_input(in, n_in, 0, "Flatten", "input");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int r = x->ndim;
    int64_t axis = nc_attr_int(n, "axis", 1);
    if (axis < -(int64_t)r || axis > r)
        return nc_errorf(NC_ERR_MODEL, "Flatten: axis %lld is out of range for a %d-D input",
                         (long long)axis, r);
    if (axis < 0)
        axis += r;
    int64_t shape[2] = {1, 1};
    char s[160];
    for (int d = 0; d < r; d++)
        if (!nc_mul_i64(shape[d < axis ? 0 : 1], x->shape[d], &shape[d < axis ? 0 : 1]))
            return nc_errorf(NC_ERR_LIMIT, "Flatten: the flattened size of %s overflows",
                             shp(x, s, sizeof s));
    return reshaped(x, 2, shape, ctx, out);
}

nc_status nc_op_reshape(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st;
    if ((st = need_input(in, n_in, 0, "Reshape", "data")) != NC_OK ||
        (st = need_input(in, n_in, 1, "Reshape", "shape")) != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int64_t shape[NC_MAX_DIMS];
    int nd;
    if ((st = read_ints(in[1], "Reshape", "shape", shape, NC_MAX_DIMS, &nd)) != NC_OK)
        return st;
    int allowzero = n->opset >= 14 && nc_attr_int(n, "allowzero", 0) != 0;
    int infer = -1;
    int64_t known = 1;
    char s1[160], s2[160];
    const int64_t *asked = nd ? nc_i64(in[1]) : shape; /* as written, before 0s are copied */
#define RESHAPE_FAIL(why)                                                                    \
    nc_errorf(NC_ERR_SHAPE, "Reshape: cannot reshape %s (%lld elements) to %s: %s",          \
              shp(x, s1, sizeof s1), (long long)x->numel, nc_shape_str(nd, asked, s2, sizeof s2), \
              why)
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0 && !allowzero) {
            if (d >= x->ndim)
                return RESHAPE_FAIL("a 0 (copy) beyond the input's rank");
            shape[d] = x->shape[d];
        }
        if (shape[d] == -1) {
            if (infer >= 0)
                return RESHAPE_FAIL("more than one -1");
            infer = d;
            continue;
        }
        if (shape[d] < 0)
            return RESHAPE_FAIL("a negative dimension");
        if (!nc_mul_i64(known, shape[d], &known))
            return RESHAPE_FAIL("the element count overflows");
    }
    if (infer >= 0) {
        if (allowzero && known == 0)
            return RESHAPE_FAIL("-1 together with a 0 dimension under allowzero");
        if (known == 0 || x->numel % known != 0)
            return RESHAPE_FAIL("the -1 dimension cannot be inferred");
        shape[infer] = x->numel / known;
    } else if (known != x->numel) {
        return RESHAPE_FAIL("the element counts differ");
    }
#undef RESHAPE_FAIL
    return reshaped(x, nd, shape, ctx, out);
}

/* ------------------------------------------------------------ Squeeze, Unsqueeze */

/* The axes of (Un)Squeeze: an attribute before opset 13, an input after.
 * *count is -1 when none are given. */
static nc_status get_axes(const nc_node *n, const nc_tensor *const *in, int n_in, const char *op,
                          int64_t *axes, int *count)
{
    *count = -1;
    if (n->opset < 13) {
        const int64_t *v;
        int k = nc_attr_ints(n, "axes", &v);
        if (k > NC_MAX_DIMS)
            return nc_errorf(NC_ERR_LIMIT, "%s: %d axes, more than the %d supported", op, k,
                             NC_MAX_DIMS);
        if (k >= 0) {
            memcpy(axes, v, (size_t)k * sizeof *axes);
            *count = k;
        }
        return NC_OK;
    }
    if (n_in > 1 && in[1])
        return read_ints(in[1], op, "axes", axes, NC_MAX_DIMS, count);
    return NC_OK;
}

nc_status nc_op_squeeze(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_input(in, n_in, 0, "Squeeze", "data");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int64_t axes[NC_MAX_DIMS];
    int k;
    if ((st = get_axes(n, in, n_in, "Squeeze", axes, &k)) != NC_OK)
        return st;
    char drop[NC_MAX_DIMS] = {0};
    char s[160];
    if (k < 0) {
        for (int d = 0; d < x->ndim; d++)
            drop[d] = x->shape[d] == 1;
    }
    for (int i = 0; i < k; i++) {
        int64_t a;
        if (!norm_axis(axes[i], x->ndim, &a))
            return nc_errorf(NC_ERR_MODEL, "Squeeze: axis %lld is out of range for shape %s",
                             (long long)axes[i], shp(x, s, sizeof s));
        if (drop[a])
            return nc_errorf(NC_ERR_MODEL, "Squeeze: axis %lld is given twice", (long long)axes[i]);
        if (x->shape[a] != 1)
            return nc_errorf(NC_ERR_SHAPE, "Squeeze: axis %lld of shape %s is not 1",
                             (long long)axes[i], shp(x, s, sizeof s));
        drop[a] = 1;
    }
    int64_t shape[NC_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++)
        if (!drop[d])
            shape[nd++] = x->shape[d];
    return reshaped(x, nd, shape, ctx, out);
}

nc_status nc_op_unsqueeze(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                          int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_input(in, n_in, 0, "Unsqueeze", "data");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int64_t axes[NC_MAX_DIMS];
    int k;
    if ((st = get_axes(n, in, n_in, "Unsqueeze", axes, &k)) != NC_OK)
        return st;
    if (k < 0)
        return nc_errorf(NC_ERR_MODEL, "Unsqueeze: 'axes' is missing");
    int nd = x->ndim + k;
    if (nd > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_LIMIT, "Unsqueeze: the output would have %d dimensions, more than "
                                       "the %d supported", nd, NC_MAX_DIMS);
    char ins[NC_MAX_DIMS] = {0};
    for (int i = 0; i < k; i++) {
        int64_t a;
        /* negative axes count from the back of the output */
        if (!norm_axis(axes[i], nd, &a))
            return nc_errorf(NC_ERR_MODEL, "Unsqueeze: axis %lld is out of range for a %d-D output",
                             (long long)axes[i], nd);
        if (ins[a])
            return nc_errorf(NC_ERR_MODEL, "Unsqueeze: axis %lld is given twice",
                             (long long)axes[i]);
        ins[a] = 1;
    }
    int64_t shape[NC_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++)
        shape[d] = ins[d] ? 1 : x->shape[j++];
    return reshaped(x, nd, shape, ctx, out);
}

/* ------------------------------------------------------------ Concat */

nc_status nc_op_concat(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                       int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    char s1[160], s2[160];
    nc_status st;
    if ((st = need_input(in, n_in, 0, "Concat", "inputs")) != NC_OK)
        return st;
    const nc_tensor *x0 = in[0];
    int r = x0->ndim;
    if (r == 0)
        return nc_errorf(NC_ERR_SHAPE, "Concat: inputs must have at least one dimension");
    const nc_attr *aa = nc_node_attr(n, "axis");
    if (!aa || aa->type != NC_ATTR_INT)
        return nc_errorf(NC_ERR_MODEL, "Concat: the 'axis' attribute is missing");
    int64_t axis;
    if (!norm_axis(aa->i, r, &axis))
        return nc_errorf(NC_ERR_MODEL, "Concat: axis %lld is out of range for %d-D inputs",
                         (long long)aa->i, r);
    int64_t shape[NC_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[axis] = 0;
    for (int i = 0; i < n_in; i++) {
        if (!in[i])
            return nc_errorf(NC_ERR_MODEL, "Concat: input %d is missing", i);
        const nc_tensor *x = in[i];
        if (x->dtype != x0->dtype)
            return nc_errorf(NC_ERR_UNSUPPORTED, "Concat: input %d is %s but input 0 is %s", i,
                             nc_dtype_name(x->dtype), nc_dtype_name(x0->dtype));
        int ok = x->ndim == r;
        for (int d = 0; ok && d < r; d++)
            ok = d == axis || x->shape[d] == x0->shape[d];
        if (!ok)
            return nc_errorf(NC_ERR_SHAPE, "Concat: input %d has shape %s, which does not match "
                             "input 0's %s outside axis %lld", i, shp(x, s1, sizeof s1),
                             shp(x0, s2, sizeof s2), (long long)axis);
        shape[axis] += x->shape[axis];
    }
    nc_tensor *o;
    if ((st = new_out(x0->dtype, r, shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (!o->numel || skip_float(ctx, o->dtype))
        return NC_OK;
    size_t es = nc_dtype_size(o->dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < axis)
            outer *= shape[d];
        else if (d > axis)
            inner *= shape[d];
    }
    char *dst = o->data;
    for (int64_t a = 0; a < outer; a++)
        for (int i = 0; i < n_in; i++) {
            size_t chunk = (size_t)(in[i]->shape[axis] * inner) * es;
            if (chunk) {
                memcpy(dst, (const char *)in[i]->data + (size_t)a * chunk, chunk);
                dst += chunk;
            }
        }
    return NC_OK;
}

/* ------------------------------------------------------------ Shape, Gather */

nc_status nc_op_shape(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                      int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out; (void)ctx;
    nc_status st = need_input(in, n_in, 0, "Shape", "data");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int64_t r = x->ndim;
    /* opset 15: a [start, end) window of the dims, clamped to the rank */
    int64_t start = n->opset >= 15 ? nc_attr_int(n, "start", 0) : 0;
    int64_t end = n->opset >= 15 ? nc_attr_int(n, "end", r) : r;
    if (start < 0)
        start += r;
    if (end < 0)
        end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    int64_t len = end > start ? end - start : 0;
    nc_tensor *o;
    if ((st = new_out(NC_DTYPE_I64, 1, &len, &o)) != NC_OK)
        return st;
    for (int64_t i = 0; i < len; i++)
        nc_i64(o)[i] = x->shape[start + i];
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_gather(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                       int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    char s[160];
    nc_status st;
    if ((st = need_input(in, n_in, 0, "Gather", "data")) != NC_OK ||
        (st = need_input(in, n_in, 1, "Gather", "indices")) != NC_OK)
        return st;
    const nc_tensor *x = in[0], *ix = in[1];
    if (ix->dtype != NC_DTYPE_I64)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Gather: indices must be int64, got %s",
                         nc_dtype_name(ix->dtype));
    if (x->ndim == 0)
        return nc_errorf(NC_ERR_SHAPE, "Gather: data must have at least one dimension");
    int64_t axis;
    int64_t a0 = nc_attr_int(n, "axis", 0);
    if (!norm_axis(a0, x->ndim, &axis))
        return nc_errorf(NC_ERR_MODEL, "Gather: axis %lld is out of range for data of shape %s",
                         (long long)a0, shp(x, s, sizeof s));
    int nd = x->ndim - 1 + ix->ndim;
    if (nd > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_LIMIT, "Gather: the output would have %d dimensions, more than "
                                       "the %d supported", nd, NC_MAX_DIMS);
    int64_t dim = x->shape[axis];
    const int64_t *idx = nc_i64(ix);
    for (int64_t j = 0; j < ix->numel; j++)
        if (idx[j] < -dim || idx[j] >= dim)
            return nc_errorf(NC_ERR_INVALID_ARG, "Gather: index %lld is out of range for axis "
                             "%lld of data shape %s", (long long)idx[j], (long long)axis,
                             shp(x, s, sizeof s));
    int64_t shape[NC_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++)
        shape[k++] = x->shape[d];
    for (int d = 0; d < ix->ndim; d++)
        shape[k++] = ix->shape[d];
    for (int d = (int)axis + 1; d < x->ndim; d++)
        shape[k++] = x->shape[d];
    nc_tensor *o;
    if ((st = new_out(x->dtype, nd, shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (!o->numel || skip_float(ctx, o->dtype))
        return NC_OK;
    /* a non-empty output means every data dim but `axis` is non-zero, and dim
     * itself is (an index exists), so these products stay within data's numel */
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d < axis)
            outer *= x->shape[d];
        else if (d > axis)
            inner *= x->shape[d];
    }
    size_t row = (size_t)inner * nc_dtype_size(x->dtype);
    char *dst = o->data;
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < ix->numel; j++) {
            int64_t i = idx[j] < 0 ? idx[j] + dim : idx[j];
            memcpy(dst, (const char *)x->data + (size_t)(a * dim + i) * row, row);
            dst += row;
        }
    return NC_OK;
}

/* ------------------------------------------------------------ Slice */

nc_status nc_op_slice(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                      int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    char s[160];
    nc_status st = need_input(in, n_in, 0, "Slice", "data");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int r = x->ndim;
    int64_t starts[NC_MAX_DIMS], ends[NC_MAX_DIMS], axes[NC_MAX_DIMS], steps[NC_MAX_DIMS];
    int ns, ne, na = -1, nst = -1;
    if (n->opset < 10) {
        const int64_t *v;
        ns = nc_attr_ints(n, "starts", &v);
        if (ns >= 0 && ns <= NC_MAX_DIMS)
            memcpy(starts, v, (size_t)ns * sizeof *v);
        ne = nc_attr_ints(n, "ends", &v);
        if (ne >= 0 && ne <= NC_MAX_DIMS)
            memcpy(ends, v, (size_t)ne * sizeof *v);
        na = nc_attr_ints(n, "axes", &v);
        if (na >= 0 && na <= NC_MAX_DIMS)
            memcpy(axes, v, (size_t)na * sizeof *v);
        if (ns < 0 || ne < 0)
            return nc_errorf(NC_ERR_MODEL,
                             "Slice: the 'starts' and 'ends' attributes are required");
        if (ns > NC_MAX_DIMS || ne > NC_MAX_DIMS || na > NC_MAX_DIMS)
            return nc_errorf(NC_ERR_LIMIT, "Slice: more than %d axes", NC_MAX_DIMS);
    } else {
        if ((st = need_input(in, n_in, 1, "Slice", "starts")) != NC_OK ||
            (st = need_input(in, n_in, 2, "Slice", "ends")) != NC_OK ||
            (st = read_ints(in[1], "Slice", "starts", starts, NC_MAX_DIMS, &ns)) != NC_OK ||
            (st = read_ints(in[2], "Slice", "ends", ends, NC_MAX_DIMS, &ne)) != NC_OK)
            return st;
        if (n_in > 3 && in[3] &&
            (st = read_ints(in[3], "Slice", "axes", axes, NC_MAX_DIMS, &na)) != NC_OK)
            return st;
        if (n_in > 4 && in[4] &&
            (st = read_ints(in[4], "Slice", "steps", steps, NC_MAX_DIMS, &nst)) != NC_OK)
            return st;
    }
    if (ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
        return nc_errorf(NC_ERR_MODEL, "Slice: starts, ends, axes and steps differ in length "
                         "(%d, %d, %d, %d)", ns, ne, na, nst);
    /* per dim of x: first index, step and count; untouched dims take everything */
    int64_t first[NC_MAX_DIMS], step[NC_MAX_DIMS], shape[NC_MAX_DIMS];
    char seen[NC_MAX_DIMS] = {0};
    for (int d = 0; d < r; d++) {
        first[d] = 0;
        step[d] = 1;
        shape[d] = x->shape[d];
    }
    for (int i = 0; i < ns; i++) {
        int64_t a;
        int64_t ai = na >= 0 ? axes[i] : i;
        if (!norm_axis(ai, r, &a))
            return nc_errorf(NC_ERR_MODEL, "Slice: axis %lld is out of range for data of shape %s",
                             (long long)ai, shp(x, s, sizeof s));
        if (seen[a])
            return nc_errorf(NC_ERR_MODEL, "Slice: axis %lld is given twice", (long long)ai);
        seen[a] = 1;
        int64_t dim = x->shape[a], stp = nst >= 0 ? steps[i] : 1;
        if (stp == 0)
            return nc_errorf(NC_ERR_MODEL, "Slice: step 0 on axis %lld", (long long)ai);
        int64_t b = starts[i], e = ends[i];
        if (b < 0)
            b += dim;
        if (e < 0)
            e += dim;
        int64_t len;
        if (stp > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
            len = e > b ? 1 + (e - b - 1) / stp : 0;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            /* |step| without negating INT64_MIN */
            uint64_t mag = (uint64_t)(-(stp + 1)) + 1;
            len = b > e ? 1 + (int64_t)((uint64_t)(b - e - 1) / mag) : 0;
        }
        first[a] = len ? b : 0;
        step[a] = stp;
        shape[a] = len;
    }
    nc_tensor *o;
    if ((st = new_out(x->dtype, r, shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (!o->numel || skip_float(ctx, o->dtype))
        return NC_OK;
    size_t es = nc_dtype_size(x->dtype);
    int64_t stride[NC_MAX_DIMS], idx[NC_MAX_DIMS] = {0};
    int64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= x->shape[d];
    }
    /* odometer over the output, tracking the source offset */
    int64_t off = 0;
    for (int d = 0; d < r; d++)
        off += first[d] * stride[d];
    char *dst = o->data;
    for (int64_t i = 0; i < o->numel; i++) {
        memcpy(dst + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) {
                off += step[d] * stride[d];
                break;
            }
            off -= (shape[d] - 1) * step[d] * stride[d];
            idx[d] = 0;
        }
    }
    return NC_OK;
}

/* ------------------------------------------------------------ Cast */

/* ONNX TensorProto.DataType codes */
enum {
    ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4, ONNX_INT16 = 5,
    ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_STRING = 8, ONNX_BOOL = 9, ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11, ONNX_UINT32 = 12, ONNX_UINT64 = 13, ONNX_BFLOAT16 = 16
};

static const char *onnx_type_name(int64_t t)
{
    switch (t) {
    case ONNX_STRING: return "STRING";
    case ONNX_FLOAT16: return "FLOAT16";
    case ONNX_UINT64: return "UINT64";
    case 14: return "COMPLEX64";
    case 15: return "COMPLEX128";
    case ONNX_BFLOAT16: return "BFLOAT16";
    default: return "an unknown type";
    }
}

/* Two's-complement wrap of v to a `bits`-wide integer, like a C cast. */
static int64_t wrap_int(int64_t v, int bits, int is_signed)
{
    uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & m;
    if (is_signed && (u >> (bits - 1)))
        return -(int64_t)(m - u) - 1;
    return (int64_t)u;
}

/* float → int64 truncating toward zero; NaN and out-of-range values (undefined
 * in ONNX) give INT64_MIN as numpy does on x86, without C's undefined cast. */
static int64_t f2i(float v)
{
    if (!(v >= -9.2233720368547758e18f && v < 9.2233720368547758e18f))
        return INT64_MIN;
    return (int64_t)v;
}

nc_status nc_op_cast(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                     int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_input(in, n_in, 0, "Cast", "input");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    const nc_attr *ta = nc_node_attr(n, "to");
    if (!ta || ta->type != NC_ATTR_INT)
        return nc_errorf(NC_ERR_MODEL, "Cast: the 'to' attribute is missing");
    int64_t to = ta->i;
    int bits = 64, is_signed = 1, boolean = 0;
    nc_dtype dt;
    switch (to) {
    case ONNX_FLOAT:
    case ONNX_DOUBLE: dt = NC_DTYPE_F32; break;
    case ONNX_INT64: dt = NC_DTYPE_I64; break;
    case ONNX_INT32: dt = NC_DTYPE_I64; bits = 32; break;
    case ONNX_INT16: dt = NC_DTYPE_I64; bits = 16; break;
    case ONNX_INT8: dt = NC_DTYPE_I64; bits = 8; break;
    case ONNX_UINT32: dt = NC_DTYPE_I64; bits = 32; is_signed = 0; break;
    case ONNX_UINT16: dt = NC_DTYPE_I64; bits = 16; is_signed = 0; break;
    case ONNX_UINT8: dt = NC_DTYPE_I64; bits = 8; is_signed = 0; break;
    case ONNX_BOOL: dt = NC_DTYPE_I64; boolean = 1; break;
    default:
        return nc_errorf(NC_ERR_UNSUPPORTED, "Cast: target type %s (%lld) is not supported "
                         "(FLOAT, DOUBLE, INT64, INT32, INT16, INT8, UINT32, UINT16, UINT8 and "
                         "BOOL are)", onnx_type_name(to), (long long)to);
    }
    if (x->dtype != NC_DTYPE_F32 && x->dtype != NC_DTYPE_I64 && x->dtype != NC_DTYPE_U8)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Cast: input type %s is not supported",
                         nc_dtype_name(x->dtype));
    nc_tensor *o;
    if ((st = new_out(dt, x->ndim, x->shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, dt))
        return NC_OK;
    for (int64_t i = 0; i < x->numel; i++) {
        if (dt == NC_DTYPE_F32) {
            nc_f32(o)[i] = x->dtype == NC_DTYPE_F32 ? nc_f32(x)[i]
                         : x->dtype == NC_DTYPE_I64 ? (float)nc_i64(x)[i]
                                                    : (float)((const uint8_t *)x->data)[i];
            continue;
        }
        int64_t v;
        if (x->dtype == NC_DTYPE_F32) {
            float f = nc_f32(x)[i];
            v = boolean ? f != 0.0f : f2i(f);
        } else {
            v = x->dtype == NC_DTYPE_I64 ? nc_i64(x)[i] : ((const uint8_t *)x->data)[i];
            if (boolean)
                v = v != 0;
        }
        nc_i64(o)[i] = bits < 64 ? wrap_int(v, bits, is_signed) : v;
    }
    return NC_OK;
}
