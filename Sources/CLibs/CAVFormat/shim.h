#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/avstring.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/time.h>
#include <libavutil/opt.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <stdint.h>
#include <errno.h>
#include <unistd.h>

// AVERROR_EOF and AVERROR(e) are macros Swift cannot import.
static inline int cohost_avformat_eof(void) { return AVERROR_EOF; }
static inline int cohost_avformat_exit(void) { return AVERROR_EXIT; }
static inline void cohost_avformat_error_string(int err, char *buf, size_t size) { av_strerror(err, buf, size); }

// The interrupt callback libavformat polls during blocking I/O: it reads a deadline (monotonic microseconds, as
// av_gettime_relative gives; 0 for none) and a cancel flag through `opaque`, which points at the struct below.
// Plain C so that no Swift closure crosses into a C function pointer.
typedef struct {
    volatile int64_t deadline_us;
    volatile int cancelled;
} cohost_io_deadline;

static inline int cohost_io_interrupt(void *opaque) {
    cohost_io_deadline *d = (cohost_io_deadline *)opaque;
    if (d->cancelled) return 1;
    return d->deadline_us > 0 && av_gettime_relative() > d->deadline_us;
}

static inline void cohost_set_interrupt(AVFormatContext *ctx, cohost_io_deadline *d) {
    ctx->interrupt_callback.callback = cohost_io_interrupt;
    ctx->interrupt_callback.opaque = d;
}

// Every URL a demuxer opens through the context (an HLS playlist, its segments and keys) must name the host the
// source was checked for: a playlist cannot send the reader to another host. `original` is the default io_open.
typedef struct {
    char host[256];
    int (*original)(struct AVFormatContext *, AVIOContext **, const char *, int, AVDictionary **);
} cohost_io_pin;

static inline int cohost_io_open_pinned(struct AVFormatContext *s, AVIOContext **pb, const char *url, int flags,
                                        AVDictionary **options) {
    cohost_io_pin *pin = (cohost_io_pin *)s->opaque;
    char proto[32], host[256], path[8];
    int port = -1;
    host[0] = 0;
    av_url_split(proto, sizeof proto, NULL, 0, host, sizeof host, &port, path, sizeof path, url);
    if (!pin || !pin->original || host[0] == 0 || av_strcasecmp(host, pin->host) != 0) return AVERROR(EACCES);
    return pin->original(s, pb, url, flags, options);
}

// Whether `url` names the pinned host: an RTSP server's redirect (which libavformat follows inside its open) leaves
// the context's URL naming another.
static inline int cohost_url_is_pinned(const char *url, const cohost_io_pin *pin) {
    char proto[32], host[256], path[8];
    int port = -1;
    host[0] = 0;
    if (!url) return 0;
    av_url_split(proto, sizeof proto, NULL, 0, host, sizeof host, &port, path, sizeof path, url);
    return host[0] != 0 && av_strcasecmp(host, pin->host) == 0;
}

static inline void cohost_pin_io(AVFormatContext *ctx, cohost_io_pin *pin) {
    pin->original = ctx->io_open;
    ctx->opaque = pin;
    ctx->io_open = cohost_io_open_pinned;
}

static inline int64_t cohost_av_nopts_value(void) { return AV_NOPTS_VALUE; }
// Set from another thread while the reader may be blocked inside libavformat.
static inline void cohost_io_cancel(cohost_io_deadline *d) { d->cancelled = 1; }

static inline int cohost_averror_again(void) { return AVERROR(EAGAIN); }

// Resamples one decoded audio frame (any layout, rate and sample format) into interleaved float at the rate and
// channel count `swr` was set up for; returns the frames written into `out` (at most `capacity`), or an AVERROR.
static inline int cohost_swr_convert_frame(SwrContext *swr, float *out, int capacity, const AVFrame *frame) {
    uint8_t *planes[1] = {(uint8_t *)out};
    return swr_convert(swr, planes, capacity, (const uint8_t **)frame->extended_data, frame->nb_samples);
}

// Sets `swr` up for `frame`'s format into interleaved float at `rate` with `channels` (1 or 2).
static inline int cohost_swr_setup(SwrContext **swr, const AVFrame *frame, int rate, int channels) {
    AVChannelLayout out;
    av_channel_layout_default(&out, channels);
    AVChannelLayout in;
    if (frame->ch_layout.nb_channels > 0 && frame->ch_layout.order != AV_CHANNEL_ORDER_UNSPEC) {
        av_channel_layout_copy(&in, &frame->ch_layout);
    } else {
        av_channel_layout_default(&in, frame->ch_layout.nb_channels > 0 ? frame->ch_layout.nb_channels : 1);
    }
    swr_free(swr);
    int status = swr_alloc_set_opts2(swr, &out, AV_SAMPLE_FMT_FLT, rate, &in, (enum AVSampleFormat)frame->format,
                                     frame->sample_rate, 0, NULL);
    av_channel_layout_uninit(&in);
    av_channel_layout_uninit(&out);
    if (status < 0) return status;
    return swr_init(*swr);
}

// Converts and scales a decoded picture into the three I420 planes given (any pixel format libswscale reads).
static inline int cohost_sws_to_i420(struct SwsContext **sws, const AVFrame *frame, uint8_t *y, int sy, uint8_t *u,
                                     int su, uint8_t *v, int sv, int width, int height) {
    *sws = sws_getCachedContext(*sws, frame->width, frame->height, (enum AVPixelFormat)frame->format, width, height,
                                AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    if (!*sws) return AVERROR(EINVAL);
    uint8_t *dst[4] = {y, u, v, NULL};
    int strides[4] = {sy, su, sv, 0};
    return sws_scale(*sws, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, dst, strides);
}

static inline void cohost_sws_free(struct SwsContext *sws) { sws_freeContext(sws); }

// libavformat's log lines may quote a URL with its credentials (rtsp://user:password@camera/…, an SRT passphrase):
// every line goes to stderr with the user information of any URL and any passphrase in it replaced by "***".
static inline void cohost_redacting_log(void *avcl, int level, const char *fmt, va_list vl) {
    if (level > av_log_get_level()) return;
    char line[1024];
    int prefix = 1;
    av_log_format_line(avcl, level, fmt, vl, line, sizeof line, &prefix);
    char out[1100];
    size_t o = 0;
    for (size_t i = 0; line[i] && o < sizeof out - 16; ) {
        // An SRT URL's passphrase, in its query.
        if (strncmp(line + i, "passphrase=", 11) == 0) {
            memcpy(out + o, "passphrase=***", 14); o += 14; i += 11;
            while (line[i] && line[i] != '&' && line[i] != ' ' && line[i] != '\n') i++;
            continue;
        }
        if (line[i] == ':' && line[i + 1] == '/' && line[i + 2] == '/') {
            memcpy(out + o, "://", 3); o += 3; i += 3;
            size_t end = i;
            while (line[end] && line[end] != '/' && line[end] != ' ' && line[end] != '\n') end++;
            size_t at = end;
            for (size_t k = i; k < end; k++) if (line[k] == '@') at = k;
            if (at < end) { memcpy(out + o, "***", 3); o += 3; i = at; }
            continue;
        }
        out[o++] = line[i++];
    }
    out[o] = 0;
    fputs(out, stderr);
}

static inline void cohost_install_redacting_log(void) { av_log_set_callback(cohost_redacting_log); }

// A custom input (bytes from a socket libavformat does not own: an SRT connection a listener accepted). `read` is a C
// function; `opaque` is what it reads from. avformat_close_input does not free a custom AVIOContext: the owner calls
// cohost_free_custom_io after it.
typedef int (*cohost_read_fn)(void *opaque, uint8_t *buf, int size);

static inline AVIOContext *cohost_custom_io(AVFormatContext *ctx, cohost_read_fn read, void *opaque, int bufsize) {
    unsigned char *buffer = av_malloc(bufsize);
    if (!buffer) return NULL;
    AVIOContext *io = avio_alloc_context(buffer, bufsize, 0, opaque, read, NULL, NULL);
    if (!io) {
        av_free(buffer);
        return NULL;
    }
    ctx->pb = io;
    ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    return io;
}

static inline void cohost_free_custom_io(AVIOContext *io) {
    if (!io) return;
    av_freep(&io->buffer);
    avio_context_free(&io);
}

// Output: a muxer writing to a file descriptor the caller opened (with its own flags: O_EXCL, O_NOFOLLOW), each
// buffer straight to the kernel.
static inline int cohost_fd_write(void *opaque, const uint8_t *buf, int size) {
    int fd = (int)(intptr_t)opaque;
    int done = 0;
    while (done < size) {
        ssize_t n = write(fd, buf + done, (size_t)(size - done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        done += (int)n;
    }
    return size;
}

// Output: a muxer writing through a callback (a file descriptor, or the HLS packager's fragment sink), each buffer as
// it fills and at every flush. Not seekable: the MP4 muxer then writes fragments only.
static inline AVIOContext *cohost_callback_write_io(void *opaque, int (*write)(void *, const uint8_t *, int),
                                                    int bufsize) {
    unsigned char *buffer = av_malloc(bufsize);
    if (!buffer) return NULL;
    AVIOContext *io = avio_alloc_context(buffer, bufsize, 1, opaque, NULL,
                                         (int (*)(void *, uint8_t *, int))write, NULL);
    if (!io) {
        av_free(buffer);
        return NULL;
    }
    io->seekable = 0;
    return io;
}

static inline AVIOContext *cohost_fd_write_io(int fd, int bufsize) {
    return cohost_callback_write_io((void *)(intptr_t)fd, cohost_fd_write, bufsize);
}

// Opens `url` for writing with one of libavformat's protocols (srt), every blocking call under the deadline.
static inline int cohost_avio_open_write(AVIOContext **pb, const char *url, cohost_io_deadline *d,
                                         AVDictionary **options) {
    AVIOInterruptCB cb = { cohost_io_interrupt, d };
    return avio_open2(pb, url, AVIO_FLAG_WRITE, &cb, options);
}
