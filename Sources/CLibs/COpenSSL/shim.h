#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>
// Function-like macros do not import into Swift: one inline wrapper each.
static inline long cohost_dtls_get_timeout(SSL *ssl, struct timeval *tv) { return DTLSv1_get_timeout(ssl, tv); }
static inline long cohost_dtls_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }
static inline long cohost_dtls_set_link_mtu(SSL *ssl, long mtu) { return DTLS_set_link_mtu(ssl, mtu); }
static inline long cohost_ssl_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
static inline long cohost_bio_set_mem_eof_return(BIO *bio, long v) { return BIO_set_mem_eof_return(bio, v); }
static inline long cohost_ssl_ctx_set_read_ahead(SSL_CTX *ctx, long m) { return SSL_CTX_set_read_ahead(ctx, m); }
static inline uint64_t cohost_ssl_op_no_query_mtu(void) { return SSL_OP_NO_QUERY_MTU; }
static inline uint64_t cohost_ssl_op_cookie_exchange(void) { return SSL_OP_COOKIE_EXCHANGE; }
static inline uint64_t cohost_ssl_op_no_renegotiation(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline int cohost_ssl_set_app_data(SSL *ssl, void *data) { return SSL_set_app_data(ssl, data); }
static inline void *cohost_ssl_get_app_data(const SSL *ssl) { return SSL_get_app_data(ssl); }
static inline long cohost_ssl_ctx_set_ecdh_auto(SSL_CTX *ctx) { return SSL_CTX_set1_groups_list(ctx, "P-256:X25519"); }
static inline long cohost_ssl_ctx_set_min_dtls12(SSL_CTX *ctx) { return SSL_CTX_set_min_proto_version(ctx, DTLS1_2_VERSION); }
static inline EVP_PKEY *cohost_ec_p256_key(void) { return EVP_EC_gen("P-256"); }
