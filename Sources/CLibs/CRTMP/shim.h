// CRTMP: librtmp for the Publishing module. Only Publishing imports this module.
#include <librtmp/rtmp.h>
#include <librtmp/log.h>
#include <string.h>
#include <stdint.h>

// Sends one AMF0 data message (a script tag's body) as-is.
// RTMP_Write prefixes every script tag with "@setDataFrame", which servers treat as stream metadata;
// custom data messages (voice levels) must travel without it, so they go through RTMP_SendPacket.
// Returns 1 on success, 0 on failure (allocation or socket error).
static inline int cohost_rtmp_send_data(RTMP *r, const uint8_t *body, uint32_t size, uint32_t timestamp) {
    RTMPPacket packet;
    memset(&packet, 0, sizeof(packet));
    if (!RTMPPacket_Alloc(&packet, size)) return 0;
    memcpy(packet.m_body, body, size);
    packet.m_nBodySize = size;
    packet.m_packetType = RTMP_PACKET_TYPE_INFO;
    packet.m_nChannel = 0x04; // the source channel RTMP_Write uses for media and metadata
    packet.m_headerType = RTMP_PACKET_SIZE_LARGE;
    packet.m_nTimeStamp = timestamp;
    packet.m_hasAbsTimestamp = 0;
    packet.m_nInfoField2 = r->m_stream_id;
    int ok = RTMP_SendPacket(r, &packet, 0);
    RTMPPacket_Free(&packet);
    return ok ? 1 : 0;
}

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
