#include <string.h>
#include "cscale.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <tmmintrin.h>
#define CSCALE_X86 1
#endif

// Table: a header, then one 48-byte block per 8 output pixels. Output pixel k of a block is
// (row[offset + shuffle[2k]] * weights[2k] + row[offset + shuffle[2k + 1]] * weights[2k + 1] + 64) >> 7,
// weights summing to 128 (7-bit fractions, as libyuv's SSSE3 code uses). The multiply-add takes signed 8-bit
// weights, so 128 itself cannot be one: a pixel that falls exactly on a source pixel reads it twice at 64 + 64.
typedef struct {
    int32_t src_width, dst_width, blocks, reserved;
} header_t;

typedef struct {
    uint8_t shuffle[16];
    int8_t weights[16];
    int32_t offset;
    uint8_t pad[12];
} block_t;

enum { LANES = 8, MAX_SIDE = 1 << 15 };

// libyuv's ScaleSlope for kFilterBilinear: a downscale samples at pixel centres (start half a step in, minus
// half a pixel), an upscale maps the first and last pixels onto each other.
static void slope(int src, int dst, int64_t *start, int64_t *step) {
    if (dst <= src) {
        *step = ((int64_t)src << 16) / dst;
        *start = (*step >> 1) - 32768;
    } else {
        *step = dst > 1 ? (((int64_t)src << 16) - 0x00010001) / (dst - 1) : 0;
        *start = 0;
    }
}

// Source index and 7-bit fraction of output pixel i; never reads past the last source pixel with weight.
static void position(int64_t start, int64_t step, int i, int src_width, int *index, int *fraction) {
    int64_t x = start + step * i;
    if (x < 0) x = 0;
    int xi = (int)(x >> 16), f = (int)((x >> 9) & 127);
    if (xi >= src_width - 1) { xi = src_width - 1; f = 0; }
    *index = xi;
    *fraction = f;
}

size_t cscale_table_size(int src_width, int dst_width) {
    if (src_width < 1 || dst_width < 1 || src_width > MAX_SIDE || dst_width > MAX_SIDE) return 0;
    int64_t start, step;
    slope(src_width, dst_width, &start, &step);
    int blocks = (dst_width + LANES - 1) / LANES;
    for (int b = 0; b < blocks; b++) {
        int first, last, f;
        position(start, step, b * LANES, src_width, &first, &f);
        int end = b * LANES + LANES - 1;
        if (end > dst_width - 1) end = dst_width - 1;
        position(start, step, end, src_width, &last, &f);
        if (last + 1 - first > 15) return 0;
    }
    return sizeof(header_t) + (size_t)blocks * sizeof(block_t);
}

void cscale_table_build(uint8_t *table, int src_width, int dst_width) {
    header_t header = { src_width, dst_width, (dst_width + LANES - 1) / LANES, 0 };
    memcpy(table, &header, sizeof header);
    int64_t start, step;
    slope(src_width, dst_width, &start, &step);
    for (int b = 0; b < header.blocks; b++) {
        block_t block;
        memset(&block, 0, sizeof block);
        int first, f;
        position(start, step, b * LANES, src_width, &first, &f);
        block.offset = first;
        for (int k = 0; k < LANES; k++) {
            int i = b * LANES + k;
            if (i > dst_width - 1) i = dst_width - 1;  // a partial last block repeats its last pixel
            int xi;
            position(start, step, i, src_width, &xi, &f);
            block.shuffle[2 * k] = (uint8_t)(xi - first);
            block.shuffle[2 * k + 1] = (uint8_t)(f == 0 ? xi - first : xi + 1 - first);
            block.weights[2 * k] = (int8_t)(f == 0 ? 64 : 128 - f);
            block.weights[2 * k + 1] = (int8_t)(f == 0 ? 64 : f);
        }
        memcpy(table + sizeof header + (size_t)b * sizeof block, &block, sizeof block);
    }
}

// The horizontal pass reads 16 bytes from a block's offset (at most the last pixel), so the row has spare bytes
// (their weight is always 0).
size_t cscale_row_size(int src_width) { return (size_t)src_width + 32; }

int cscale_has_simd(void) {
#ifdef CSCALE_X86
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) ? 1 : 0;
#else
    return 0;
#endif
}

// row = a + (b - a) * f / 128, rounded: the vertical pass, at 7-bit precision like libyuv's InterpolateRow.
static void blend_rows_c(uint8_t *row, const uint8_t *a, const uint8_t *b, int width, int f) {
    for (int i = 0; i < width; i++) row[i] = (uint8_t)((a[i] * (128 - f) + b[i] * f + 64) >> 7);
}

static void filter_row_c(uint8_t *dst, const uint8_t *row, const block_t *blocks, int dst_width) {
    for (int i = 0; i < dst_width; i++) {
        const block_t *block = &blocks[i / LANES];
        int k = i % LANES;
        const uint8_t *p = row + block->offset;
        dst[i] = (uint8_t)((p[block->shuffle[2 * k]] * block->weights[2 * k]
                            + p[block->shuffle[2 * k + 1]] * block->weights[2 * k + 1] + 64) >> 7);
    }
}

#ifdef CSCALE_X86
__attribute__((target("ssse3")))
static void blend_rows_ssse3(uint8_t *row, const uint8_t *a, const uint8_t *b, int width, int f) {
    const __m128i weights = _mm_set1_epi16((short)((f << 8) | (128 - f)));
    const __m128i round = _mm_set1_epi16(64);
    int i = 0;
    for (; i + 16 <= width; i += 16) {
        __m128i va = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i vb = _mm_loadu_si128((const __m128i *)(b + i));
        __m128i lo = _mm_maddubs_epi16(_mm_unpacklo_epi8(va, vb), weights);
        __m128i hi = _mm_maddubs_epi16(_mm_unpackhi_epi8(va, vb), weights);
        lo = _mm_srli_epi16(_mm_add_epi16(lo, round), 7);
        hi = _mm_srli_epi16(_mm_add_epi16(hi, round), 7);
        _mm_storeu_si128((__m128i *)(row + i), _mm_packus_epi16(lo, hi));
    }
    blend_rows_c(row + i, a + i, b + i, width - i, f);  // the tail: never read past the source row
}

__attribute__((target("ssse3")))
static void filter_row_ssse3(uint8_t *dst, const uint8_t *row, const block_t *blocks, int dst_width) {
    const __m128i round = _mm_set1_epi16(64);
    int full = dst_width / LANES;
    for (int b = 0; b < full; b++) {
        const block_t *block = &blocks[b];
        __m128i pixels = _mm_loadu_si128((const __m128i *)(row + block->offset));
        __m128i pairs = _mm_shuffle_epi8(pixels, _mm_loadu_si128((const __m128i *)block->shuffle));
        __m128i sums = _mm_maddubs_epi16(pairs, _mm_loadu_si128((const __m128i *)block->weights));
        sums = _mm_srli_epi16(_mm_add_epi16(sums, round), 7);
        _mm_storel_epi64((__m128i *)(dst + b * LANES), _mm_packus_epi16(sums, sums));
    }
    if (full * LANES < dst_width) {  // the partial last block: nothing written past dst_width
        uint8_t tail[LANES];
        filter_row_c(tail, row, blocks + full, dst_width - full * LANES);
        memcpy(dst + full * LANES, tail, (size_t)(dst_width - full * LANES));
    }
}
#endif

void cscale_plane(const uint8_t *src, int src_stride, int src_width, int src_height,
                  uint8_t *dst, int dst_stride, int dst_width, int dst_height,
                  const uint8_t *table, uint8_t *row, int simd) {
    const block_t *blocks = (const block_t *)(table + sizeof(header_t));
#ifndef CSCALE_X86
    simd = 0;
#endif
    int64_t y, dy;
    slope(src_height, dst_height, &y, &dy);
    const int64_t max_y = (int64_t)(src_height - 1) << 16;
    for (int j = 0; j < dst_height; j++, y += dy) {
        int64_t at = y < 0 ? 0 : (y > max_y ? max_y : y);
        int yi = (int)(at >> 16), f = (int)((at >> 9) & 127);
        const uint8_t *a = src + (ptrdiff_t)yi * src_stride;
        if (f == 0) {
            memcpy(row, a, (size_t)src_width);
        } else {
#ifdef CSCALE_X86
            if (simd) blend_rows_ssse3(row, a, a + src_stride, src_width, f);
            else
#endif
            blend_rows_c(row, a, a + src_stride, src_width, f);
        }
        uint8_t *out = dst + (ptrdiff_t)j * dst_stride;
#ifdef CSCALE_X86
        if (simd) { filter_row_ssse3(out, row, blocks, dst_width); continue; }
#endif
        filter_row_c(out, row, blocks, dst_width);
    }
}
