#ifndef BEACON_GATEWAY_COPENSSL_SHIM_H
#define BEACON_GATEWAY_COPENSSL_SHIM_H
#include <openssl/evp.h>

// One AES-128 ECB context per key, padding off: each 16-byte update is one block.
static inline EVP_CIPHER_CTX *copenssl_aes128_new(const unsigned char *key) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    return ctx;
}

static inline int copenssl_aes128_encrypt_block(EVP_CIPHER_CTX *ctx, const unsigned char *in, unsigned char *out) {
    int length = 0;
    return EVP_EncryptUpdate(ctx, out, &length, in, 16) == 1 && length == 16;
}

static inline void copenssl_aes128_free(EVP_CIPHER_CTX *ctx) { EVP_CIPHER_CTX_free(ctx); }
#endif
