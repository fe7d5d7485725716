// CRTMP: librtmp for the Publishing module. Only Publishing imports this module.
#include <librtmp/rtmp.h>
#include <librtmp/log.h>
#include <string.h>
#include <stdint.h>

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
