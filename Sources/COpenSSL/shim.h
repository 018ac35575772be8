#ifndef BEACON_GATEWAY_COPENSSL_SHIM_H
#define BEACON_GATEWAY_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>

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

// SHA-256 of `length` bytes into 32 bytes at `out`; 1 on success.
static inline int copenssl_sha256(const unsigned char *data, size_t length, unsigned char *out) {
    unsigned int written = 0;
    return EVP_Digest(data, length, out, &written, EVP_sha256(), NULL) == 1 && written == 32;
}

// HMAC-SHA256 into 32 bytes at `out`; 1 on success.
static inline int copenssl_hmac_sha256(const unsigned char *key, int keyLength,
                                       const unsigned char *data, size_t length, unsigned char *out) {
    unsigned int written = 0;
    return HMAC(EVP_sha256(), key, keyLength, data, length, out, &written) != NULL && written == 32;
}
#endif
