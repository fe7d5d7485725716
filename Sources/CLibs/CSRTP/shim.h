#include <srtp2/srtp.h>
// Function-like macros do not import into Swift.
static inline void cohost_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *p) { srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(p); }
static inline void cohost_srtp_policy_aes_cm_128_hmac_sha1_32(srtp_crypto_policy_t *p) { srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(p); }
// RFC 7714 AEAD_AES_128_GCM: 16-byte tag, 16-byte key + 12-byte salt.
static inline void cohost_srtp_policy_aead_aes_128_gcm(srtp_crypto_policy_t *p) { srtp_crypto_policy_set_aes_gcm_128_16_auth(p); }
// SRTP_MAX_TRAILER_LEN is a compound macro (two operands), which the importer skips.
static inline int cohost_srtp_max_trailer_len(void) { return SRTP_MAX_TRAILER_LEN; }
