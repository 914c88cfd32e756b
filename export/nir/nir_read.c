/* Reads NIR files (DESIGN §4): neuroc's own, losslessly through their
 * /neuroc group (layout in nir_write.c), and other tools' files with plain
 * NIR semantics:
 *  - nested NIRGraph subgraphs are inlined; their Input/Output nodes become
 *    pass-throughs and their nodes are named "<graph>.<node>";
 *  - several edges into one node are an implicit sum: an Add layer is put
 *    in front of it;
 *  - layers are ordered topologically ignoring back edges (found by a DFS
 *    from the Input node); a back edge becomes an input id >= the reading
 *    layer's own id, i.e. the previous step's value (snn_ir.h). Such edges
 *    only ever end at the inserted Add layers, as a node with a back edge
 *    always has a forward one too;
 *  - IF: spikes carry 1, v(0) = 0, reset from nc_nir_options; r must be 1
 *    (NIR's IF integrates r·I; neuroc has no input resistance), v_reset 0;
 *  - LIF / CubaLIF keep NIR's parameters, dt from the options;
 *  - Linear is an Affine with a zero bias, AvgPool2d a Pool2d with 1/k²;
 *  - a Scale node is only understood right after a spiking node (the form
 *    neuroc writes): it becomes that layer's spike value.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/data/h5io.h"
#include "nir_internal.h"
#include "snn/base/isolate.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/input_file.h"
#include "snn/ir/snn_ir.h"

void nir_node_clear(nnode *nd)
{
    nc_free(nd->name);
    for (int k = 0; k < MAXF; k++)
        nc_tensor_free(nd->f[k]);
    for (int k = 0; k < MAXI; k++)
        nc_tensor_free(nd->i[k]);
    memset(nd, 0, sizeof *nd);
}

static void rd_free(rd *R)
{
    for (int k = 0; k < R->n_nodes; k++)
        nir_node_clear(&R->nodes[k]);
    nc_free(R->nodes);
    nc_free(R->edges);
}

/* ---- node fields ---- */

static int field_index(const char *const *names, int max, const char *name)
{
    for (int k = 0; k < max && names[k]; k++)
        if (strcmp(names[k], name) == 0)
            return k;
    return -1;
}

static nc_tensor *fget(const nnode *nd, const char *name)
{
    int k = nd->spec ? field_index(nd->spec->f, MAXF, name) : -1;
    return k >= 0 ? nd->f[k] : NULL;
}

/* Moves a float field out of the node (the layer takes ownership). */
static nc_tensor *ftake(nnode *nd, const char *name)
{
    int k = nd->spec ? field_index(nd->spec->f, MAXF, name) : -1;
    nc_tensor *t = k >= 0 ? nd->f[k] : NULL;
    if (k >= 0)
        nd->f[k] = NULL;
    return t;
}

static nc_tensor *iget(const nnode *nd, const char *name)
{
    int k = nd->spec ? field_index(nd->spec->i, MAXI, name) : -1;
    return k >= 0 ? nd->i[k] : NULL;
}

static const nspec *find_spec(const char *type)
{
    for (size_t k = 0; k < sizeof SPECS / sizeof SPECS[0]; k++)
        if (strcmp(SPECS[k].type, type) == 0)
            return &SPECS[k];
    return NULL;
}

/* Before any of a node's float datasets is read, their declared sizes must
 * agree as the layer needs them to: a bias has a value per weight row, each
 * neuron parameter one per neuron (the count its fields agree on) or one
 * for all. A dataset declaring more is refused unread: a 1 MB file whose
 * v_threshold claimed 10^9 values made neuroc read 8 GB before it compared
 * them with the layer's 128 neurons. */
static nc_status check_field_sizes(hid_t g, const nspec *sp)
{
    int64_t n = -1;
    const char *by = NULL;
    for (int k = 0; k < MAXF && sp->f[k]; k++) {
        int nd;
        int64_t shape[NC_MAX_DIMS], numel;
        if (!nc_h5_exists(g, sp->f[k]))
            continue;
        nc_status st = nc_h5_shape(g, sp->f[k], &nd, shape);
        if (st != NC_OK)
            return st;
        if (!nc_numel_checked(nd, shape, &numel))
            return nc_errorf(NC_ERR_PARSE, "%s dataset '%s' declares a shape whose size overflows", sp->type, sp->f[k]);
        int weight = strcmp(sp->f[k], "weight") == 0;
        if (weight && nd < 1)
            continue; /* refused by name later */
        if (!weight && numel == 1)
            continue;
        int64_t here = weight ? shape[0] : numel;
        if (n < 0) {
            n = here;
            by = weight ? "weight rows" : sp->f[k];
        } else if (here != n) {
            return nc_errorf(NC_ERR_PARSE, "%s dataset '%s' declares %lld values, but the layer has %lld (%s): "
                             "refused before reading it", sp->type, sp->f[k], (long long)here, (long long)n, by);
        }
    }
    return NC_OK;
}

/* Reads the datasets of node group g of a known type. */
static nc_status load_fields(hid_t g, nnode *nd)
{
    const nspec *sp = nd->spec;
    nc_status st = check_field_sizes(g, sp);
    if (st != NC_OK)
        return st;
    for (int k = 0; k < MAXF && sp->f[k]; k++) {
        if (!nc_h5_exists(g, sp->f[k])) {
            if (sp->opt_f & BIT(k))
                continue;
            return nc_errorf(NC_ERR_PARSE, "%s dataset '%s' is missing", sp->type, sp->f[k]);
        }
        if ((st = nc_h5_read_f32(g, sp->f[k], &nd->f[k])) != NC_OK)
            return st;
    }
    for (int k = 0; k < MAXI && sp->i[k]; k++) {
        if (!nc_h5_exists(g, sp->i[k])) {
            if (sp->opt_i & BIT(k))
                continue;
            return nc_errorf(NC_ERR_PARSE, "%s dataset '%s' is missing", sp->type, sp->i[k]);
        }
        if ((sp->kind == K_CONV2D || sp->kind == K_CONV1D) && strcmp(sp->i[k], "padding") == 0 &&
            nc_h5_is_string(g, "padding")) {
            char *mode;
            if ((st = nc_h5_read_string(g, "padding", &mode)) != NC_OK)
                return st;
            int same = strcmp(mode, "same") == 0, valid = strcmp(mode, "valid") == 0;
            st = same || valid ? NC_OK
                               : nc_errorf(NC_ERR_UNSUPPORTED, "Conv2d padding '%s' (expected numbers, 'same' or 'valid')", mode);
            nc_free(mode);
            if (st != NC_OK)
                return st;
            int64_t two = 2;
            if (!(nd->i[k] = nc_tensor_new(NC_DTYPE_I64, 1, &two)))
                return NC_ERR_NOMEM;
            nd->pad_same = same;
            continue;
        }
        if ((st = nc_h5_read_i64(g, sp->i[k], &nd->i[k])) != NC_OK)
            return st;
    }
    return NC_OK;
}

/* Opens node group `local` under gnodes and reads its type and fields. A
 * NIRGraph is reported through *is_graph and left to the caller. Errors
 * name the node (`full`). */
nc_status nir_load_node(hid_t gnodes, const char *local, const char *full, nnode *nd, int *is_graph)
{
    *is_graph = 0;
    if (!nc_h5_is_group(gnodes, local))
        return nc_errorf(NC_ERR_PARSE, "not an HDF5 group");
    hid_t g = H5Gopen2(gnodes, local, H5P_DEFAULT);
    if (g < 0)
        return nc_errorf(NC_ERR_PARSE, "group could not be opened");
    char *type = NULL;
    nc_status st;
    if (!nc_h5_exists(g, "type"))
        st = nc_errorf(NC_ERR_PARSE, "no 'type' dataset");
    else
        st = nc_h5_read_string(g, "type", &type);
    if (st == NC_OK) {
        if (strcmp(type, "NIRGraph") == 0) {
            *is_graph = 1;
        } else if (!(nd->spec = find_spec(type))) {
            if (nir_ext_type(type))
                st = nc_errorf(NC_ERR_UNSUPPORTED, "node '%s' is a neuroc extension node ('%s', a layer NIR cannot "
                               "express): it is read only from a file with its /neuroc group of format %d to %d, "
                               "which this file lacks", full, type, NC_NIR_NEUROC_FORMAT_MIN, NC_NIR_NEUROC_FORMAT);
            else
                st = nc_errorf(NC_ERR_UNSUPPORTED, "unsupported NIR node type '%s' in node '%s'", type, full);
            nc_free(type);
            H5Gclose(g);
            return st;
        } else {
            nd->kind = nd->spec->kind;
            st = load_fields(g, nd);
        }
    }
    if (st != NC_OK)
        nc_error_prefix("node '%s'", full);
    nc_free(type);
    H5Gclose(g);
    return st;
}

/* ---- flattening the graph ---- */

static int add_node(rd *R, const char *name)
{
    if (R->n_nodes >= NC_NIR_MAX_NODES) {
        nc_errorf(NC_ERR_LIMIT, "more than %d NIR nodes", NC_NIR_MAX_NODES);
        return -1;
    }
    if (R->n_nodes == R->cap_nodes) {
        int cap = R->cap_nodes ? 2 * R->cap_nodes : 32;
        nnode *n = nc_realloc(R->nodes, (size_t)cap * sizeof *n);
        if (!n) {
            nc_errorf(NC_ERR_NOMEM, "out of memory");
            return -1;
        }
        R->nodes = n;
        R->cap_nodes = cap;
    }
    nnode *nd = &R->nodes[R->n_nodes];
    memset(nd, 0, sizeof *nd);
    if (!(nd->name = nc_strdup(name))) {
        nc_errorf(NC_ERR_NOMEM, "out of memory");
        return -1;
    }
    nd->layer = -1;
    return R->n_nodes++;
}

static nc_status add_edge(rd *R, int a, int b)
{
    if (R->n_edges >= NC_NIR_MAX_EDGES)
        return nc_errorf(NC_ERR_LIMIT, "%s: more than %d NIR edges", R->path, NC_NIR_MAX_EDGES);
    if (R->n_edges == R->cap_edges) {
        int64_t cap = R->cap_edges ? 2 * R->cap_edges : 64;
        nedge *e = nc_realloc(R->edges, (size_t)cap * sizeof *e);
        if (!e)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        R->edges = e;
        R->cap_edges = cap;
    }
    R->edges[R->n_edges++] = (nedge){a, b, 0};
    return NC_OK;
}

/* Adds the bytes of node nd's tensors to the model's total: a file of
 * many tensors, each within the tensor limit, is bounded as a whole. */
static nc_status count_bytes(rd *R, const nnode *nd)
{
    for (int k = 0; k < MAXF + MAXI; k++) {
        const nc_tensor *t = k < MAXF ? nd->f[k] : nd->i[k - MAXF];
        if (t)
            R->total_bytes += t->numel * (int64_t)nc_dtype_size(t->dtype);
    }
    int64_t max = nc_limits_now().max_model_bytes;
    if (R->total_bytes > max)
        return nc_errorf(NC_ERR_LIMIT, "the network's tensors exceed the model size limit of %lld bytes "
                         "(nc_limits.max_model_bytes)", (long long)max);
    return NC_OK;
}

/* Name of the i-th link of a group (by name order) into *out; caller frees. */
static nc_status link_name(hid_t g, hsize_t i, char **out)
{
    *out = NULL;
    ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, NULL, 0, H5P_DEFAULT);
    if (len < 0)
        return nc_errorf(NC_ERR_PARSE, "unreadable node name");
    nc_status st = nc_check_string_len("a node name", (size_t)len);
    if (st != NC_OK)
        return st;
    char *s = nc_malloc((size_t)len + 1);
    if (!s)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, s, (size_t)len + 1, H5P_DEFAULT) < 0) {
        nc_free(s);
        return nc_errorf(NC_ERR_PARSE, "unreadable node name");
    }
    *out = s;
    return NC_OK;
}

typedef struct local_name {
    char *name;
    int src, dst; /* node an edge leaves from / arrives at for this name */
} local_name;

static int find_local(const local_name *ln, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcmp(ln[k].name, name) == 0)
            return k;
    return -1;
}

static nc_status read_graph(rd *R, hid_t g, const char *prefix, int depth, int *sub_in, int *sub_out);

/* Reads the nodes of graph g into R and fills ln (one per child). */
static nc_status read_children(rd *R, hid_t gnodes, const char *prefix, int depth, local_name *ln,
                               int n, int *n_in, int *n_out, int *sub_in, int *sub_out)
{
    nc_status st = NC_OK;
    for (int k = 0; k < n && st == NC_OK; k++) {
        char *local;
        if ((st = link_name(gnodes, (hsize_t)k, &local)) != NC_OK) {
            nc_error_prefix("%s: graph '%s'", R->path, prefix ? prefix : "/node");
            return st;
        }
        ln[k].name = local;
        size_t len = strlen(local) + (prefix ? strlen(prefix) + 1 : 0) + 1;
        char *full = nc_malloc(len);
        if (!full)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        snprintf(full, len, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", local);
        nnode tmp;
        memset(&tmp, 0, sizeof tmp);
        int is_graph;
        st = nir_load_node(gnodes, local, full, &tmp, &is_graph);
        if (st == NC_OK && is_graph) {
            int max_depth = nc_limits_now().max_graph_depth;
            if (depth + 1 > max_depth) {
                st = nc_errorf(NC_ERR_LIMIT, "subgraphs nested deeper than %d (nc_limits.max_graph_depth)",
                               max_depth);
            } else {
                hid_t sub = H5Gopen2(gnodes, local, H5P_DEFAULT);
                int si = -1, so = -1;
                st = read_graph(R, sub, full, depth + 1, &si, &so);
                H5Gclose(sub);
                ln[k].src = so;
                ln[k].dst = si;
                nc_free(full);
                continue; /* errors inside carry their own context */
            }
        }
        if (st != NC_OK) {
            nc_error_prefix("%s", R->path);
            nir_node_clear(&tmp);
            nc_free(full);
            return st;
        }
        if ((st = count_bytes(R, &tmp)) != NC_OK) {
            nc_error_prefix("%s: node '%s'", R->path, full);
            nir_node_clear(&tmp);
            nc_free(full);
            return st;
        }
        int idx = add_node(R, full);
        nc_free(full);
        if (idx < 0) {
            nir_node_clear(&tmp);
            return NC_ERR_NOMEM;
        }
        char *name = R->nodes[idx].name;
        R->nodes[idx] = tmp;
        R->nodes[idx].name = name;
        R->nodes[idx].layer = -1;
        if (depth > 0 && (tmp.kind == K_INPUT || tmp.kind == K_OUTPUT)) {
            if (tmp.kind == K_INPUT) {
                ++*n_in;
                *sub_in = idx;
            } else {
                ++*n_out;
                *sub_out = idx;
            }
            R->nodes[idx].kind = K_PASS;
        }
        ln[k].src = ln[k].dst = idx;
    }
    return st;
}

static nc_status read_edges(rd *R, hid_t g, const char *prefix, const local_name *ln, int n)
{
    const char *gname = prefix ? prefix : "the top-level graph";
    if (!nc_h5_exists(g, "edges"))
        return nc_errorf(NC_ERR_PARSE, "%s: %s%s%s has no 'edges' dataset", R->path, prefix ? "graph '" : "",
                         gname, prefix ? "'" : "");
    int ndim;
    int64_t shape[NC_MAX_DIMS], ns;
    char **s;
    nc_status st = nc_h5_read_strings(g, "edges", &ndim, shape, &ns, &s);
    if (st != NC_OK) {
        nc_error_prefix("%s: %s", R->path, gname);
        return st;
    }
    if (!(ns == 0 || (ndim == 2 && shape[1] == 2))) {
        nc_h5_free_strings(s, ns);
        return nc_errorf(NC_ERR_PARSE, "%s: edges of %s must be an (N, 2) array of names", R->path, gname);
    }
    for (int64_t e = 0; st == NC_OK && e < ns / 2; e++) {
        const char *a = s[2 * e], *b = s[2 * e + 1];
        int ia = find_local(ln, n, a), ib = find_local(ln, n, b);
        if (ia < 0 || ib < 0) {
            st = nc_errorf(NC_ERR_MODEL, "%s: edge ('%s', '%s') in %s%s%s refers to missing node '%s'", R->path, a, b,
                           prefix ? "graph '" : "", gname, prefix ? "'" : "", ia < 0 ? a : b);
            break;
        }
        if (ln[ia].src < 0 || ln[ib].dst < 0)
            st = nc_errorf(NC_ERR_INTERNAL, "%s: subgraph endpoints unresolved", R->path);
        else
            st = add_edge(R, ln[ia].src, ln[ib].dst);
    }
    nc_h5_free_strings(s, ns);
    return st;
}

/* Reads a NIRGraph group: its nodes (recursively) and edges. For a
 * subgraph, *sub_in / *sub_out get its Input and Output pass-throughs. */
static nc_status read_graph(rd *R, hid_t g, const char *prefix, int depth, int *sub_in, int *sub_out)
{
    if (g < 0 || !nc_h5_is_group(g, "nodes"))
        return nc_errorf(NC_ERR_PARSE, "%s: graph '%s' has no 'nodes' group", R->path, prefix ? prefix : "/node");
    hid_t gnodes = H5Gopen2(g, "nodes", H5P_DEFAULT);
    H5G_info_t info;
    if (gnodes < 0 || H5Gget_info(gnodes, &info) < 0) {
        if (gnodes >= 0)
            H5Gclose(gnodes);
        return nc_errorf(NC_ERR_PARSE, "%s: unreadable 'nodes' group", R->path);
    }
    if (info.nlinks > NC_NIR_MAX_NODES) {
        H5Gclose(gnodes);
        return nc_errorf(NC_ERR_LIMIT, "%s: more than %d NIR nodes", R->path, NC_NIR_MAX_NODES);
    }
    int n = (int)info.nlinks, n_in = 0, n_out = 0;
    local_name *ln = nc_calloc((size_t)(n > 0 ? n : 1), sizeof *ln);
    nc_status st = ln ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st == NC_OK)
        st = read_children(R, gnodes, prefix, depth, ln, n, &n_in, &n_out, sub_in, sub_out);
    H5Gclose(gnodes);
    if (st == NC_OK && depth > 0 && (n_in != 1 || n_out != 1))
        st = nc_errorf(NC_ERR_UNSUPPORTED, "%s: subgraph '%s' has %d Input and %d Output nodes; exactly one of "
                       "each is supported", R->path, prefix, n_in, n_out);
    if (st == NC_OK)
        st = read_edges(R, g, prefix, ln, n);
    for (int k = 0; ln && k < n; k++)
        nc_free(ln[k].name);
    nc_free(ln);
    return st;
}

/* Replaces each pass-through p by edges from every node feeding p to every
 * node p feeds. */
static nc_status remove_pass_nodes(rd *R)
{
    for (int p = 0; p < R->n_nodes; p++) {
        if (R->nodes[p].kind != K_PASS)
            continue;
        int64_t n0 = R->n_edges;
        for (int64_t e1 = 0; e1 < n0; e1++) {
            if (R->edges[e1].b != p || R->edges[e1].a == p)
                continue;
            for (int64_t e2 = 0; e2 < n0; e2++) {
                if (R->edges[e2].a != p || R->edges[e2].b == p)
                    continue;
                nc_status st = add_edge(R, R->edges[e1].a, R->edges[e2].b);
                if (st != NC_OK)
                    return st;
            }
        }
        int64_t w = 0;
        for (int64_t e = 0; e < R->n_edges; e++)
            if (R->edges[e].a != p && R->edges[e].b != p)
                R->edges[w++] = R->edges[e];
        R->n_edges = w;
    }
    return NC_OK;
}

/* ---- ordering ---- */

/* DFS from the Input node: marks back edges and returns the nodes in
 * reverse postorder (a topological order of the forward edges). */
static nc_status order_nodes(rd *R, const int *inputs, int n_inputs, int **order_out, int *n_order)
{
    int n = R->n_nodes;
    int64_t m = R->n_edges;
    int64_t *start = nc_calloc((size_t)n + 1, sizeof *start);
    int64_t *adj = nc_malloc((size_t)(m > 0 ? m : 1) * sizeof *adj);
    int64_t *next = nc_malloc((size_t)n * sizeof *next);
    int *stack = nc_malloc((size_t)n * sizeof *stack), *post = nc_malloc((size_t)n * sizeof *post);
    unsigned char *color = nc_calloc((size_t)n, 1);
    nc_status st = NC_OK;
    if (!start || !adj || !next || !stack || !post || !color) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int64_t e = 0; e < m; e++)
        start[R->edges[e].a + 1]++;
    for (int k = 0; k < n; k++)
        start[k + 1] += start[k];
    for (int k = 0; k < n; k++)
        next[k] = start[k];
    for (int64_t e = 0; e < m; e++)
        adj[next[R->edges[e].a]++] = e; /* edges of each node in file order */
    for (int k = 0; k < n; k++)
        next[k] = start[k];
    int sp = 0, np = 0;
    for (int r = n_inputs - 1; r >= 0; r--) { /* every Input a root; the first's nodes come first */
    int input = inputs[r];
    if (color[input])
        continue;
    stack[sp++] = input;
    color[input] = 1;
    while (sp > 0) {
        int u = stack[sp - 1];
        if (next[u] == start[u + 1]) {
            color[u] = 2;
            post[np++] = u;
            sp--;
            continue;
        }
        int64_t e = adj[next[u]++];
        int v = R->edges[e].b;
        if (color[v] == 1)
            R->edges[e].back = 1;
        else if (color[v] == 0) {
            color[v] = 1;
            stack[sp++] = v;
        }
    }
    }
    for (int k = 0; k < n; k++)
        if (!color[k] && R->nodes[k].kind != K_PASS) {
            st = nc_errorf(NC_ERR_MODEL, "%s: node '%s' cannot be reached from the Input node", R->path,
                           R->nodes[k].name);
            goto done;
        }
    for (int k = 0; k < np / 2; k++) {
        int t = post[k];
        post[k] = post[np - 1 - k];
        post[np - 1 - k] = t;
    }
    *order_out = post;
    *n_order = np;
    post = NULL;
done:
    nc_free(start);
    nc_free(adj);
    nc_free(next);
    nc_free(stack);
    nc_free(post);
    nc_free(color);
    return st;
}

/* ---- layers ---- */

static nc_status pair(const nc_tensor *t, const char *what, int64_t out[2])
{
    if (!t || (t->numel != 1 && t->numel != 2))
        return nc_errorf(NC_ERR_SHAPE, "'%s' must hold 1 or 2 integers", what);
    out[0] = nc_i64(t)[0];
    out[1] = nc_i64(t)[t->numel - 1];
    return NC_OK;
}

static nc_status scalar_i64(const nc_tensor *t, const char *what, int64_t *out)
{
    if (!t || t->numel != 1)
        return nc_errorf(NC_ERR_SHAPE, "'%s' must be one integer", what);
    *out = nc_i64(t)[0];
    return NC_OK;
}

static int all_equal(const nc_tensor *t, float v)
{
    for (int64_t k = 0; t && k < t->numel; k++)
        if (nc_f32(t)[k] != v)
            return 0;
    return 1;
}

static nc_tensor *scalar_tensor(float v)
{
    int64_t one = 1;
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, 1, &one);
    if (t)
        nc_f32(t)[0] = v;
    return t;
}

/* NaN in any neuron tensor, or in a Scale's factors: refused whichever
 * half of the reader read them (the /neuroc group's values replace the
 * NIR node's after check_finite saw those). */
static nc_status no_nan(const nc_snn_layer *L)
{
    const nc_tensor *ts[] = {L->threshold, L->v_init, L->spike_value, L->tau, L->r, L->v_leak, L->tau_syn,
                             L->w_in, L->v_reset, L->kind == NC_SNN_SCALE ? L->weight : NULL};
    static const char *const names[] = {"threshold", "v_init", "spike_value", "tau", "r", "v_leak", "tau_syn",
                                        "w_in", "v_reset", "scale"};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        for (int64_t i = 0; ts[k] && i < ts[k]->numel; i++)
            if (isnan(nc_f32(ts[k])[i]))
                return nc_errorf(NC_ERR_MODEL, "layer '%s': %s holds NaN", L->name, names[k]);
    if (L->dt != 0 && !(L->dt > 0 && isfinite(L->dt)))
        return nc_errorf(NC_ERR_MODEL, "layer '%s': dt %g must be a positive number of seconds", L->name, L->dt);
    return NC_OK;
}

/* A layer read: no NaN (a file's fault, where a builder's NaN means "the
 * default"), then the IR's own checks, which give it its shape. */
nc_status nir_finish_layer(nc_snn *s, int id, int total)
{
    nc_status st = no_nan(&s->layers[id]);
    return st != NC_OK ? st : nc_snn_layer_validate(s, id, total);
}

/* Recurrent inputs (into sums) must exist and match the sum's shape. */
nc_status nir_check_recurrent(const nc_snn *s)
{
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        for (int k = 0; k < L->n_inputs; k++) {
            if (L->inputs[k] < i)
                continue;
            if (L->inputs[k] >= s->n_layers)
                return nc_errorf(NC_ERR_MODEL, "layer '%s': input %d does not exist", L->name, L->inputs[k]);
            const nc_snn_layer *B = &s->layers[L->inputs[k]];
            int same = B->ndim == L->ndim;
            for (int d = 0; same && d < L->ndim; d++)
                same = B->shape[d] == L->shape[d];
            if (!same)
                return nc_errorf(NC_ERR_SHAPE, "recurrent input '%s' of '%s' has a different shape", B->name, L->name);
        }
    }
    return NC_OK;
}

nc_snn_layer_kind nir_layer_kind(nkind k)
{
    switch (k) {
    case K_AFFINE: case K_LINEAR: return NC_SNN_AFFINE;
    case K_CONV2D: case K_CONV1D: return NC_SNN_CONV2D;
    case K_LI: return NC_SNN_LI;
    case K_CUBALI: return NC_SNN_CUBALI;
    case K_I: return NC_SNN_INTEGRATOR;
    case K_THRESHOLD: return NC_SNN_THRESHOLD;
    case K_DELAY: return NC_SNN_DELAY;
    case K_SCALE: return NC_SNN_SCALE;
    case K_SUMPOOL: case K_AVGPOOL: return NC_SNN_POOL2D;
    case K_FLATTEN: return NC_SNN_FLATTEN;
    case K_IF: return NC_SNN_IF;
    case K_LIF: return NC_SNN_LIF;
    case K_CUBALIF: return NC_SNN_CUBALIF;
    default: return (nc_snn_layer_kind)-1;
    }
}

int nir_flatten_shape(int nd, const int64_t *in, int64_t start, int64_t end, int *ond, int64_t *out)
{
    if (nd == 0) { /* a scalar per sample: one value */
        *ond = 1;
        out[0] = 1;
        return 1;
    }
    if (start < 0)
        start += nd;
    if (end < 0)
        end += nd;
    if (start < 0 || end >= nd || start > end)
        return 0;
    int k = 0;
    for (int d = 0; d < start; d++)
        out[k++] = in[d];
    int64_t m = 1;
    for (int64_t d = start; d <= end; d++)
        m *= in[d];
    out[k++] = m;
    for (int64_t d = end + 1; d < nd; d++)
        out[k++] = in[d];
    *ond = k;
    return 1;
}

static int n_nonfinite(const nc_tensor *t, int allow_pinf)
{
    int n = 0;
    for (int64_t k = 0; t && k < t->numel; k++) {
        float v = nc_f32(t)[k];
        n += isnan(v) || (isinf(v) && !(allow_pinf && v > 0));
    }
    return n;
}

/* Non-finite parameters (DESIGN: refused or given their limit's meaning,
 * never NaN): NaN anywhere is refused; +∞ means its limit only where that
 * is defined: a threshold of +∞ never fires; τ = r = ∞ together (LIF,
 * CubaLIF, LI, CubaLI: r/τ = 1/dt, v += r·dt/τ·I = I, snntorch's β = 1),
 * τ_syn = w_in = ∞ together (I_syn += x, snntorch's α = 1). Everything
 * else must be finite (weights, biases, scales, v_leak, v_reset, delays). */
static nc_status check_finite(const nnode *nd, const nc_snn_layer *X)
{
    (void)X;
    const nspec *sp = nd->spec;
    for (int k = 0; sp && k < MAXF && sp->f[k]; k++) {
        const char *f = sp->f[k];
        int pinf = strcmp(f, "v_threshold") == 0 || strcmp(f, "threshold") == 0 || strcmp(f, "tau") == 0 ||
                   strcmp(f, "tau_mem") == 0 || strcmp(f, "r") == 0 || strcmp(f, "tau_syn") == 0 ||
                   strcmp(f, "w_in") == 0;
        if (nd->kind == K_IF || nd->kind == K_I)
            pinf = strcmp(f, "v_threshold") == 0;
        if (n_nonfinite(nd->f[k], pinf)) {
            int nan = 0;
            for (int64_t j = 0; nd->f[k] && j < nd->f[k]->numel; j++)
                nan |= isnan(nc_f32(nd->f[k])[j]);
            return nc_errorf(NC_ERR_MODEL, "%s '%s' holds %s: refused (only +inf has a meaning, and only for "
                             "v_threshold, or for tau and r together, tau_syn and w_in together)", sp->type, f,
                             nan ? "NaN" : "an infinity");
        }
    }
    const char *pairs[2][2] = {{nd->kind == K_LIF || nd->kind == K_LI ? "tau" : "tau_mem", "r"}, {"tau_syn", "w_in"}};
    int leaky = nd->kind == K_LIF || nd->kind == K_CUBALIF || nd->kind == K_LI || nd->kind == K_CUBALI;
    for (int p = 0; leaky && p < 2; p++) {
        const nc_tensor *a = fget(nd, pairs[p][0]), *b = fget(nd, pairs[p][1]);
        for (int64_t k = 0; a && b && k < a->numel && k < b->numel; k++) {
            float x = nc_f32(a)[k], y = nc_f32(b)[k];
            if (isinf(x) != isinf(y))
                return nc_errorf(NC_ERR_MODEL, "%s: %s = %g with %s = %g at neuron %lld: an infinite %s has a meaning "
                                 "only with an infinite %s (their ratio 1/dt: the leak-free limit); refused",
                                 sp->type, pairs[p][0], x, pairs[p][1], y, (long long)k, isinf(x) ? pairs[p][0] : pairs[p][1],
                                 isinf(x) ? pairs[p][1] : pairs[p][0]);
        }
    }
    return NC_OK;
}

/* Moves node nd's fields into layer L (input already set), with plain NIR
 * semantics for neurons. */
nc_status nir_apply_node(const rd *R, nnode *nd, const nc_snn *s, nc_snn_layer *L)
{
    nc_status st = NC_OK;
    const nc_snn_layer *X = L->n_inputs > 0 && L->inputs[0] >= 0 && L->inputs[0] < s->n_layers
                                 ? &s->layers[L->inputs[0]] : NULL;
    switch (nd->kind) {
    case K_AFFINE:
    case K_LINEAR:
        L->weight = ftake(nd, "weight");
        if (nd->kind == K_AFFINE)
            L->bias = ftake(nd, "bias");
        else if (L->weight && L->weight->ndim >= 1 && !(L->bias = nc_tensor_new(NC_DTYPE_F32, 1, L->weight->shape)))
            return NC_ERR_NOMEM;
        break;
    case K_CONV2D:
    case K_CONV1D: {
        L->weight = ftake(nd, "weight");
        L->bias = ftake(nd, "bias");
        if (nd->kind == K_CONV1D) { /* [C_out, C_in/g, k] → [C_out, C_in/g, 1, k] over (C, 1, L) */
            if (!L->weight || L->weight->ndim != 3)
                return nc_errorf(NC_ERR_SHAPE, "Conv1d weight has rank %d; expected 3 ([C_out, C_in/groups, k])",
                                 L->weight ? L->weight->ndim : 0);
            int64_t sh[4] = {L->weight->shape[0], L->weight->shape[1], 1, L->weight->shape[2]};
            nc_tensor_reshape_inplace(L->weight, 4, sh);
            int64_t one[2] = {0, 0};
            if ((st = pair(iget(nd, "stride"), "stride", one)) != NC_OK)
                return st;
            L->stride[0] = 1, L->stride[1] = one[0];
            if ((st = pair(iget(nd, "padding"), "padding", one)) != NC_OK)
                return st;
            L->padding[0] = 0, L->padding[1] = one[0];
            if ((st = pair(iget(nd, "dilation"), "dilation", one)) != NC_OK)
                return st;
            L->dilation[0] = 1, L->dilation[1] = one[0];
            if ((st = scalar_i64(iget(nd, "groups"), "groups", &L->groups)) != NC_OK)
                return st;
            if (nd->pad_same) {
                int64_t total = L->dilation[1] * (L->weight->shape[3] - 1);
                if (L->stride[1] != 1 || total % 2)
                    return nc_errorf(NC_ERR_UNSUPPORTED, "Conv1d padding 'same' needs stride 1 and an even padding total");
                L->padding[1] = total / 2;
            }
            const nc_tensor *is = iget(nd, "input_shape");
            if (is && X && X->ndim == 3 && (is->numel != 1 || nc_i64(is)[0] != X->shape[2]))
                return nc_errorf(NC_ERR_SHAPE, "Conv1d input_shape does not match its input '%s'", X->name);
            break;
        }
        if ((st = pair(iget(nd, "stride"), "stride", L->stride)) != NC_OK ||
            (st = pair(iget(nd, "padding"), "padding", L->padding)) != NC_OK ||
            (st = pair(iget(nd, "dilation"), "dilation", L->dilation)) != NC_OK ||
            (st = scalar_i64(iget(nd, "groups"), "groups", &L->groups)) != NC_OK)
            return st;
        if (nd->pad_same) {
            for (int k = 0; k < 2 && L->weight && L->weight->ndim == 4; k++) {
                int64_t total = L->dilation[k] * (L->weight->shape[2 + k] - 1);
                if (L->stride[k] != 1 || total % 2)
                    return nc_errorf(NC_ERR_UNSUPPORTED, "Conv2d padding 'same' needs stride 1 and an even padding total");
                L->padding[k] = total / 2;
            }
        }
        const nc_tensor *is = iget(nd, "input_shape");
        if (is && X && X->ndim == 3 && (is->numel != 2 || nc_i64(is)[0] != X->shape[1] || nc_i64(is)[1] != X->shape[2]))
            return nc_errorf(NC_ERR_SHAPE, "Conv2d input_shape does not match its input '%s'", X->name);
        break;
    }
    case K_SUMPOOL:
    case K_AVGPOOL:
        if ((st = pair(iget(nd, "kernel_size"), "kernel_size", L->kernel)) != NC_OK ||
            (st = pair(iget(nd, "stride"), "stride", L->stride)) != NC_OK ||
            (st = pair(iget(nd, "padding"), "padding", L->padding)) != NC_OK)
            return st;
        L->scale = nd->kind == K_AVGPOOL && L->kernel[0] > 0 && L->kernel[1] > 0
                       ? 1.0f / (float)(L->kernel[0] * L->kernel[1]) : 1.0f;
        break;
    case K_FLATTEN: {
        int64_t start = 0, end = -1;
        if ((st = scalar_i64(iget(nd, "start_dim"), "start_dim", &start)) != NC_OK ||
            (st = scalar_i64(iget(nd, "end_dim"), "end_dim", &end)) != NC_OK)
            return st;
        const nc_tensor *it = iget(nd, "input_type");
        int64_t n_it = 1;
        for (int64_t k = 0; it && k < it->numel; k++)
            n_it = nc_i64(it)[k] > 0 && n_it <= INT64_MAX / nc_i64(it)[k] ? n_it * nc_i64(it)[k] : -1;
        if (it && X && n_it != nc_snn_layer_size(X))
            return nc_errorf(NC_ERR_SHAPE, "Flatten input_type does not match its input '%s'", X->name);
        if (X && !nir_flatten_shape(X->ndim, X->shape, start, end, &L->ndim, L->shape))
            return nc_errorf(NC_ERR_SHAPE, "Flatten from dim %lld to %lld of a rank-%d input", (long long)start,
                             (long long)end, X->ndim);
        break;
    }
    case K_IF:
    case K_LIF:
    case K_CUBALIF:
    case K_LI:
    case K_CUBALI:
    case K_I: {
        int spiking = nd->kind == K_IF || nd->kind == K_LIF || nd->kind == K_CUBALIF;
        if ((st = check_finite(nd, X)) != NC_OK)
            return st;
        if (nd->kind == K_IF || nd->kind == K_I) {
            L->r = ftake(nd, "r");
            if (all_equal(L->r, 1.0f)) { /* neuroc's IF: no input resistance */
                nc_tensor_free(L->r);
                L->r = NULL;
            }
            if (nd->kind == K_IF && (!(L->v_init = scalar_tensor(0.0f)) || !(L->spike_value = scalar_tensor(1.0f))))
                return nc_errorf(NC_ERR_NOMEM, "out of memory");
            L->dt = R->opt.dt > 0 ? R->opt.dt : 1e-4;
        } else {
            L->tau = ftake(nd, nd->kind == K_LIF || nd->kind == K_LI ? "tau" : "tau_mem");
            L->r = ftake(nd, "r");
            L->v_leak = ftake(nd, "v_leak");
            L->tau_syn = ftake(nd, "tau_syn");
            L->w_in = ftake(nd, "w_in");
            L->dt = R->opt.dt > 0 ? R->opt.dt : 1e-4;
            L->exact = R->opt.integration == NC_INTEGRATION_EXACT;
        }
        if (spiking) {
            L->threshold = ftake(nd, "v_threshold");
            L->spike_gt = R->opt.spike != NC_SPIKE_GE;
            if (R->opt.reset == NC_RESET_SUBTRACT) {
                L->reset = NC_RESET_SUBTRACT;
                L->pretest_sub = R->opt.snntorch_subtract != 0;
            } else {
                L->reset = NC_RESET_ZERO;
                L->v_reset = ftake(nd, "v_reset");
                if (all_equal(L->v_reset, 0.0f)) {
                    nc_tensor_free(L->v_reset);
                    L->v_reset = NULL;
                }
            }
        } else {
            L->reset = NC_RESET_ZERO;
        }
        break;
    }
    case K_THRESHOLD:
        if ((st = check_finite(nd, X)) != NC_OK)
            return st;
        L->threshold = ftake(nd, "threshold");
        L->spike_gt = R->opt.spike != NC_SPIKE_GE;
        break;
    case K_SCALE:
        if ((st = check_finite(nd, X)) != NC_OK)
            return st;
        L->weight = ftake(nd, "scale");
        break;
    case K_DELAY: {
        if ((st = check_finite(nd, X)) != NC_OK)
            return st;
        double dt = R->opt.dt > 0 ? R->opt.dt : 1e-4;
        int64_t *steps = NULL, m = 0;
        if ((st = nir_delay_steps(nd, dt, &steps, &m)) != NC_OK)
            return st;
        L->kernel[0] = steps[0]; /* one delay: several are build_layers' (nir_delay.c) */
        L->dt = dt;
        nc_free(steps);
        if (m != 1)
            return nc_errorf(NC_ERR_INTERNAL, "Delay of %lld delays as one layer", (long long)m);
        break;
    }
    default:
        return nc_errorf(NC_ERR_INTERNAL, "node kind %d has no layer", (int)nd->kind);
    }
    return st;
}

/* Number of edges into node v, and of them the first. */
static int in_degree(const rd *R, int v, int64_t *first)
{
    int k = 0;
    *first = -1;
    for (int64_t e = 0; e < R->n_edges; e++)
        if (R->edges[e].b == v) {
            if (k++ == 0)
                *first = e;
        }
    return k;
}

static int out_degree(const rd *R, int v)
{
    int k = 0;
    for (int64_t e = 0; e < R->n_edges; e++)
        k += R->edges[e].a == v;
    return k;
}

/* 1 if Scale node v is the sole reader of a spiking node that reads
 * nothing else: it becomes that node's spike value (the form neuroc
 * writes). Another Scale is a Scale layer. */
static int scale_is_spike_value(const rd *R, int v)
{
    int64_t first;
    if (in_degree(R, v, &first) != 1 || R->edges[first].back)
        return 0;
    const nnode *src = &R->nodes[R->edges[first].a];
    return (src->kind == K_IF || src->kind == K_LIF || src->kind == K_CUBALIF) &&
           out_degree(R, R->edges[first].a) == 1;
}

/* Gives every node the id of the layer that will hold its output. */
static nc_status assign_layers(rd *R, const int *order, int n_order, int *total)
{
    int next = 0;
    for (int k = 0; k < n_order; k++) {
        int v = order[k];
        nnode *nd = &R->nodes[v];
        int64_t first;
        int deg = in_degree(R, v, &first);
        if (nd->kind == K_INPUT) {
            next += next == 0 && R->n_in > 1; /* layer 0 holds them all; each is a Reshape of its part */
            nd->layer = next++;
        } else if (nd->kind == K_SCALE && scale_is_spike_value(R, v)) {
            nd->layer = R->nodes[R->edges[first].a].layer;
        } else if (nd->kind == K_OUTPUT) {
            nd->layer = deg >= 2 ? next++ : R->nodes[R->edges[first].a].layer;
        } else {
            next += deg >= 2;
            next += nd->kind == K_CONV1D ? 2 : 0; /* Reshape to (C, 1, L), Conv2d, Reshape back */
            int64_t delays = nd->kind == K_DELAY ? nir_delay_count(nd, R->opt.dt > 0 ? R->opt.dt : 1e-4) : 1;
            next += delays > 1 ? (int)(2 * delays) : 0; /* a Delay and a Scale per delay, then their Add */
            nd->layer = next++;
        }
    }
    *total = next;
    return NC_OK;
}

/* A Conv1d's Reshape: (C, L) → (C, 1, L) before it (to_2d), (C, 1, L) →
 * (C, L) after it, named "<node><suffix>", reading layer `from`. */
static nc_status conv1d_reshape(nc_snn *s, const char *node, const char *suffix, int from, int total, int to_2d)
{
    const nc_snn_layer *X = &s->layers[from];
    if (to_2d ? X->ndim != 2 : X->ndim != 3)
        return nc_errorf(NC_ERR_SHAPE, "Conv1d: input '%s' must be (C, L), it has rank %d", X->name, X->ndim);
    int64_t sh[3] = {X->shape[0], to_2d ? 1 : X->shape[2], X->shape[to_2d ? 1 : 2]};
    char name[512];
    snprintf(name, sizeof name, "%.500s%s", node, suffix);
    nc_snn_layer *L = nc_snn_append_unique(s, NC_SNN_RESHAPE, name, 1);
    if (!L)
        return NC_ERR_NOMEM;
    L->inputs[0] = from;
    L->ndim = to_2d ? 3 : 2;
    memcpy(L->shape, sh, sizeof sh);
    if (!to_2d)
        L->shape[1] = sh[2];
    return nir_finish_layer(s, s->n_layers - 1, total);
}

static nc_status build_layers(rd *R, const int *order, int n_order, int total, nc_snn **out)
{
    nc_snn *s = NULL;
    nc_status st = NC_OK;
    int *srcs = NULL;
    for (int k = 0; k < n_order && st == NC_OK; k++) {
        int v = order[k];
        nnode *nd = &R->nodes[v];
        int64_t first;
        int deg = in_degree(R, v, &first);
        if (nd->kind == K_INPUT && R->n_in > 1) {
            const nc_tensor *sh = iget(nd, "shape");
            if (deg > 0)
                st = nc_errorf(NC_ERR_MODEL, "the Input node has incoming edges");
            else if (!sh || sh->ndim > 1 || sh->numel < 1 || sh->numel > NC_MAX_DIMS)
                st = nc_errorf(NC_ERR_SHAPE, "Input shape must list 1 to %d dimensions", NC_MAX_DIMS);
            else if (!s && (st = nc_snn_create(1, &R->in_total, &s)) == NC_OK) {
                char *nm = nc_strdup("inputs");
                if (!nm)
                    st = nc_errorf(NC_ERR_NOMEM, "out of memory");
                else {
                    nc_free(s->layers[0].name);
                    s->layers[0].name = nm;
                }
            }
            nc_snn_layer *L = st == NC_OK ? nc_snn_append_unique(s, NC_SNN_RESHAPE, nd->name, 1) : NULL;
            if (st == NC_OK && !L)
                st = NC_ERR_NOMEM;
            if (st == NC_OK) {
                L->inputs[0] = 0;
                L->io_part = NC_IO_INPUT_PART;
                L->kernel[0] = nd->in_off;
                L->ndim = (int)sh->numel;
                memcpy(L->shape, nc_i64(sh), (size_t)sh->numel * sizeof(int64_t));
                st = nir_finish_layer(s, s->n_layers - 1, total);
            }
            if (st != NC_OK)
                nc_error_prefix("%s: node '%s'", R->path, nd->name);
            continue;
        }
        if (nd->kind == K_INPUT) {
            const nc_tensor *sh = iget(nd, "shape");
            if (deg > 0)
                st = nc_errorf(NC_ERR_MODEL, "the Input node has incoming edges");
            else if (!sh || sh->ndim > 1 || sh->numel < 1 || sh->numel > NC_MAX_DIMS)
                st = nc_errorf(NC_ERR_SHAPE, "Input shape must list 1 to %d dimensions", NC_MAX_DIMS);
            else if ((st = nc_snn_create((int)sh->numel, nc_i64(sh), &s)) == NC_OK) {
                char *nm = nc_strdup(nd->name);
                if (!nm)
                    st = nc_errorf(NC_ERR_NOMEM, "out of memory");
                else {
                    nc_free(s->layers[0].name);
                    s->layers[0].name = nm;
                }
            }
            if (st != NC_OK)
                nc_error_prefix("%s: node '%s'", R->path, nd->name);
            continue;
        }
        if (!s) {
            st = nc_errorf(NC_ERR_INTERNAL, "%s: the Input node is not first", R->path);
            break;
        }
        nc_free(srcs);
        srcs = nc_malloc((size_t)(deg > 0 ? deg : 1) * sizeof *srcs);
        if (!srcs) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        int n = 0;
        for (int64_t e = first; e >= 0 && e < R->n_edges; e++)
            if (R->edges[e].b == v)
                srcs[n++] = R->nodes[R->edges[e].a].layer;
        int sv_scale = nd->kind == K_SCALE && scale_is_spike_value(R, v);
        if (sv_scale) {
            nc_snn_layer *N = &s->layers[nd->layer];
            nc_tensor_free(N->spike_value);
            N->spike_value = ftake(nd, "scale");
            st = nc_snn_check_param(N->spike_value, N, "Scale");
        } else if (deg >= 2) {
            char base[512];
            snprintf(base, sizeof base, "%.500s.sum", nd->name);
            nc_snn_layer *A = nc_snn_append_unique(s, NC_SNN_ADD, base, deg);
            if (!A)
                st = NC_ERR_NOMEM;
            else {
                memcpy(A->inputs, srcs, (size_t)deg * sizeof *srcs);
                st = nir_finish_layer(s, s->n_layers - 1, total);
                srcs[0] = s->n_layers - 1;
            }
        }
        if (st == NC_OK && nd->kind == K_OUTPUT) {
            const nc_tensor *sh = iget(nd, "shape");
            const nc_snn_layer *O = &s->layers[srcs[0]];
            int64_t n_sh = 1;
            for (int64_t d = 0; sh && d < sh->numel; d++)
                n_sh = nc_i64(sh)[d] > 0 && n_sh <= INT64_MAX / nc_i64(sh)[d] ? n_sh * nc_i64(sh)[d] : -1;
            if (deg > 0 && out_degree(R, v) > 0)
                st = nc_errorf(NC_ERR_MODEL, "the Output node has outgoing edges");
            else if (!sh || sh->ndim > 1 || n_sh != nc_snn_layer_size(O))
                st = nc_errorf(NC_ERR_SHAPE, "Output shape does not match the %lld values of '%s'",
                               (long long)nc_snn_layer_size(O), O->name);
            else
                s->output = srcs[0];
        } else if (st == NC_OK && !sv_scale) {
            double dt = R->opt.dt > 0 ? R->opt.dt : 1e-4;
            int several = nd->kind == K_DELAY && nir_delay_count(nd, dt) > 1;
            if (nd->kind == K_CONV1D) /* (C, L) → (C, 1, L): the Conv2d of a 1 × k kernel runs it */
                st = conv1d_reshape(s, nd->name, ".2d", srcs[0], total, 1);
            if (st == NC_OK && several)
                st = nir_delay_layers(s, nd, dt, srcs[0], total);
            else if (st == NC_OK) {
                char cname[512];
                snprintf(cname, sizeof cname, "%.500s%s", nd->name, nd->kind == K_CONV1D ? ".conv2d" : "");
                nc_snn_layer *L = nc_snn_append_unique(s, nir_layer_kind(nd->kind), cname, 1);
                if (!L)
                    st = NC_ERR_NOMEM;
                else {
                    L->inputs[0] = nd->kind == K_CONV1D ? s->n_layers - 2 : srcs[0];
                    st = nir_apply_node(R, nd, s, L);
                    if (st == NC_OK && nd->kind == K_FLATTEN && L->ndim != 1)
                        L->kind = NC_SNN_RESHAPE; /* a partial Flatten: only the shape changes */
                    if (st == NC_OK)
                        st = nir_finish_layer(s, s->n_layers - 1, total);
                }
            }
            if (st == NC_OK && nd->kind == K_CONV1D)
                st = conv1d_reshape(s, nd->name, "", s->n_layers - 1, total, 0);
        }
        if (st == NC_OK && !sv_scale && nd->kind != K_OUTPUT && s->n_layers - 1 != nd->layer)
            st = nc_errorf(NC_ERR_INTERNAL, "layer numbering went wrong at '%s'", nd->name);
        if (st != NC_OK)
            nc_error_prefix("%s: node '%s'", R->path, nd->name);
    }
    nc_free(srcs);
    if (st == NC_OK && (st = nir_check_recurrent(s)) != NC_OK)
        nc_error_prefix("%s", R->path);
    if (st != NC_OK) {
        nc_snn_free(s);
        return st;
    }
    *out = s;
    return NC_OK;
}

/* Several Output nodes: the network's output is their values, each
 * flattened, one after another in the order of the nodes' names (a
 * Reshape to one dimension where needed, then a Concat). */
static nc_status join_outputs(rd *R, nc_snn *s)
{
    int n = 0;
    for (int k = 0; k < R->n_nodes; k++)
        n += R->nodes[k].kind == K_OUTPUT;
    int *ids = nc_malloc((size_t)n * sizeof *ids);
    if (!ids)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = NC_OK;
    int j = 0;
    for (int k = 0; st == NC_OK && k < R->n_nodes; k++) {
        const nnode *nd = &R->nodes[k];
        if (nd->kind != K_OUTPUT)
            continue;
        int id = nd->layer;
        if (s->layers[id].ndim != 1) {
            char name[512];
            snprintf(name, sizeof name, "%.500s.flat", nd->name);
            nc_snn_layer *L = nc_snn_append_unique(s, NC_SNN_RESHAPE, name, 1);
            if (!L) {
                st = NC_ERR_NOMEM;
                break;
            }
            L->inputs[0] = id;
            L->io_part = NC_IO_OUTPUT_FLAT;
            L->ndim = 1;
            L->shape[0] = nc_snn_layer_size(&s->layers[id]);
            id = s->n_layers - 1;
            st = nir_finish_layer(s, id, s->n_layers);
        }
        ids[j++] = id;
    }
    if (st == NC_OK) {
        nc_snn_layer *C = nc_snn_append_unique(s, NC_SNN_CONCAT, "outputs", n);
        if (C && (C->part_names = nc_calloc((size_t)n, sizeof *C->part_names)))
            for (int k = 0, j2 = 0; k < R->n_nodes; k++)
                if (R->nodes[k].kind == K_OUTPUT && !(C->part_names[j2++] = nc_strdup(R->nodes[k].name)))
                    C = NULL;
        if (!C || !C->part_names)
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        else {
            C->io_part = NC_IO_OUTPUTS;
            memcpy(C->inputs, ids, (size_t)n * sizeof *ids);
            if ((st = nir_finish_layer(s, s->n_layers - 1, s->n_layers)) == NC_OK)
                s->output = s->n_layers - 1;
        }
    }
    nc_free(ids);
    if (st != NC_OK)
        nc_error_prefix("%s: joining %d Output nodes", R->path, n);
    return st;
}

static nc_status read_plain(rd *R, hid_t f, nc_snn **out)
{
    if (!nc_h5_is_group(f, "node"))
        return nc_errorf(NC_ERR_PARSE, "%s: no '/node' group (not a NIR file)", R->path);
    hid_t g = H5Gopen2(f, "node", H5P_DEFAULT);
    char *type = NULL;
    nc_status st = nc_h5_exists(g, "type") ? nc_h5_read_string(g, "type", &type)
                                           : nc_errorf(NC_ERR_PARSE, "no 'type' dataset");
    if (st != NC_OK)
        nc_error_prefix("%s: /node", R->path);
    else if (strcmp(type, "NIRGraph") != 0)
        st = nc_errorf(NC_ERR_UNSUPPORTED, "%s: the top-level node is a '%s'; expected a NIRGraph", R->path, type);
    nc_free(type);
    int dummy_in, dummy_out;
    if (st == NC_OK)
        st = read_graph(R, g, NULL, 0, &dummy_in, &dummy_out);
    H5Gclose(g);
    if (st == NC_OK)
        st = remove_pass_nodes(R);
    if (st != NC_OK)
        return st;
    int n_in = 0, n_out = 0;
    for (int k = 0; k < R->n_nodes; k++) {
        n_in += R->nodes[k].kind == K_INPUT;
        n_out += R->nodes[k].kind == K_OUTPUT;
    }
    if (n_in == 0)
        return nc_errorf(NC_ERR_MODEL, "%s: the graph has no Input node", R->path);
    if (n_out == 0)
        return nc_errorf(NC_ERR_MODEL, "%s: the graph has no Output node", R->path);
    int *inputs = nc_malloc((size_t)n_in * sizeof *inputs);
    if (!inputs)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int k = 0, j = 0; k < R->n_nodes; k++)
        if (R->nodes[k].kind == K_INPUT)
            inputs[j++] = k;
    R->n_in = n_in;
    for (int j = 0; j < n_in && n_in > 1; j++) { /* several: their values one after another, by name */
        nnode *nd = &R->nodes[inputs[j]];
        const nc_tensor *sh = iget(nd, "shape");
        int64_t n = 1;
        for (int64_t d = 0; sh && d < sh->numel; d++)
            n = nc_i64(sh)[d] > 0 && n <= INT32_MAX / nc_i64(sh)[d] ? n * nc_i64(sh)[d] : -1;
        if (!sh || n < 1 || R->in_total > INT32_MAX - n) {
            nc_free(inputs);
            return nc_errorf(NC_ERR_SHAPE, "%s: node '%s': Input shape must list positive dimensions", R->path,
                             nd->name);
        }
        nd->in_off = R->in_total;
        R->in_total += n;
    }
    int *order = NULL, n_order = 0, total = 0;
    if ((st = order_nodes(R, inputs, n_in, &order, &n_order)) == NC_OK &&
        (st = assign_layers(R, order, n_order, &total)) == NC_OK)
        st = build_layers(R, order, n_order, total, out);
    if (st == NC_OK && n_out > 1 && (st = join_outputs(R, *out)) != NC_OK) {
        nc_snn_free(*out);
        *out = NULL;
    }
    nc_free(inputs);
    nc_free(order);
    return st;
}

typedef struct preflight_args {
    const char *path;
    const nc_nir_options *opt;
} preflight_args;

/* The whole read, in the isolating child (snn/base/isolate.h). */
static nc_status preflight_load(void *arg)
{
    const preflight_args *a = arg;
    nc_snn *s = NULL;
    nc_status st = nc_snn_load_nir(a->path, a->opt, &s);
    nc_snn_free(s);
    return st;
}

/* neuroc reads NIR 1.x (nir 1.0.x writes "1.0.x"; older files have none).
 * Only running out of memory is an error here: a version that cannot be
 * read is the reader's to report where it matters. */
static nc_status warn_version(hid_t f, const char *path)
{
    char *v = NULL;
    nc_status st = nc_h5_exists(f, "version") ? nc_h5_read_string(f, "version", &v) : NC_OK;
    /* 0.x (files of the nir package before 1.0, as norse and sinabs wrote
       them) and 1.x are what neuroc reads; a later major version may mean
       fields neuroc does not know */
    char *end = NULL;
    long major = v ? strtol(v, &end, 10) : 0;
    if (st == NC_OK && v && (end == v || *end != '.' || major < 0 || major > 1))
        nc_log(NC_LOG_WARN, "%s: NIR version '%.40s' is not 0.x or 1.x, the versions neuroc reads: read as 1.x",
               path, v);
    nc_free(v);
    if (st == NC_ERR_NOMEM)
        nc_error_prefix("%s", path);
    return st == NC_ERR_NOMEM ? st : NC_OK;
}

nc_status nc_snn_load_nir(const char *path, const nc_nir_options *opt, nc_snn **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: out is NULL");
    *out = NULL;
    if (!path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: path is NULL");
    int64_t fsize;
    nc_status ist = nc_input_check(path, &fsize);
    if (ist != NC_OK)
        return ist;
    int64_t max_model = nc_limits_now().max_model_bytes;
    if (fsize > max_model)
        return nc_errorf(NC_ERR_LIMIT, "%s: the file's %lld bytes exceed the model size limit of %lld bytes "
                         "(nc_limits.max_model_bytes)", path, (long long)fsize, (long long)max_model);
    rd R;
    memset(&R, 0, sizeof R);
    R.path = path;
    if (opt)
        R.opt = *opt;
    if (R.opt.reset != NC_RESET_DEFAULT && R.opt.reset != NC_RESET_SUBTRACT && R.opt.reset != NC_RESET_ZERO)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: unknown reset mode %d", (int)R.opt.reset);
    if (R.opt.spike != NC_SPIKE_DEFAULT && R.opt.spike != NC_SPIKE_GT && R.opt.spike != NC_SPIKE_GE)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: unknown spike test %d", (int)R.opt.spike);
    if (R.opt.snntorch_subtract && R.opt.reset != NC_RESET_SUBTRACT)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: snntorch_subtract goes with reset NC_RESET_SUBTRACT");
    if (R.opt.integration != NC_INTEGRATION_EULER && R.opt.integration != NC_INTEGRATION_EXACT)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: unknown integration %d", (int)R.opt.integration);
    if (!(R.opt.dt >= 0 && R.opt.dt < 1e6))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_load_nir: dt %g must be a positive number of seconds (0: 1e-4)",
                         R.opt.dt);
    preflight_args pa = {path, opt};
    nc_status pst = nc_isolated_preflight(path, preflight_load, &pa);
    if (pst != NC_OK)
        return pst;
    nc_h5_quiet q;
    nc_h5_quiet_begin(&q);
    nc_status st;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    htri_t is_hdf5 = H5Fis_hdf5(path); /* 0: not HDF5; < 0: HDF5 failed to tell */
    hid_t f = is_hdf5 > 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : H5I_INVALID_HID;
    /* read before H5Pclose clears the error stack; a failure that left the
       stack empty (or HDF5 unable to make one) could not allocate even its
       error record: a memory cap */
    int oom = f < 0 && is_hdf5 != 0 && (nc_h5_out_of_memory() || (is_hdf5 < 0 && H5Eget_num(H5E_DEFAULT) <= 0));
    if (fapl >= 0)
        H5Pclose(fapl);
    if (f < 0) {
        st = oom ? nc_errorf(NC_ERR_NOMEM, "%s: out of memory opening the HDF5 file", path)
                 : nc_errorf(NC_ERR_PARSE, "%s: bad NIR file: not an HDF5 file, or truncated", path);
    } else {
        if ((st = warn_version(f, path)) == NC_OK) {
            int format = nir_neuroc_usable(f);
            st = format ? nir_read_neuroc(&R, f, format, out) : read_plain(&R, f, out);
        }
        if (st == NC_OK && (st = nc_snn_check_finite(*out, path)) != NC_OK) {
            nc_snn_free(*out);
            *out = NULL;
        }
        H5Fclose(f);
    }
    nc_h5_quiet_end(&q);
    rd_free(&R);
    return st;
}

void nc_nir_options_init(nc_nir_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->reset = NC_RESET_DEFAULT;
    o->dt = 1e-4;
    o->spike = NC_SPIKE_DEFAULT;
    o->integration = NC_INTEGRATION_EULER;
}
