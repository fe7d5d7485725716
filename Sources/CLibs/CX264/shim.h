#include <stdint.h>
#include <x264.h>
// x264_encoder_open is a macro naming the build's versioned symbol.
static inline x264_t *cohost_x264_encoder_open(x264_param_t *p) { return x264_encoder_open(p); }
