// CRTMP: librtmp for the Publishing module (outputs) and for MediaSources (encoders publishing to Cohost's RTMP
// port, the server side at the end of this file).
#include <librtmp/rtmp.h>
#include <librtmp/amf.h>
#include <librtmp/log.h>
#include <libavutil/error.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

// Bytes a message's storage must keep free before its body: RTMP_SendPacket writes the chunk header there.
static inline int cohost_rtmp_header_room(void) { return RTMP_MAX_HEADER_SIZE; }

// Sends one message whose body the caller placed at `storage + cohost_rtmp_header_room()`, on chunk stream
// `channel`, with message type `type` (8 audio, 9 video, 18 data). `absolute`: a type-0 chunk header with the
// absolute timestamp (the first message of a chunk stream on a connection: the receiver has nothing to add a
// delta to); otherwise librtmp sends the delta to the previous message of that chunk stream, which must not be
// later. The storage is the caller's and reused: nothing is allocated per message.
// RTMP_Write is not used for media: it puts audio and video on one chunk stream, where a picture sent ahead
// of the sound of the same instant (Cohost's low-latency interleave) would need a negative delta.
// Returns 1 on success, 0 on a socket error.
static inline int cohost_rtmp_send_message(RTMP *r, uint8_t type, int channel, int absolute,
                                           char *storage, uint32_t size, uint32_t timestamp) {
    RTMPPacket packet;
    memset(&packet, 0, sizeof(packet));
    packet.m_body = storage + RTMP_MAX_HEADER_SIZE;
    packet.m_nBodySize = size;
    packet.m_packetType = type;
    packet.m_nChannel = channel;
    packet.m_headerType = absolute ? RTMP_PACKET_SIZE_LARGE : RTMP_PACKET_SIZE_MEDIUM;
    packet.m_nTimeStamp = timestamp;
    packet.m_hasAbsTimestamp = 0;
    packet.m_nInfoField2 = r->m_stream_id;
    return RTMP_SendPacket(r, &packet, 0) ? 1 : 0;
}

// Announces `size`-byte chunks to the server (Set Chunk Size, RTMP 5.4.1, on the control chunk stream) and
// chunks every later message so. librtmp keeps the protocol's 128 bytes unless told, and writes each chunk with
// its own send(): with TCP_NODELAY (librtmp sets it) that is a syscall and a TCP segment per 128 bytes.
// Returns 1 on success, 0 on a socket error.
static inline int cohost_rtmp_set_out_chunk_size(RTMP *r, uint32_t size) {
    char storage[RTMP_MAX_HEADER_SIZE + 4];
    RTMPPacket packet;
    memset(&packet, 0, sizeof(packet));
    packet.m_body = storage + RTMP_MAX_HEADER_SIZE;
    packet.m_body[0] = (char)(size >> 24);
    packet.m_body[1] = (char)(size >> 16);
    packet.m_body[2] = (char)(size >> 8);
    packet.m_body[3] = (char)size;
    packet.m_nBodySize = 4;
    packet.m_packetType = RTMP_PACKET_TYPE_CHUNK_SIZE;
    packet.m_nChannel = 0x02;
    packet.m_headerType = RTMP_PACKET_SIZE_LARGE;
    if (!RTMP_SendPacket(r, &packet, 0)) return 0;
    r->m_outChunkSize = (int)size;
    return 1;
}

// The chunk size librtmp cuts our messages into.
static inline int cohost_rtmp_out_chunk_size(const RTMP *r) { return r->m_outChunkSize; }

// Points the connection at an already resolved numeric host (owned by the caller, alive until RTMP_Free).
// librtmp resolves names with gethostbyname, which is not thread-safe; Publishing resolves with
// getaddrinfo first and hands the address over here. The tcUrl built by RTMP_SetupURL keeps the name.
static inline void cohost_rtmp_set_host(RTMP *r, char *numericHost) {
    r->Link.hostname.av_val = numericHost;
    r->Link.hostname.av_len = (int)strlen(numericHost);
}

// The host name and port RTMP_SetupURL parsed (port defaulted to 1935 by librtmp when absent).
static inline int cohost_rtmp_host_length(const RTMP *r) { return r->Link.hostname.av_len; }
static inline const char *cohost_rtmp_host(const RTMP *r) { return r->Link.hostname.av_val; }
static inline int cohost_rtmp_port(const RTMP *r) { return r->Link.port; }
static inline void cohost_rtmp_set_timeout(RTMP *r, int seconds) { r->Link.timeout = seconds; }

// Reads one incoming chunk and lets librtmp act on a complete message (answers pings, notes
// acknowledgements and status). Returns 0 when the connection failed or was closed.
// RTMPPacket_IsReady is a macro, hence this wrapper.
static inline int cohost_rtmp_read_one(RTMP *r) {
    RTMPPacket packet;
    memset(&packet, 0, sizeof(packet));
    if (!RTMP_ReadPacket(r, &packet)) return 0;
    if (RTMPPacket_IsReady(&packet)) {
        RTMP_ClientPacket(r, &packet);
        RTMPPacket_Free(&packet);
    }
    return RTMP_IsConnected(r) ? 1 : 0;
}

// ---- The server side: an encoder (OBS, ffmpeg) publishing to Cohost's RTMP port ----
// librtmp does the handshake (RTMP_Serve), the chunking and AMF; the few commands a publisher sends (connect,
// releaseStream, FCPublish, createStream, publish) are answered here. The session stops at `publish` so the caller
// checks the stream key before any media is read, then reads the media as FLV bytes (cohost_rtmp_avio_read) for
// libavformat's FLV demuxer.

typedef struct {
    RTMP rtmp;
    RTMPPacket packet;
    char app[256];
    char name[256];
    int failed;
    int headerSent;
    uint8_t *pending;
    int pendingLen, pendingPos, pendingCap;
} cohost_rtmp_session;

static inline void cohost_rtmp_timeout(cohost_rtmp_session *s, int ms) {
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(s->rtmp.m_sb.sb_socket, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(s->rtmp.m_sb.sb_socket, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static inline int cohost_rtmp_read_exactly(int fd, uint8_t *buf, int n) {
    for (int got = 0; got < n;) {
        ssize_t r = recv(fd, buf + got, (size_t)(n - got), 0);
        if (r <= 0) return 0;
        got += (int)r;
    }
    return 1;
}

static inline int cohost_rtmp_write_all(int fd, const uint8_t *buf, int n) {
    for (int sent = 0; sent < n;) {
        ssize_t w = send(fd, buf + sent, (size_t)(n - sent), MSG_NOSIGNAL);
        if (w <= 0) return 0;
        sent += (int)w;
    }
    return 1;
}

// The plain RTMP handshake (version 3, S1 with a zero version): what librtmp's RTMP_Serve does not do. Its
// digest-checking server handshake refuses ffmpeg's client ("not genuine Adobe"), while every publisher
// (ffmpeg, OBS's librtmp) accepts a plain one. S2 echoes C1; C2 is read and ignored.
static inline int cohost_rtmp_handshake(int fd) {
    uint8_t c0c1[1537];
    if (!cohost_rtmp_read_exactly(fd, c0c1, sizeof c0c1) || c0c1[0] != 3) return 0;
    uint8_t s[1 + 1536 + 1536];
    s[0] = 3;
    memset(s + 1, 0, 8);
    for (int i = 9; i < 1 + 1536; i++) s[i] = (uint8_t)rand();
    memcpy(s + 1 + 1536, c0c1 + 1, 1536);
    if (!cohost_rtmp_write_all(fd, s, sizeof s)) return 0;
    uint8_t c2[1536];
    return cohost_rtmp_read_exactly(fd, c2, sizeof c2);
}

// Takes the accepted socket `fd` (closed by cohost_rtmp_session_free) and makes the handshake within `timeoutMs`;
// NULL when it fails.
static inline cohost_rtmp_session *cohost_rtmp_session_new(int fd, int timeoutMs) {
    cohost_rtmp_session *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return NULL;
    }
    RTMP_Init(&s->rtmp);
    s->rtmp.m_sb.sb_socket = fd;
    cohost_rtmp_timeout(s, timeoutMs);
    if (!cohost_rtmp_handshake(fd)) {
        RTMP_Close(&s->rtmp);
        free(s);
        return NULL;
    }
    return s;
}

static inline void cohost_rtmp_session_free(cohost_rtmp_session *s) {
    if (!s) return;
    RTMPPacket_Free(&s->packet);
    RTMP_Close(&s->rtmp);
    free(s->pending);
    free(s);
}

// Ends a blocked read from another thread (the socket stays open until the session is freed).
static inline void cohost_rtmp_session_shutdown(cohost_rtmp_session *s) {
    shutdown(s->rtmp.m_sb.sb_socket, SHUT_RDWR);
}

static inline int cohost_rtmp_send(cohost_rtmp_session *s, uint8_t type, int channel, uint32_t stream, char *body,
                                   uint32_t size) {
    char storage[RTMP_MAX_HEADER_SIZE + 1024];
    if (size > 1024) return 0;
    memcpy(storage + RTMP_MAX_HEADER_SIZE, body, size);
    RTMPPacket p;
    memset(&p, 0, sizeof p);
    p.m_body = storage + RTMP_MAX_HEADER_SIZE;
    p.m_nBodySize = size;
    p.m_packetType = type;
    p.m_nChannel = channel;
    p.m_headerType = RTMP_PACKET_SIZE_LARGE;
    p.m_nInfoField2 = stream;
    return RTMP_SendPacket(&s->rtmp, &p, 0);
}

static inline char *cohost_amf_name(char *o, char *end, const char *name) {
    size_t n = strlen(name);
    if (o + 2 + n > end) return NULL;
    *o++ = (char)(n >> 8);
    *o++ = (char)n;
    memcpy(o, name, n);
    return o + n;
}

static inline char *cohost_amf_named_string(char *o, char *end, const char *name, const char *value) {
    AVal n = {(char *)name, (int)strlen(name)}, v = {(char *)value, (int)strlen(value)};
    return o ? AMF_EncodeNamedString(o, end, &n, &v) : NULL;
}

static inline char *cohost_amf_named_number(char *o, char *end, const char *name, double value) {
    AVal n = {(char *)name, (int)strlen(name)};
    return o ? AMF_EncodeNamedNumber(o, end, &n, value) : NULL;
}

static inline char *cohost_amf_object_end(char *o, char *end) {
    if (!o || o + 3 > end) return NULL;
    *o++ = 0;
    *o++ = 0;
    *o++ = AMF_OBJECT_END;
    return o;
}

// "_result" of transaction `txn`: with `stream` > 0 the stream id (createStream), with `connect` the
// NetConnection.Connect.Success objects, else null and undefined.
static inline int cohost_rtmp_result(cohost_rtmp_session *s, double txn, int connect, double stream) {
    char body[512], *end = body + sizeof body, *o = body;
    AVal result = AVC("_result");
    o = AMF_EncodeString(o, end, &result);
    o = o ? AMF_EncodeNumber(o, end, txn) : NULL;
    if (!o) return 0;
    if (connect) {
        *o++ = AMF_OBJECT;
        o = cohost_amf_named_string(o, end, "fmsVer", "FMS/3,0,1,123");
        o = cohost_amf_named_number(o, end, "capabilities", 31);
        o = cohost_amf_object_end(o, end);
        if (!o) return 0;
        *o++ = AMF_OBJECT;
        o = cohost_amf_named_string(o, end, "level", "status");
        o = cohost_amf_named_string(o, end, "code", "NetConnection.Connect.Success");
        o = cohost_amf_named_string(o, end, "description", "Connection succeeded.");
        o = cohost_amf_named_number(o, end, "objectEncoding", 0);
        o = cohost_amf_object_end(o, end);
    } else {
        *o++ = AMF_NULL;
        o = stream > 0 ? AMF_EncodeNumber(o, end, stream) : o;
        if (o && stream <= 0) *o++ = AMF_UNDEFINED;
    }
    if (!o) return 0;
    return cohost_rtmp_send(s, 0x14, 3, 0, body, (uint32_t)(o - body));
}

static inline int cohost_rtmp_status(cohost_rtmp_session *s, const char *level, const char *code,
                                     const char *description) {
    char body[512], *end = body + sizeof body, *o = body;
    AVal name = AVC("onStatus");
    o = AMF_EncodeString(o, end, &name);
    o = o ? AMF_EncodeNumber(o, end, 0) : NULL;
    if (!o) return 0;
    *o++ = AMF_NULL;
    *o++ = AMF_OBJECT;
    o = cohost_amf_named_string(o, end, "level", level);
    o = cohost_amf_named_string(o, end, "code", code);
    o = cohost_amf_named_string(o, end, "description", description);
    o = cohost_amf_object_end(o, end);
    if (!o) return 0;
    return cohost_rtmp_send(s, 0x14, 5, 1, body, (uint32_t)(o - body));
}

static inline void cohost_rtmp_copy(char *dst, size_t size, AVal v) {
    size_t n = v.av_len < 0 ? 0 : (size_t)v.av_len;
    if (n >= size) n = size - 1;
    if (n) memcpy(dst, v.av_val, n);
    dst[n] = 0;
}

// The next complete message into s->packet; 0 when the connection ended or timed out.
static inline int cohost_rtmp_next(cohost_rtmp_session *s) {
    RTMPPacket_Free(&s->packet);
    while (RTMP_IsConnected(&s->rtmp) && RTMP_ReadPacket(&s->rtmp, &s->packet)) {
        if (!RTMPPacket_IsReady(&s->packet) || !s->packet.m_body) continue;
        if (s->packet.m_packetType == 0x01 && s->packet.m_nBodySize >= 4) {
            int size = (int)(AMF_DecodeInt32(s->packet.m_body) & 0x7fffffff);
            if (size > 0 && size <= 16 * 1024 * 1024) s->rtmp.m_inChunkSize = size;
            RTMPPacket_Free(&s->packet);
            continue;
        }
        return 1;
    }
    return 0;
}

// Answers the publisher's commands until it publishes: 1 with `app` and `name` set (nothing answered to the publish
// yet), 0 when it left, sent something else first, or took longer than `deadlineMs` in all (a publisher trickling
// messages slowly holds a handshake slot no longer than that).
static inline int cohost_rtmp_session_await_publish(cohost_rtmp_session *s, int deadlineMs) {
    struct timeval started, now;
    gettimeofday(&started, NULL);
    for (int messages = 0; messages < 64 && cohost_rtmp_next(s); messages++) {
        gettimeofday(&now, NULL);
        long elapsed = (now.tv_sec - started.tv_sec) * 1000 + (now.tv_usec - started.tv_usec) / 1000;
        if (elapsed > deadlineMs) return 0;
        RTMPPacket *p = &s->packet;
        if (p->m_packetType != 0x14 && p->m_packetType != 0x11) continue;
        char *body = p->m_body;
        int size = (int)p->m_nBodySize;
        if (p->m_packetType == 0x11 && size > 0) { body++; size--; }  // AMF3 command: an AMF0 body after one byte
        AMFObject obj;
        if (AMF_Decode(&obj, body, size, FALSE) < 0) return 0;
        AVal method;
        AMFProp_GetString(AMF_GetProp(&obj, NULL, 0), &method);
        double txn = AMFProp_GetNumber(AMF_GetProp(&obj, NULL, 1));
        int ok = 1, published = 0;
        if (AVMATCH(&method, &(AVal)AVC("connect"))) {
            AMFObject command;
            AMFProp_GetObject(AMF_GetProp(&obj, NULL, 2), &command);
            AVal app;
            AVal key = AVC("app");
            AMFProp_GetString(AMF_GetProp(&command, &key, -1), &app);
            cohost_rtmp_copy(s->app, sizeof s->app, app);
            char control[5];
            AMF_EncodeInt32(control, control + 4, 2500000);
            ok = cohost_rtmp_send(s, 0x05, 2, 0, control, 4);
            control[4] = 2;
            ok = ok && cohost_rtmp_send(s, 0x06, 2, 0, control, 5);
            AMF_EncodeInt32(control, control + 4, 4096);
            ok = ok && cohost_rtmp_send(s, 0x01, 2, 0, control, 4);
            s->rtmp.m_outChunkSize = 4096;
            ok = ok && cohost_rtmp_result(s, txn, 1, 0);
        } else if (AVMATCH(&method, &(AVal)AVC("createStream"))) {
            ok = cohost_rtmp_result(s, txn, 0, 1);
        } else if (AVMATCH(&method, &(AVal)AVC("publish"))) {
            AVal name;
            AMFProp_GetString(AMF_GetProp(&obj, NULL, 3), &name);
            cohost_rtmp_copy(s->name, sizeof s->name, name);
            // OBS and others may add a query to the name ("key?param"): the key is before it.
            char *q = strchr(s->name, '?');
            if (q) *q = 0;
            published = 1;
        } else if (txn > 0 && (AVMATCH(&method, &(AVal)AVC("releaseStream")) ||
                               AVMATCH(&method, &(AVal)AVC("FCPublish")))) {
            ok = cohost_rtmp_result(s, txn, 0, 0);
        }
        AMF_Reset(&obj);
        if (!ok) return 0;
        if (published) return 1;
    }
    return 0;
}

static inline int cohost_rtmp_session_accept(cohost_rtmp_session *s, int readTimeoutMs) {
    cohost_rtmp_timeout(s, readTimeoutMs);
    return cohost_rtmp_status(s, "status", "NetStream.Publish.Start", "Publishing.");
}

static inline void cohost_rtmp_session_refuse(cohost_rtmp_session *s) {
    cohost_rtmp_status(s, "error", "NetStream.Publish.BadName", "Unknown stream key.");
}

static inline const char *cohost_rtmp_session_app(cohost_rtmp_session *s) { return s->app; }
static inline const char *cohost_rtmp_session_name(cohost_rtmp_session *s) { return s->name; }

static inline int cohost_rtmp_pending(cohost_rtmp_session *s, const uint8_t *data, int len) {
    if (s->pendingLen + len > s->pendingCap) {
        int cap = s->pendingLen + len + 65536;
        uint8_t *grown = realloc(s->pending, cap);
        if (!grown) return 0;
        s->pending = grown;
        s->pendingCap = cap;
    }
    memcpy(s->pending + s->pendingLen, data, len);
    s->pendingLen += len;
    return 1;
}

// libavformat's read callback: the published audio, video and data messages as an FLV stream.
static inline int cohost_rtmp_avio_read(void *opaque, uint8_t *buf, int size) {
    cohost_rtmp_session *s = (cohost_rtmp_session *)opaque;
    if (!s->headerSent) {
        static const uint8_t header[13] = {'F', 'L', 'V', 1, 5, 0, 0, 0, 9, 0, 0, 0, 0};
        if (!cohost_rtmp_pending(s, header, 13)) return AVERROR(ENOMEM);
        s->headerSent = 1;
    }
    while (s->pendingPos >= s->pendingLen) {
        s->pendingPos = s->pendingLen = 0;
        if (!cohost_rtmp_next(s)) return AVERROR_EOF;
        RTMPPacket *p = &s->packet;
        uint8_t type = p->m_packetType;
        if (type == 0x14) {
            AMFObject obj;
            if (AMF_Decode(&obj, p->m_body, (int)p->m_nBodySize, FALSE) >= 0) {
                AVal method;
                AMFProp_GetString(AMF_GetProp(&obj, NULL, 0), &method);
                int done = AVMATCH(&method, &(AVal)AVC("deleteStream")) ||
                           AVMATCH(&method, &(AVal)AVC("FCUnpublish"));
                AMF_Reset(&obj);
                if (done) return AVERROR_EOF;
            }
            continue;
        }
        if (type != 0x08 && type != 0x09 && type != 0x12) continue;
        uint32_t n = p->m_nBodySize, t = p->m_nTimeStamp;
        uint8_t tag[11] = {type, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, (uint8_t)(t >> 16),
                           (uint8_t)(t >> 8), (uint8_t)t, (uint8_t)(t >> 24), 0, 0, 0};
        uint32_t total = n + 11;
        uint8_t previous[4] = {(uint8_t)(total >> 24), (uint8_t)(total >> 16), (uint8_t)(total >> 8), (uint8_t)total};
        if (!cohost_rtmp_pending(s, tag, 11) || !cohost_rtmp_pending(s, (uint8_t *)p->m_body, (int)n) ||
            !cohost_rtmp_pending(s, previous, 4))
            return AVERROR(ENOMEM);
    }
    int n = s->pendingLen - s->pendingPos;
    if (n > size) n = size;
    memcpy(buf, s->pending + s->pendingPos, n);
    s->pendingPos += n;
    return n;
}
