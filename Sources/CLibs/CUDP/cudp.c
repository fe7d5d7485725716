#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "cudp.h"

int cudp_receive_batch(int fd, uint8_t *buffer, size_t slot, unsigned count,
                       uint32_t *lengths, struct sockaddr_storage *peers, uint8_t *truncated) {
    struct mmsghdr messages[CUDP_MAX_BATCH];
    struct iovec vectors[CUDP_MAX_BATCH];
    if (count > CUDP_MAX_BATCH) count = CUDP_MAX_BATCH;
    memset(messages, 0, sizeof(struct mmsghdr) * count);
    for (unsigned i = 0; i < count; i++) {
        vectors[i].iov_base = buffer + (size_t)i * slot;
        vectors[i].iov_len = slot;
        messages[i].msg_hdr.msg_name = &peers[i];
        messages[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    int received;
    do {
        received = recvmmsg(fd, messages, count, MSG_DONTWAIT, NULL);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
    for (int i = 0; i < received; i++) {
        lengths[i] = messages[i].msg_len;
        truncated[i] = (messages[i].msg_hdr.msg_flags & MSG_TRUNC) ? 1 : 0;
    }
    return received;
}
