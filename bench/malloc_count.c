/* A counting malloc shim for the allocation benchmark: LD_PRELOAD it, set MALLOC_COUNT_FILE, and read the
 * counters (8 little-endian uint64: malloc, calloc, realloc, free, bytes requested, aligned allocs) from that
 * file at any time: they live in a shared mapping of it, so reading needs no signal and no thread.
 * Allocation itself is glibc's (__libc_*), so behaviour is unchanged apart from the counting.
 *
 * Optional trace mode, to show where allocations come from instead of guessing: with MALLOC_COUNT_TRACE=FILE,
 * one allocation in every MALLOC_COUNT_TRACE_EVERY (default 64) records its call stack (backtrace() return
 * addresses) into a shared mapping of FILE ("%p" in it becomes the process id), up to MALLOC_COUNT_TRACE_MAX records (default 200000); FILE.maps
 * gets a copy of /proc/self/maps now and then so the addresses can be mapped back to binaries.
 * bench/alloc_sites.py symbolises and ranks the sites. Recording allocates nothing: the stack goes straight
 * into the mapping, and a per-thread flag keeps allocations made by backtrace() itself out of the trace. */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static uint64_t fallback[8];
static uint64_t *counters = fallback;

__attribute__((constructor)) static void malloc_count_init(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (!path) return;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (ftruncate(fd, 64) != 0) { close(fd); return; }
    void *map = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    for (int i = 0; i < 8; i++) ((uint64_t *)map)[i] = fallback[i];
    counters = map;
}

/* ---- trace mode ---- */
#define TRACE_DEPTH 31              /* frames per record; a record is 32 uint64: depth, then the frames */
#define TRACE_HEADER 8              /* uint64 words before the first record: magic, next, capacity, every */
static uint64_t *trace;             /* NULL unless MALLOC_COUNT_TRACE is set */
static uint64_t trace_capacity, trace_every = 64, trace_calls;
static char trace_path[4000], trace_maps_path[4096];
static __thread int in_trace __attribute__((tls_model("initial-exec")));

/* Copies /proc/self/maps to FILE.maps with plain syscalls (no stdio, no allocation). */
static void trace_copy_maps(void) {
    int in = open("/proc/self/maps", O_RDONLY);
    if (in < 0) return;
    int out = open(trace_maps_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
        char buf[8192];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0) {
            if (write(out, buf, (size_t)n) != n) break;
        }
        close(out);
    }
    close(in);
}

__attribute__((constructor)) static void malloc_trace_init(void) {
    const char *spec = getenv("MALLOC_COUNT_TRACE");
    if (!spec) return;
    const char *pid = strstr(spec, "%p");
    if (pid) snprintf(trace_path, sizeof trace_path, "%.*s%ld%s", (int)(pid - spec), spec, (long)getpid(), pid + 2);
    else snprintf(trace_path, sizeof trace_path, "%s", spec);
    const char *path = trace_path;
    const char *every = getenv("MALLOC_COUNT_TRACE_EVERY");
    const char *max = getenv("MALLOC_COUNT_TRACE_MAX");
    if (every && atoll(every) > 0) trace_every = (uint64_t)atoll(every);
    trace_capacity = max && atoll(max) > 0 ? (uint64_t)atoll(max) : 200000;
    size_t bytes = (TRACE_HEADER + trace_capacity * (TRACE_DEPTH + 1)) * sizeof(uint64_t);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (ftruncate(fd, (off_t)bytes) != 0) { close(fd); return; }
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return;
    strcpy(trace_maps_path, path);
    strcat(trace_maps_path, ".maps");
    /* backtrace() loads libgcc's unwinder (which allocates) on its first call: do that now, untraced. */
    in_trace = 1;
    void *warm[4];
    backtrace(warm, 4);
    in_trace = 0;
    uint64_t *t = map;
    t[0] = 0x3165636172746d63ULL;  /* "cmtrace1" */
    t[1] = 0;
    t[2] = trace_capacity;
    t[3] = trace_every;
    trace_copy_maps();
    __atomic_store_n(&trace, t, __ATOMIC_RELEASE);
}

static void trace_sample(void) {
    uint64_t *t = __atomic_load_n(&trace, __ATOMIC_ACQUIRE);
    if (!t || in_trace) return;
    if (__atomic_fetch_add(&trace_calls, 1, __ATOMIC_RELAXED) % trace_every != 0) return;
    uint64_t slot = __atomic_fetch_add(&t[1], 1, __ATOMIC_RELAXED);
    if (slot >= trace_capacity) return;
    in_trace = 1;
    void *frames[TRACE_DEPTH + 2];
    int n = backtrace(frames, TRACE_DEPTH + 2);
    uint64_t *rec = t + TRACE_HEADER + slot * (TRACE_DEPTH + 1);
    /* Frame 0 is trace_sample itself, frame 1 the malloc wrapper: keep the caller onwards. */
    int kept = n > 2 ? n - 2 : 0;
    if (kept > TRACE_DEPTH) kept = TRACE_DEPTH;
    for (int i = 0; i < kept; i++) rec[1 + i] = (uint64_t)(uintptr_t)frames[2 + i];
    __atomic_store_n(&rec[0], (uint64_t)kept, __ATOMIC_RELEASE);
    /* Libraries loaded later (dlopen) show up in a later copy: refresh at records 1, 2, 4, 8, ... */
    if ((slot & (slot + 1)) == 0) trace_copy_maps();
    in_trace = 0;
}

#define COUNT(i, n) __atomic_fetch_add(&counters[i], (n), __ATOMIC_RELAXED)

void *malloc(size_t n) { COUNT(0, 1); COUNT(4, n); trace_sample(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { COUNT(1, 1); COUNT(4, a * b); trace_sample(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { COUNT(2, 1); COUNT(4, n); trace_sample(); return __libc_realloc(p, n); }
void free(void *p) { if (p) COUNT(3, 1); __libc_free(p); }
void *memalign(size_t a, size_t n) { COUNT(5, 1); COUNT(4, n); trace_sample(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { COUNT(5, 1); COUNT(4, n); trace_sample(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    COUNT(5, 1); COUNT(4, n); trace_sample();
    void *p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
