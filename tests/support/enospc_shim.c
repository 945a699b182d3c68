/* A full disk without root: loaded with LD_PRELOAD, this library lets a process
 * write RECONSTUDIO_ENOSPC_AFTER bytes in all to regular files, then fails every
 * further write to a regular file with ENOSPC, as a file system that has run
 * full does. Writes to pipes, terminals and sockets (stdout, stderr) pass.
 * Interposes the calls through which our writers and their libraries write:
 * write, pwrite, writev, pwritev (HDF5, zlib, Qt) and fwrite (stdio: glibc's
 * stdio flushes through its own internal write, which LD_PRELOAD cannot see). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_llong written;

static long long budget(void) {
    const char* v = getenv("RECONSTUDIO_ENOSPC_AFTER");
    return v ? atoll(v) : -1;
}

/* A regular file on a disk: memfd files (memory, named "/memfd:...") do not fill it. */
static int isRegularFile(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    char link[64], target[16] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) target[n] = 0;
    return strncmp(target, "/memfd:", 7) != 0;
}

/* How many of `want` bytes the "disk" still takes (want itself when unlimited). */
static size_t allow(int fd, size_t want) {
    const long long limit = budget();
    if (limit < 0) atomic_store(&written, 0); /* unset: room again, counted afresh */
    if (limit < 0 || want == 0 || !isRegularFile(fd)) return want;
    long long before = atomic_fetch_add(&written, (long long)want);
    if (before >= limit) return 0;
    if (before + (long long)want > limit) {
        atomic_fetch_sub(&written, before + (long long)want - limit);
        return (size_t)(limit - before);
    }
    return want;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buf, size_t n) {
    const size_t ok = allow(fd, n);
    if (ok == 0 && n > 0) return errno = ENOSPC, -1;
    return REAL(write)(fd, buf, ok);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
    const size_t ok = allow(fd, n);
    if (ok == 0 && n > 0) return errno = ENOSPC, -1;
    return REAL(pwrite)(fd, buf, ok, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
    const size_t ok = allow(fd, n);
    if (ok == 0 && n > 0) return errno = ENOSPC, -1;
    return REAL(pwrite64)(fd, buf, ok, offset);
}

static size_t total(const struct iovec* iov, int count) {
    size_t sum = 0;
    for (int i = 0; i < count; ++i) sum += iov[i].iov_len;
    return sum;
}

/* Vectored writes are all or nothing here: enough to fail them. */
ssize_t writev(int fd, const struct iovec* iov, int count) {
    const size_t n = total(iov, count);
    if (allow(fd, n) < n) return errno = ENOSPC, -1;
    return REAL(writev)(fd, iov, count);
}

ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
    const size_t n = total(iov, count);
    if (allow(fd, n) < n) return errno = ENOSPC, -1;
    return REAL(pwritev)(fd, iov, count, offset);
}

size_t fwrite(const void* buf, size_t size, size_t items, FILE* stream) {
    if (size == 0) return REAL(fwrite)(buf, size, items, stream);
    const size_t ok = allow(fileno(stream), size * items) / size;
    const size_t done = ok ? REAL(fwrite)(buf, size, ok, stream) : 0;
    if (done < items) errno = ENOSPC;
    return done;
}

/* Tests look this up to know the shim is in place. */
int reconstudio_enospc_shim = 1;
