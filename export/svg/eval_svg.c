/* The evaluation chart: a self-contained SVG (no scripts, no external fonts
 * or styles) with accuracy against t, the ANN as a dashed line, accuracy
 * against the energy of steps 1..t (the ANN as a point), and the spike rate
 * of every spiking layer as horizontal bars. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/session/eval.h"

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) NC_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *q = nc_realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* Text with XML's special characters escaped; at most `max` characters,
 * an ellipsis marking a cut (counted in bytes of UTF-8 lead characters). */
static void sb_text(sbuf *b, const char *s, int max)
{
    int shown = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c & 0xC0) != 0x80 && ++shown > max) {
            sb_printf(b, "\xE2\x80\xA6"); /* … */
            return;
        }
        switch (*c) {
        case '&': sb_printf(b, "&amp;"); break;
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default:
            if (*c >= 0x20 || *c == '\t')
                sb_printf(b, "%c", *c);
        }
    }
}

/* A "nice" tick step (1, 2 or 5 × 10^k) giving about `n` ticks over span. */
static double nice_step(double span, int n)
{
    double raw = span / n, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

/* ---------------------------------------------------------------- layout */

#define WIDTH 760
#define FONT "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\""
#define C_SNN "#1f77b4"
#define C_ANN "#d62728"
#define C_BAR "#2ca02c"
#define C_GRID "#e3e3e3"
#define C_AXIS "#333333"

typedef struct xaxis {
    int log2;
    int T;
    double x0, x1;
} xaxis;

static double xpos(const xaxis *a, double t)
{
    if (a->T <= 1)
        return (a->x0 + a->x1) / 2;
    double f = a->log2 ? log2(t) / log2((double)a->T) : (t - 1) / (double)(a->T - 1);
    return a->x0 + f * (a->x1 - a->x0);
}

static int is_pow2(int t) { return t > 0 && (t & (t - 1)) == 0; }

/* The accuracy axis of both accuracy panels: [*lo, *hi] in whole steps of
 * *ystep, at least one step wide, within 0..100, holding the SNN at every t
 * and the ANN (ann < 0: none). */
static void accuracy_range(const nc_eval_result *r, double ann, double *lo_out, double *hi_out, double *ystep_out)
{
    double lo = 100.0, hi = 0.0;
    for (int t = 1; t <= r->T; t++) {
        double a = nc_eval_result_accuracy_at(r, t) * 100.0;
        lo = fmin(lo, a);
        hi = fmax(hi, a);
    }
    if (ann >= 0) {
        lo = fmin(lo, ann);
        hi = fmax(hi, ann);
    }
    /* a range of whole tick steps, at least 1 point wide, within 0..100 */
    double ystep = nice_step(fmax(hi - lo, 1.0), 6);
    /* half a point of room, so that no line sits on the frame */
    lo = fmax(0.0, floor((lo - 0.5) / ystep) * ystep);
    hi = fmin(100.0, ceil((hi + 0.5) / ystep) * ystep);
    if (hi - lo < ystep) {
        if (hi >= 100.0)
            lo = hi - ystep;
        else
            hi = lo + ystep;
    }
    *lo_out = lo;
    *hi_out = hi;
    *ystep_out = ystep;
}

/* Horizontal grid lines and labelled ticks of the accuracy axis. */
static void accuracy_ticks(sbuf *b, double lo, double hi, double ystep, double x0, double x1, double y0, double y1)
{
    for (double a = lo; a <= hi + 1e-9; a += ystep) {
        double y = y1 - (a - lo) / (hi - lo) * (y1 - y0);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_GRID "\"/>\n", x0, y,
                  x1, y);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_AXIS "\"/>\n",
                  x0 - 5, y, x0, y);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">%g</text>\n", x0 - 8,
                  y + 4, a);
    }
    sb_printf(b, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"13\">accuracy (%%)</text>\n", x0 - 48, (y0 + y1) / 2);
}

static void accuracy_panel(sbuf *b, const nc_eval_result *r, double top)
{
    const double x0 = 78, x1 = WIDTH - 28, y0 = top + 58, y1 = top + 318;
    double ann = nc_eval_result_ann_accuracy(r) * 100.0, lo, hi, ystep;
    accuracy_range(r, ann, &lo, &hi, &ystep);
#define YPOS(a) (y1 - ((a) - lo) / (hi - lo) * (y1 - y0))
    xaxis ax = {.log2 = r->T >= 16, .T = r->T, .x0 = x0, .x1 = x1};

    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">"
                 "Accuracy against timesteps</text>\n", WIDTH / 2, top + 26);
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">"
                 "%lld samples, T = %d, prediction = argmax of the readout summed over steps 1..t</text>\n",
              WIDTH / 2, top + 44, (long long)r->n, r->T);
    accuracy_ticks(b, lo, hi, ystep, x0, x1, y0, y1);
    /* x ticks: powers of two on a log axis, a nice step on a linear one */
    int step = r->T <= 12 ? 1 : (int)nice_step((double)r->T, 8);
    for (int t = 1; t <= r->T; t++) {
        int tick = ax.log2 ? (is_pow2(t) || t == r->T) : (t == 1 || t % step == 0 || t == r->T);
        if (!tick)
            continue;
        /* keep a last non-round T from crowding the tick before it */
        if (t == r->T && t != 1 && (ax.log2 ? !is_pow2(t) : t % step != 0)) {
            int prev = ax.log2 ? 1 : (t / step) * step;
            while (ax.log2 && prev * 2 < t)
                prev *= 2;
            if (prev >= 1 && xpos(&ax, t) - xpos(&ax, prev) < 24)
                continue;
        }
        double x = xpos(&ax, t);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_GRID "\"/>\n", x, y0,
                  x, y1);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_AXIS "\"/>\n", x, y1,
                  x, y1 + 5);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%d</text>\n", x,
                  y1 + 19, t);
    }
    /* axes and their labels */
    sb_printf(b, "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"" C_AXIS "\"/>\n", x0, y0, y1, x1);
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">timestep t%s</text>\n",
              (x0 + x1) / 2, y1 + 40, ax.log2 ? " (log scale)" : "");
    /* the ANN */
    if (ann >= 0)
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_ANN "\" "
                     "stroke-width=\"2\" stroke-dasharray=\"8 5\"/>\n", x0, YPOS(ann), x1, YPOS(ann));
    /* the SNN: a polyline with markers (every step up to 64, else at powers of two) */
    sb_printf(b, "<polyline fill=\"none\" stroke=\"" C_SNN "\" stroke-width=\"2\" stroke-linejoin=\"round\" "
                 "points=\"");
    for (int t = 1; t <= r->T; t++)
        sb_printf(b, "%s%.1f,%.1f", t > 1 ? " " : "", xpos(&ax, t), YPOS(nc_eval_result_accuracy_at(r, t) * 100.0));
    sb_printf(b, "\"/>\n<g fill=\"" C_SNN "\">\n");
    for (int t = 1; t <= r->T; t++)
        if (r->T <= 64 || is_pow2(t) || t == r->T)
            sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>t = %d: %.2f %%</title></circle>\n",
                      xpos(&ax, t), YPOS(nc_eval_result_accuracy_at(r, t) * 100.0), r->T <= 32 ? "3.5" : "2.5", t,
                      nc_eval_result_accuracy_at(r, t) * 100.0);
    sb_printf(b, "</g>\n");
    /* legend: lower right, where rising curves leave room, unless the curves
     * pass through that corner and the upper right is free */
    int rows = ann >= 0 ? 2 : 1;
    double lw = 228, lh = 14 + 20 * rows, lx = x1 - lw - 10, ly = y1 - lh - 10;
    int low_hit = 0, high_hit = 0;
    for (int t = 1; t <= r->T; t++) {
        double x = xpos(&ax, t), y = YPOS(nc_eval_result_accuracy_at(r, t) * 100.0);
        if (x >= lx - 4 && x <= lx + lw + 4) {
            low_hit |= y >= ly - 4 && y <= ly + lh + 4;
            high_hit |= y >= y0 + 6 && y <= y0 + 14 + lh;
        }
    }
    if (ann >= 0) {
        low_hit |= YPOS(ann) >= ly - 4 && YPOS(ann) <= ly + lh + 4;
        high_hit |= YPOS(ann) >= y0 + 6 && YPOS(ann) <= y0 + 14 + lh;
    }
    if (low_hit && !high_hit)
        ly = y0 + 10;
    sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"white\" "
                 "fill-opacity=\"0.9\" stroke=\"#bbbbbb\"/>\n", lx, ly, lw, lh);
    double ry = ly + 17;
    sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_SNN "\" "
                 "stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"" C_SNN "\"/>\n",
              lx + 10, ry, lx + 40, ry, lx + 25, ry);
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">SNN (t = %d: %.2f %%)</text>\n", lx + 48, ry + 4,
              r->T, nc_eval_result_accuracy_at(r, r->T) * 100.0);
    if (ann >= 0) {
        ry += 20;
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_ANN "\" "
                     "stroke-width=\"2\" stroke-dasharray=\"8 5\"/>\n", lx + 10, ry, lx + 40, ry);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">ANN (%.2f %%)</text>\n", lx + 48, ry + 4,
                  ann);
    }
#undef YPOS
}

/* Accuracy against the energy of steps 1..t per inference, each t a point,
 * the ANN (its accuracy at its energy) a diamond: where the SNN is as good
 * as the ANN for less. Energy on a log axis when it spans more than 20×. */
static void energy_panel(sbuf *b, const nc_eval_result *r, double top)
{
    const double x0 = 78, x1 = WIDTH - 28, y0 = top + 58, y1 = top + 318;
    double ann = nc_eval_result_ann_accuracy(r) * 100.0, lo, hi, ystep;
    double e_ann = r->ann_macs >= 0 ? (double)r->ann_macs * r->e_mac : -1.0;
    accuracy_range(r, ann, &lo, &hi, &ystep);
    double emin = INFINITY, emax = 0;
    for (int t = 1; t <= r->T; t++) {
        double e = nc_eval_joules_through(r, t);
        emin = e > 0 ? fmin(emin, e) : emin;
        emax = fmax(emax, e);
    }
    if (e_ann > 0) {
        emin = fmin(emin, e_ann);
        emax = fmax(emax, e_ann);
    }
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">"
                 "Accuracy against energy</text>\n", WIDTH / 2, top + 26);
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" fill=\"#555\">"
                 "energy of steps 1..t per inference (estimate: %.2g pJ an addition, %.2g pJ a multiply-add)"
                 "</text>\n", WIDTH / 2, top + 44, r->e_synop * 1e12, r->e_mac * 1e12);
    if (!(emax > 0)) {
        sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">no synaptic operations"
                     "</text>\n", WIDTH / 2, (y0 + y1) / 2);
        return;
    }
    static const char *units[] = {"pJ", "nJ", "\xC2\xB5J", "mJ", "J"};
    int u = 0;
    while (u < 4 && emax >= 1e-12 * pow(1000.0, u + 1))
        u++;
    double scale = 1e-12 * pow(1000.0, u); /* joules per unit */
    int logx = emax / emin > 20;
    double xl = logx ? log10(emin / scale) : 0, xh = logx ? log10(emax / scale) : emax / scale;
    if (logx) { /* whole decades */
        xl = floor(xl);
        xh = ceil(xh);
    } else {
        double st = nice_step(xh, 6);
        xh = ceil(xh / st) * st;
    }
#define EPOS(e) (x0 + ((logx ? log10((e) / scale) : (e) / scale) - xl) / (xh - xl) * (x1 - x0))
#define YPOS(a) (y1 - ((a) - lo) / (hi - lo) * (y1 - y0))
    accuracy_ticks(b, lo, hi, ystep, x0, x1, y0, y1);
    if (logx) {
        for (double d = xl; d <= xh + 1e-9; d++)
            for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) { /* 1, 2, 5 × 10^d */
                double v = m * pow(10.0, d), x = x0 + (log10(v) - xl) / (xh - xl) * (x1 - x0);
                if (log10(v) > xh + 1e-9)
                    break;
                sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_GRID "\"/>\n",
                          x, y0, x, y1);
                sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%g</text>\n", x,
                          y1 + 19, v);
            }
    } else {
        double st = nice_step(xh, 6);
        for (double v = 0; v <= xh + 1e-9 * xh; v += st) {
            double x = x0 + v / xh * (x1 - x0);
            sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_GRID "\"/>\n", x,
                      y0, x, y1);
            sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%g</text>\n", x,
                      y1 + 19, v);
        }
    }
    sb_printf(b, "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"" C_AXIS "\"/>\n", x0, y0, y1, x1);
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">energy per inference (%s%s)"
                 "</text>\n", (x0 + x1) / 2, y1 + 40, units[u], logx ? ", log scale" : "");
    if (ann >= 0)
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_ANN "\" "
                     "stroke-dasharray=\"8 5\"/>\n", x0, YPOS(ann), x1, YPOS(ann));
    sb_printf(b, "<polyline fill=\"none\" stroke=\"" C_SNN "\" stroke-width=\"2\" points=\"");
    int first = 1;
    for (int t = 1; t <= r->T; t++) {
        double e = nc_eval_joules_through(r, t);
        if (logx && !(e > 0))
            continue;
        sb_printf(b, "%s%.1f,%.1f", first ? "" : " ", EPOS(e), YPOS(nc_eval_result_accuracy_at(r, t) * 100.0));
        first = 0;
    }
    sb_printf(b, "\"/>\n<g fill=\"" C_SNN "\">\n");
    for (int t = 1; t <= r->T; t++) {
        double e = nc_eval_joules_through(r, t);
        if ((logx && !(e > 0)) || !(r->T <= 64 || is_pow2(t) || t == r->T))
            continue;
        sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>t = %d: %.2f %% at %.4g %s</title></circle>\n",
                  EPOS(e), YPOS(nc_eval_result_accuracy_at(r, t) * 100.0), t,
                  nc_eval_result_accuracy_at(r, t) * 100.0, e / scale, units[u]);
    }
    sb_printf(b, "</g>\n");
    if (ann >= 0 && e_ann > 0) {
        double x = EPOS(e_ann), y = YPOS(ann);
        sb_printf(b, "<path d=\"M%.1f %.1f l7 7 l-7 7 l-7 -7 z\" fill=\"" C_ANN "\"><title>ANN: %.2f %% at %.4g %s"
                     "</title></path>\n", x, y - 7, ann, e_ann / scale, units[u]);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\" fill=\"" C_ANN "\">ANN"
                     "</text>\n", x - 10, y - 10);
    }
#undef EPOS
#undef YPOS
}

static double rates_panel_height(int rows) { return 110 + 24.0 * (rows > 0 ? rows : 1); }

static void rates_panel(sbuf *b, const nc_eval_result *r, double top)
{
    int rows = 0;
    size_t longest = 4;
    double maxr = 0;
    for (int i = 0; i < r->n_layers; i++)
        if (r->layers[i].spiking) {
            rows++;
            size_t len = strlen(r->layers[i].name);
            longest = len > longest ? len : longest;
            maxr = fmax(maxr, nc_eval_spike_rate(r, i));
        }
    const int max_chars = 34;
    double label_w = 7.0 * (double)(longest < (size_t)max_chars ? longest : (size_t)max_chars + 1);
    double x0 = fmax(110, 24 + label_w), x1 = WIDTH - 70, y0 = top + 50;
    double y1 = y0 + 24.0 * (rows > 0 ? rows : 1);
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">"
                 "Spike rate per layer</text>\n", WIDTH / 2, top + 26);
    if (rows == 0) {
        sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">no spiking layers</text>\n",
                  WIDTH / 2, y0 + 16);
        return;
    }
    double step = nice_step(maxr > 0 ? maxr : 1.0, 5), hi = step * ceil((maxr > 0 ? maxr : 1.0) / step - 1e-9);
    for (int k = 0; k * step <= hi + 1e-12; k++) {
        double v = k * step, x = x0 + v / hi * (x1 - x0);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_GRID "\"/>\n", x, y0, x,
                  y1);
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_AXIS "\"/>\n", x, y1, x,
                  y1 + 5);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%g</text>\n", x,
                  y1 + 19, v);
    }
    int row = 0;
    for (int i = 0; i < r->n_layers; i++) {
        if (!r->layers[i].spiking)
            continue;
        double rate = nc_eval_spike_rate(r, i), y = y0 + 24.0 * row++ + 4;
        double w = rate / hi * (x1 - x0);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">", x0 - 8, y + 12);
        sb_text(b, r->layers[i].name, max_chars);
        sb_printf(b, "<title>");
        sb_text(b, r->layers[i].name, 1 << 20);
        sb_printf(b, "</title></text>\n");
        sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"" C_BAR "\"/>\n", x0, y, w);
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#333\">%.4f</text>\n", x0 + w + 5,
                  y + 12, rate);
    }
    sb_printf(b, "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"" C_AXIS "\"/>\n", x0, y0, y1, x1);
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">spikes per neuron per "
                 "step</text>\n", (x0 + x1) / 2, y1 + 40);
}

/* ---------------------------------------------------------------- file */


nc_status nc_eval_result_write_svg(const nc_eval_result *r, const char *path)
{
    if (!r || !path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_eval_result_write_svg: NULL argument");
    int rows = 0;
    for (int i = 0; i < r->n_layers; i++)
        rows += r->layers[i].spiking;
    double h1 = 384, height = 2 * h1 + rates_panel_height(rows);
    sbuf b = {0};
    sb_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
                  "viewBox=\"0 0 %d %.0f\" " FONT ">\n", WIDTH, height, WIDTH, height);
    sb_printf(&b, "<title>neuroc evaluation: SNN accuracy against timesteps and against energy, spike rates per "
                  "layer</title>\n");
    sb_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    accuracy_panel(&b, r, 0);
    energy_panel(&b, r, h1);
    rates_panel(&b, r, 2 * h1);
    sb_printf(&b, "</svg>\n");
    nc_status st = b.failed ? nc_errorf(NC_ERR_NOMEM, "out of memory drawing %s", path)
                            : nc_write_file_atomic(path, b.p, b.len);
    nc_free(b.p);
    return st;
}
