#ifndef COHOST_CSCALE_H
#define COHOST_CSCALE_H
// Bilinear (2-tap) scaling of one 8-bit plane, with the sampling positions libyuv's kFilterBilinear uses.
// libyuv's horizontal pass (ScaleFilterCols) computes every output pixel's source position as it goes; here
// the positions of each output size are worked out once into a table, so the per-frame pass is one byte
// shuffle and one multiply-add per 8 pixels (SSSE3). See Codecs/BilinearScaler.swift for why.
#include <stddef.h>
#include <stdint.h>

/// Bytes of horizontal table for scaling rows of `src_width` pixels to `dst_width`, or 0 when this kernel cannot
/// (sizes below 1 or above 1 << 15, or a step so large, about 2 source pixels per output pixel, that eight outputs
/// would read more than 16 source bytes): such downscales are left to libyuv.
size_t cscale_table_size(int src_width, int dst_width);

/// Fills `table` (`cscale_table_size` bytes) for `src_width` → `dst_width`.
void cscale_table_build(uint8_t *table, int src_width, int dst_width);

/// Bytes the row buffer of `cscale_plane` needs for sources `src_width` wide.
size_t cscale_row_size(int src_width);

/// Scales a `src_width`×`src_height` plane into `dst_width`×`dst_height` (both ≥ 1) with `table` built for
/// (`src_width`, `dst_width`) and a scratch `row` of `cscale_row_size(src_width)` bytes. Reads only the source
/// rectangle and writes only the destination rectangle. `simd` 0 forces the portable C path (same results).
void cscale_plane(const uint8_t *src, int src_stride, int src_width, int src_height,
                  uint8_t *dst, int dst_stride, int dst_width, int dst_height,
                  const uint8_t *table, uint8_t *row, int simd);

/// 1 when this CPU runs the SIMD path (x86-64 with SSSE3); the C path gives the same bytes, only slower.
int cscale_has_simd(void);

#endif
