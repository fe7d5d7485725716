#include <srt/srt.h>
#include <srt/access_control.h>
#include <libavutil/error.h>
#include <pthread.h>
#include <syslog.h>
#include <string.h>
#include <stdint.h>

// The stream ids a listener accepts ("room/key"), checked in SRT's handshake (srt_listen_callback) so that a wrong or
// revoked key is refused before a byte of media is read. Plain C: no Swift closure is called from libsrt's threads.
#define COHOST_SRT_MAX_KEYS 1024
#define COHOST_SRT_ID_LEN 160

typedef struct {
    pthread_mutex_t lock;
    int count;
    long long refused;
    char ids[COHOST_SRT_MAX_KEYS][COHOST_SRT_ID_LEN];
} cohost_srt_keys;

static inline void cohost_srt_keys_init(cohost_srt_keys *k) {
    pthread_mutex_init(&k->lock, NULL);
    k->count = 0;
    k->refused = 0;
}

static inline void cohost_srt_keys_destroy(cohost_srt_keys *k) { pthread_mutex_destroy(&k->lock); }

// 0 when added, -1 when the table is full or the id too long.
static inline int cohost_srt_keys_add(cohost_srt_keys *k, const char *id) {
    if (strlen(id) >= COHOST_SRT_ID_LEN) return -1;
    pthread_mutex_lock(&k->lock);
    int status = -1;
    if (k->count < COHOST_SRT_MAX_KEYS) {
        strcpy(k->ids[k->count++], id);
        status = 0;
    }
    pthread_mutex_unlock(&k->lock);
    return status;
}

static inline void cohost_srt_keys_remove(cohost_srt_keys *k, const char *id) {
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < k->count; i++) {
        if (strcmp(k->ids[i], id) == 0) {
            k->count--;
            if (i != k->count) strcpy(k->ids[i], k->ids[k->count]);
            break;
        }
    }
    pthread_mutex_unlock(&k->lock);
}

static inline long long cohost_srt_keys_refused(cohost_srt_keys *k) {
    pthread_mutex_lock(&k->lock);
    long long n = k->refused;
    pthread_mutex_unlock(&k->lock);
    return n;
}

static inline int cohost_srt_accept_check(void *opaque, SRTSOCKET ns, int hsversion, const struct sockaddr *peer,
                                          const char *streamid) {
    (void)hsversion;
    (void)peer;
    cohost_srt_keys *k = (cohost_srt_keys *)opaque;
    int found = 0;
    pthread_mutex_lock(&k->lock);
    if (streamid) {
        for (int i = 0; i < k->count && !found; i++) found = strcmp(k->ids[i], streamid) == 0;
    }
    if (!found) k->refused++;
    pthread_mutex_unlock(&k->lock);
    if (!found) {
        srt_setrejectreason(ns, SRT_REJX_FORBIDDEN);
        return -1;
    }
    return 0;
}

static inline int cohost_srt_listen_checked(SRTSOCKET s, cohost_srt_keys *k) {
    return srt_listen_callback(s, cohost_srt_accept_check, k);
}

// libavformat's read callback over an accepted SRT socket (live mode: one message of up to 1316 bytes a call).
// `opaque` points at the socket. The socket's receive timeout bounds each call; closing it ends a blocked one.
static inline int cohost_srt_avio_read(void *opaque, uint8_t *buf, int size) {
    SRTSOCKET s = *(SRTSOCKET *)opaque;
    int n = srt_recvmsg(s, (char *)buf, size);
    if (n > 0) return n;
    if (n == 0) return AVERROR_EOF;
    int code = srt_getlasterror(NULL);
    if (code == SRT_EASYNCRCV) return AVERROR(ETIMEDOUT);
    return AVERROR_EOF;
}

static inline int cohost_srt_set_int(SRTSOCKET s, SRT_SOCKOPT option, int value) {
    return srt_setsockflag(s, option, &value, sizeof value);
}

static inline int cohost_srt_streamid(SRTSOCKET s, char *buf, int size) {
    int len = size - 1;
    if (srt_getsockflag(s, SRTO_STREAMID, buf, &len) != 0) return -1;
    buf[len < 0 ? 0 : (len < size ? len : size - 1)] = 0;
    return len;
}

static inline const char *cohost_srt_last_error(void) { return srt_getlasterror_str(); }

// libsrt logs every refused handshake at warning level to stderr: errors are enough.
static inline void cohost_srt_quiet_logs(void) { srt_setloglevel(LOG_ERR); }
