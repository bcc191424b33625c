/*
 * A training-like test workload for `gpu-doctor-cli tune` (tests only; never shipped).
 *
 *   workload SHAPE BATCH [WORKERS]
 *
 * Its speed and memory depend on its parameters the way real training does, from a model, so a
 * test knows the optimum in advance (the same model as the search's unit tests):
 *
 *   memory   = BASE + PER_ITEM x BATCH GiB per copy; past the device's limit (all copies together)
 *              it dies with PyTorch's out-of-memory message, as a real job does
 *   GPU time = max(KERNEL, PER_ITEM_MS x BATCH) ms per step, plus OVERHEAD ms of the CPU between
 *              steps (the GPU waits): throughput rises with the batch and saturates
 *   loading  = each worker loads RATE items/s on its own core, up to CORES cores; with no worker
 *              the main process loads at half that rate between steps
 *   copies   = copies running at once (files in FAKE_VRAM_DIR) share the GPU: past 100 % of
 *              demand each gets its share
 *
 * It registers "BYTES UTIL" in $FAKE_VRAM_DIR/<pid>, which the fake NVML (vram_dir) reports as
 * this process's GPU memory and the device's load, holds it HOLD_MS, prints "train: R it/s" and
 * exits. Shapes: memory (memory-limited), fragment (out of memory from batch 20 on), saturating,
 * workers (loading-bound), flaky (fails at batch 16 with a CUDA error), slow (runs 30 s at batch
 * 8 and above), spike (memory-limited, and its memory doubles for the last 250 ms, as a
 * validation pass or a checkpoint save does: a peak between two samples).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

struct shape {
    const char *name;
    double base, per_item, limit;   /* GiB */
    double kernel, per_item_ms, overhead;
    double rate, cores;             /* 0 rate: loading is free */
    int oom_from, fail_at, slow_from, spike;
};

static const struct shape shapes[] = {
    {"memory", 2.0, 0.4, 23.0, 1.0, 1.0, 20.0, 0, 0, 0, 0, 0, 0},
    {"fragment", 2.0, 0.4, 23.0, 1.0, 1.0, 20.0, 0, 0, 20, 0, 0, 0},
    {"saturating", 1.0, 0.1, 23.0, 10.0, 1.0, 2.0, 0, 0, 0, 0, 0, 0},
    {"workers", 2.0, 0.125, 23.0, 40.0, 1.25, 0.0, 100.0, 4.0, 0, 0, 0, 0},
    {"flaky", 2.0, 0.4, 23.0, 1.0, 1.0, 20.0, 0, 0, 0, 16, 0, 0},
    {"slow", 2.0, 0.4, 23.0, 1.0, 1.0, 20.0, 0, 0, 0, 0, 8, 0},
    {"spike", 2.0, 0.4, 23.0, 1.0, 1.0, 20.0, 0, 0, 0, 0, 0, 1},
};

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* Copies registered in dir whose process lives, and their summed memory (bytes). */
static int copies(const char *dir, double *sum) {
    int n = 0;
    *sum = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0 || kill((pid_t)pid, 0) != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        double b = 0;
        if (fscanf(f, "%lf", &b) == 1) { n++; *sum += b; }
        fclose(f);
    }
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: workload SHAPE BATCH [WORKERS]\n"); return 2; }
    const struct shape *s = NULL;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        if (!strcmp(shapes[i].name, argv[1])) s = &shapes[i];
    if (!s) { fprintf(stderr, "unknown shape %s\n", argv[1]); return 2; }
    double b = atof(argv[2]), w = argc > 3 ? atof(argv[3]) : 0;
    const char *dir = getenv("FAKE_VRAM_DIR");
    long hold = getenv("HOLD_MS") ? atol(getenv("HOLD_MS")) : 700;
    if (!dir) { fprintf(stderr, "FAKE_VRAM_DIR is not set\n"); return 2; }
    if (b < 1) { fprintf(stderr, "batch must be at least 1\n"); return 2; }

    double gpu = s->kernel > s->per_item_ms * b ? s->kernel : s->per_item_ms * b;
    double step;
    if (s->rate <= 0) {
        step = s->overhead + gpu;
    } else if (w < 1) {
        step = s->overhead + gpu + 1000.0 * b / (s->rate * 0.5);
    } else {
        double load = 1000.0 * b / (s->rate * (w < s->cores ? w : s->cores));
        step = s->overhead + gpu > load ? s->overhead + gpu : load;
    }
    double util = gpu / step;
    double mem = (s->base + s->per_item * b) * GIB;

    char mine[4096];
    snprintf(mine, sizeof mine, "%s/%ld", dir, (long)getpid());
    FILE *f = fopen(mine, "w");
    if (!f) { perror(mine); return 2; }
    fprintf(f, "%.0f %.0f\n", mem, 100.0 * util);
    fclose(f);
    printf("loading: batch %.0f, workers %.0f\n", b, w);
    fflush(stdout);
    sleep_ms(150);

    double total;
    int n = copies(dir, &total);
    if (n < 1) n = 1;
    if (total > s->limit * GIB || (s->oom_from && b >= s->oom_from)) {
        fprintf(stderr, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total "
                        "capacity of 24.00 GiB of which 0.50 GiB is free.\n", s->per_item * b);
        unlink(mine);
        return 1;
    }
    if (s->fail_at && (int)b == s->fail_at) {
        fprintf(stderr, "RuntimeError: CUDA error: an illegal memory access was encountered\n");
        unlink(mine);
        return 1;
    }
    double demand = n * util, share = demand > 1.0 ? 1.0 / demand : 1.0;
    /* The GPU's load as NVML would see it: each copy's share of the device. */
    f = fopen(mine, "w");
    if (f) { fprintf(f, "%.0f %.0f\n", mem, 100.0 * util * share); fclose(f); }
    sleep_ms(s->slow_from && b >= s->slow_from ? 30000 : hold);
    if (s->spike) {
        f = fopen(mine, "w");
        if (f) { fprintf(f, "%.0f %.0f\n", 2 * mem, 100.0 * util * share); fclose(f); }
        sleep_ms(250);
    }
    printf("train: %.2f it/s\n", 1000.0 * b / step * share);
    fflush(stdout);
    unlink(mine);
    return 0;
}
