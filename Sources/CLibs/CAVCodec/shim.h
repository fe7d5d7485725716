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
