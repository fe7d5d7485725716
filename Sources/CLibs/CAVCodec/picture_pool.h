// Decoded pictures in one buffer each, from a pool that lives as long as the decoder.
//
// libavcodec's default get_buffer2 gives every plane its own pooled buffer, so each reference the decoder
// takes to a picture (its output, its reference frames) costs three AVBufferRef allocations; with the three
// planes in one buffer it costs one. The layout follows libavcodec's own (decode.c, update_frame_pool):
// dimensions from avcodec_align_dimensions2, the width widened until every line size meets the stride
// alignment, 16 + STRIDE_ALIGN spare bytes after each plane for SIMD reads past the end. The pool is rebuilt
// when the picture size changes; buffers still held return to the old pool, which frees itself after.
// Formats other than 8-bit 4:2:0 (which Cohost refuses after decoding anyway) take the default path.
#ifndef COHOST_PICTURE_POOL_H
#define COHOST_PICTURE_POOL_H

#include <libavcodec/avcodec.h>
#include <libavutil/buffer.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>
#include <stdint.h>

#define COHOST_PICTURE_ALIGN 64  /* ≥ libavcodec's STRIDE_ALIGN on any x86/ARM build (64 with AVX-512) */

typedef struct CohostPicturePool {
    AVBufferPool *pool;
    int width, height, format;  // the picture the pool's buffers are laid out for
    int linesize[3];
    size_t offset[3];
    int64_t pictures;           // pictures handed out (for tests: every one came from here)
    int64_t layouts;            // pools built (1 per picture size)
} CohostPicturePool;

static inline size_t cohost_align_up(size_t n) { return (n + COHOST_PICTURE_ALIGN - 1) & ~(size_t)(COHOST_PICTURE_ALIGN - 1); }

static inline int cohost_picture_pool_layout(AVCodecContext *ctx, CohostPicturePool *p, const AVFrame *frame) {
    int w = frame->width, h = frame->height, align[AV_NUM_DATA_POINTERS], linesize[4], unaligned;
    avcodec_align_dimensions2(ctx, &w, &h, align);
    // A build wanting more than 64-byte alignment (none today) gets libavcodec's own buffers.
    for (int i = 0; i < 3; i++) if (align[i] > COHOST_PICTURE_ALIGN) return AVERROR(ERANGE);
    do {
        if (av_image_fill_linesizes(linesize, (enum AVPixelFormat)frame->format, w) < 0) return AVERROR(EINVAL);
        w += w & ~(w - 1);  // the lowest set bit: doubles the alignment of w for the next try
        unaligned = 0;
        for (int i = 0; i < 3; i++) unaligned |= linesize[i] % (align[i] > 0 ? align[i] : 1);
    } while (unaligned);
    size_t rows[3] = { (size_t)h, (size_t)((h + 1) >> 1), (size_t)((h + 1) >> 1) }, offset = 0;
    for (int i = 0; i < 3; i++) {
        p->linesize[i] = linesize[i];
        p->offset[i] = offset;
        offset += cohost_align_up((size_t)linesize[i] * rows[i] + 16 + COHOST_PICTURE_ALIGN - 1);
    }
    av_buffer_pool_uninit(&p->pool);
    // + ALIGN: av_malloc's alignment depends on the build; the planes start at the next 64-byte boundary.
    p->pool = av_buffer_pool_init(offset + COHOST_PICTURE_ALIGN, av_buffer_allocz);
    if (!p->pool) return AVERROR(ENOMEM);
    p->width = frame->width;
    p->height = frame->height;
    p->format = frame->format;
    p->layouts++;
    return 0;
}

/// get_buffer2 for decoders whose AVCodecContext.opaque is a CohostPicturePool.
static inline int cohost_get_picture_buffer(AVCodecContext *ctx, AVFrame *frame, int flags) {
    CohostPicturePool *p = (CohostPicturePool *)ctx->opaque;
    if (!p || !(ctx->codec->capabilities & AV_CODEC_CAP_DR1) ||
        (frame->format != AV_PIX_FMT_YUV420P && frame->format != AV_PIX_FMT_YUVJ420P))
        return avcodec_default_get_buffer2(ctx, frame, flags);
    if (!p->pool || p->width != frame->width || p->height != frame->height || p->format != frame->format) {
        int status = cohost_picture_pool_layout(ctx, p, frame);
        if (status == AVERROR(ERANGE)) return avcodec_default_get_buffer2(ctx, frame, flags);
        if (status < 0) return status;
    }
    AVBufferRef *buf = av_buffer_pool_get(p->pool);
    if (!buf) return AVERROR(ENOMEM);
    uint8_t *base = (uint8_t *)cohost_align_up((size_t)(uintptr_t)buf->data);
    for (int i = 0; i < 3; i++) {
        frame->data[i] = base + p->offset[i];
        frame->linesize[i] = p->linesize[i];
    }
    frame->buf[0] = buf;
    frame->extended_data = frame->data;
    p->pictures++;
    return 0;
}

/// Installs a picture pool on a decoder context before avcodec_open2; NULL when out of memory.
static inline CohostPicturePool *cohost_picture_pool_install(AVCodecContext *ctx) {
    CohostPicturePool *p = (CohostPicturePool *)av_mallocz(sizeof(CohostPicturePool));
    if (!p) return NULL;
    ctx->opaque = p;
    ctx->get_buffer2 = cohost_get_picture_buffer;
    return p;
}

/// Frees the pool: call after avcodec_free_context (the decoder may still hand pictures back while closing;
/// those return to the AVBufferPool, which outlives this struct until its last buffer comes home).
static inline void cohost_picture_pool_free(CohostPicturePool *p) {
    if (!p) return;
    av_buffer_pool_uninit(&p->pool);
    av_free(p);
}

#endif
