/* Corpus replay: feeds every file named on the command line, and every
 * file of every folder named, to the target's LLVMFuzzerTestOneInput. Built
 * with each target in the normal build (no libFuzzer needed), so the
 * committed corpora and the regression inputs run in ctest. A crash, a
 * sanitizer report or a leak fails the test; files are fed in name order so
 * a failure is reproducible. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            unsigned char *b = realloc(buf, cap *= 2);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 0;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file in dir (not recursive), in name order. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open folder %s\n", dir);
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *p = malloc(len);
        struct stat sb;
        if (p) {
            snprintf(p, len, "%s/%s", dir, names[i]);
            if (stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
                ok &= run_file(p);
                ++*count;
            }
        }
        free(p);
        free(names[i]);
    }
    free(names);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
        return 2;
    }
    int ok = 1, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            ok = 0;
        } else if (S_ISDIR(sb.st_mode)) {
            ok &= run_dir(argv[i], &count);
        } else {
            ok &= run_file(argv[i]);
            count++;
        }
    }
    printf("replayed %d inputs\n", count);
    return ok && count > 0 ? 0 : 1;
}
