/* A progress bar on stderr for long library work (calibration, fine-tuning,
 * evaluation): drawn only when stderr is a terminal, so logs and pipes stay
 * clean. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

double cli_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(STDERR_FILENO) && cli_is_root(); /* one bar, not one a rank */
}

void cli_progress_end(cli_progress *p)
{
    if (p->on && p->drawn) {
        fputc('\n', stderr);
        fflush(stderr);
    }
    p->drawn = 0;
}

static void fmt_time(double s, char *buf, size_t len)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void cli_progress_cb(const char *what, int64_t done, int64_t total, void *user)
{
    cli_progress *p = user;
    if (!p || !p->on)
        return;
    double t = cli_now_s();
    /* a new phase: a new line, a new clock */
    if (strncmp(p->what, what ? what : "", sizeof p->what - 1) != 0 || done < p->done) {
        cli_progress_end(p);
        snprintf(p->what, sizeof p->what, "%s", what ? what : "");
        p->t0 = t;
        p->last = 0;
    }
    p->done = done;
    int final = total > 0 && done >= total;
    if (!final && t - p->last < 0.1)
        return; /* about ten redraws a second */
    p->last = t;
    enum { WIDTH = 28 };
    char bar[WIDTH + 1];
    int fill = total > 0 ? (int)((double)done / (double)total * WIDTH) : 0;
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    double el = t - p->t0, rate = el > 0 ? (double)done / el : 0;
    char left[48] = "", spent[24];
    fmt_time(el, spent, sizeof spent);
    if (final)
        snprintf(left, sizeof left, "%s total", spent);
    else if (rate > 0 && done > 0)
        fmt_time((double)(total - done) / rate, left, sizeof left), strcat(left, " left");
    fprintf(stderr, "\r  %-16.16s [%s] %lld/%lld  %.1f/s  %-14s", p->what, bar, (long long)done,
            (long long)total, rate, left);
    fflush(stderr);
    p->drawn = 1;
    if (final)
        cli_progress_end(p);
}
