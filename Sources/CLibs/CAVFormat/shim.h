#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/time.h>
#include <stdint.h>

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

static inline int64_t cohost_av_nopts_value(void) { return AV_NOPTS_VALUE; }
// Set from another thread while the reader may be blocked inside libavformat.
static inline void cohost_io_cancel(cohost_io_deadline *d) { d->cancelled = 1; }
