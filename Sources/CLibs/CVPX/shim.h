#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
// vpx_codec_enc_init / vpx_codec_dec_init are macros carrying the ABI version.
static inline vpx_codec_err_t cohost_vpx_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, iface, cfg, flags);
}
static inline vpx_codec_err_t cohost_vpx_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, iface, cfg, flags);
}
static inline long cohost_vpx_dl_realtime(void) { return VPX_DL_REALTIME; }
static inline vpx_enc_frame_flags_t cohost_vpx_efflag_force_kf(void) { return VPX_EFLAG_FORCE_KF; }
// Typed control wrappers (the vpx_codec_control macro pastes the id into the helper name).
static inline vpx_codec_err_t cohost_vp8e_set_cpuused(vpx_codec_ctx_t *ctx, int v) { return vpx_codec_control(ctx, VP8E_SET_CPUUSED, v); }
