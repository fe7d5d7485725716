/* A counting malloc shim for the allocation benchmark: LD_PRELOAD it, set MALLOC_COUNT_FILE, and read the
 * counters (8 little-endian uint64: malloc, calloc, realloc, free, bytes requested, aligned allocs) from that
 * file at any time: they live in a shared mapping of it, so reading needs no signal and no thread.
 * Allocation itself is glibc's (__libc_*), so behaviour is unchanged apart from the counting. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
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

#define COUNT(i, n) __atomic_fetch_add(&counters[i], (n), __ATOMIC_RELAXED)

void *malloc(size_t n) { COUNT(0, 1); COUNT(4, n); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { COUNT(1, 1); COUNT(4, a * b); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { COUNT(2, 1); COUNT(4, n); return __libc_realloc(p, n); }
void free(void *p) { if (p) COUNT(3, 1); __libc_free(p); }
void *memalign(size_t a, size_t n) { COUNT(5, 1); COUNT(4, n); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { COUNT(5, 1); COUNT(4, n); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    COUNT(5, 1); COUNT(4, n);
    void *p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
