#ifndef COHOST_CUDP_H
#define COHOST_CUDP_H
// recvmmsg(2) for Swift: glibc declares it only under _GNU_SOURCE, which Swift's Glibc module is not
// built with, so it is reached through this one function (compiled in cudp.c with _GNU_SOURCE).
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/// The most datagrams one call takes (its message headers live on the C stack).
#define CUDP_MAX_BATCH 64

/// Receives up to `count` datagrams without blocking: datagram i goes to `buffer + i * slot` (at most `slot`
/// bytes), its length to `lengths[i]`, its sender to `peers[i]`, and `truncated[i]` is 1 when it was longer than
/// `slot` (the rest is lost). Returns how many arrived (0 when none was waiting), or -errno.
int cudp_receive_batch(int fd, uint8_t *buffer, size_t slot, unsigned count,
                       uint32_t *lengths, struct sockaddr_storage *peers, uint8_t *truncated);

#endif
