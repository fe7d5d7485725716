// libcrypto's one-shot HMAC and its constant-time comparison: all the HMAC module uses of OpenSSL.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
