#ifndef BEACON_GATEWAY_COPENSSL_SHIM_H
#define BEACON_GATEWAY_COPENSSL_SHIM_H
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/obj_mac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

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
// AES-CMAC (RFC 4493) with a 16-byte key, into 16 bytes at `out`; 1 on success.
static inline int copenssl_aes128_cmac(const unsigned char *key, const unsigned char *data, size_t length,
                                       unsigned char *out) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
    if (mac == NULL) return 0;
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
    int ok = 0;
    if (ctx != NULL) {
        char cipher[] = "AES-128-CBC";
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
            OSSL_PARAM_construct_end(),
        };
        size_t written = 0;
        ok = EVP_MAC_init(ctx, key, 16, params) == 1 && (length == 0 || EVP_MAC_update(ctx, data, length) == 1)
             && EVP_MAC_final(ctx, out, &written, 16) == 1 && written == 16;
        EVP_MAC_CTX_free(ctx);
    }
    EVP_MAC_free(mac);
    return ok;
}

// `length` bytes from libcrypto's generator; 1 on success.
static inline int copenssl_random_bytes(unsigned char *out, int length) { return RAND_bytes(out, length) == 1; }

// P-256 points travel here as X then Y, 32 bytes each, most significant first.

// 1 when `xy` is a point of P-256 (coordinates below p, on the curve, not infinity): the
// check an ECDH peer's key must pass (invalid-curve attacks).
static inline int copenssl_p256_is_valid_point(const unsigned char *xy) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    EC_POINT *point = group == NULL ? NULL : EC_POINT_new(group);
    unsigned char encoded[65];
    encoded[0] = 0x04;
    memcpy(encoded + 1, xy, 64);
    int ok = point != NULL && EC_POINT_oct2point(group, point, encoded, sizeof encoded, NULL) == 1
             && EC_POINT_is_on_curve(group, point, NULL) == 1 && EC_POINT_is_at_infinity(group, point) == 0;
    EC_POINT_free(point);
    EC_GROUP_free(group);
    return ok;
}

// A fresh P-256 key pair; NULL on failure. Free with copenssl_p256_free.
static inline EVP_PKEY *copenssl_p256_generate(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); }

// The key pair of a known private scalar (most significant first; 1 ≤ d < n), its public
// point computed; NULL when the scalar is out of range.
static inline EVP_PKEY *copenssl_p256_from_private(const unsigned char *scalar) {
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    BIGNUM *d = BN_bin2bn(scalar, 32, NULL);
    EC_POINT *point = group == NULL ? NULL : EC_POINT_new(group);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *key = NULL;
    unsigned char encoded[65];
    unsigned char be[32];
    if (point != NULL && d != NULL && ctx != NULL && !BN_is_zero(d) && BN_cmp(d, EC_GROUP_get0_order(group)) < 0
        && EC_POINT_mul(group, point, d, NULL, NULL, NULL) == 1
        && EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, encoded, sizeof encoded, NULL) == 65
        && BN_bn2nativepad(d, be, sizeof be) == sizeof be) {
        char name[] = "prime256v1";
        OSSL_PARAM params[] = {
            OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, name, 0),
            OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, be, sizeof be),
            OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded),
            OSSL_PARAM_construct_end(),
        };
        if (EVP_PKEY_fromdata_init(ctx) != 1 || EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_KEYPAIR, params) != 1) key = NULL;
    }
    OPENSSL_cleanse(be, sizeof be);
    EVP_PKEY_CTX_free(ctx);
    EC_POINT_free(point);
    BN_clear_free(d);
    EC_GROUP_free(group);
    return key;
}

// The public point of `key` into 64 bytes at `xy`; 1 on success.
static inline int copenssl_p256_public_point(const EVP_PKEY *key, unsigned char *xy) {
    unsigned char encoded[65];
    size_t length = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded, &length) != 1
        || length != sizeof encoded || encoded[0] != 0x04) return 0;
    memcpy(xy, encoded + 1, 64);
    return 1;
}

// ECDH: the X coordinate of `key`'s scalar times the peer's point `xy`, 32 bytes most
// significant first at `out`; 0 when the peer's point is invalid or libcrypto fails.
static inline int copenssl_p256_shared_secret(EVP_PKEY *key, const unsigned char *xy, unsigned char *out) {
    if (!copenssl_p256_is_valid_point(xy)) return 0;
    unsigned char encoded[65];
    encoded[0] = 0x04;
    memcpy(encoded + 1, xy, 64);
    char name[] = "prime256v1";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, name, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded),
        OSSL_PARAM_construct_end(),
    };
    EVP_PKEY_CTX *peerContext = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *peer = NULL;
    EVP_PKEY_CTX *derive = NULL;
    size_t length = 32;
    int ok = peerContext != NULL && EVP_PKEY_fromdata_init(peerContext) == 1
             && EVP_PKEY_fromdata(peerContext, &peer, EVP_PKEY_PUBLIC_KEY, params) == 1
             && (derive = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL)) != NULL
             && EVP_PKEY_derive_init(derive) == 1 && EVP_PKEY_derive_set_peer(derive, peer) == 1
             && EVP_PKEY_derive(derive, out, &length) == 1 && length == 32;
    EVP_PKEY_CTX_free(derive);
    EVP_PKEY_free(peer);
    EVP_PKEY_CTX_free(peerContext);
    return ok;
}

static inline void copenssl_p256_free(EVP_PKEY *key) { EVP_PKEY_free(key); }
#endif
