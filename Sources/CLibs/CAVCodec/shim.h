#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
// AVERROR(e) and AVERROR_EOF are function-like or multi-operator macros.
static inline int cohost_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int cohost_averror_eof(void) { return AVERROR_EOF; }
static inline void cohost_av_error_string(int err, char *buf, size_t size) { av_strerror(err, buf, size); }
#include "picture_pool.h"

// A planar audio frame with all its planes in one buffer. av_frame_get_buffer gives each plane its own, and
// every reference libavcodec takes to the frame (avcodec_send_frame takes one per frame sent) then costs an
// AVBufferRef allocation per plane instead of one. `frame` has format, nb_samples and ch_layout set and no
// buffer yet.
static inline int cohost_audio_frame_single_buffer(AVFrame *frame) {
    int channels = frame->ch_layout.nb_channels, linesize = 0;
    if (channels < 1 || channels > AV_NUM_DATA_POINTERS || frame->nb_samples < 1 || frame->buf[0])
        return AVERROR(EINVAL);
    int plane = av_samples_get_buffer_size(&linesize, 1, frame->nb_samples, (enum AVSampleFormat)frame->format, 0);
    if (plane < 0) return plane;
    AVBufferRef *buf = av_buffer_alloc((size_t)plane * (size_t)channels);
    if (!buf) return AVERROR(ENOMEM);
    for (int i = 0; i < channels; i++) frame->data[i] = buf->data + (size_t)plane * (size_t)i;
    frame->linesize[0] = linesize;
    frame->buf[0] = buf;
    frame->extended_data = frame->data;
    return 0;
}

// Makes such a frame writable without av_frame_make_writable, which would reallocate one buffer per plane and
// copy the samples: the caller is about to overwrite them all.
static inline int cohost_audio_frame_make_writable(AVFrame *frame) {
    if (frame->buf[0] && av_frame_is_writable(frame)) return 0;
    av_buffer_unref(&frame->buf[0]);
    return cohost_audio_frame_single_buffer(frame);
}
