import COpenSSL

/// AES-128 encryption of single blocks with one fixed key — the Core specification's
/// security function `e` — through OpenSSL's libcrypto. The only file that sees OpenSSL.
///
/// The context is set up once per key: IRK resolution calls this for every new
/// resolvable private address and every configured IRK.
final class AES128: @unchecked Sendable {
    // @unchecked: the context is private and only used through `encryptBlock`, which the agent
    // calls from its one event-loop thread.
    private let context: OpaquePointer

    /// Nil unless `key` has 16 bytes (or libcrypto cannot make a context).
    init?(key: [UInt8]) {
        guard key.count == 16, let context = key.withUnsafeBufferPointer({ copenssl_aes128_new($0.baseAddress) }) else {
            return nil
        }
        self.context = context
    }

    deinit { copenssl_aes128_free(context) }

    /// Encrypts the 16 bytes at `input` into the 16 bytes at `output` (they may be the
    /// same), with no allocation: IRK resolution's hot call.
    func encryptBlock(_ input: UnsafeRawPointer, into output: UnsafeMutableRawPointer) -> Bool {
        copenssl_aes128_encrypt_block(context, input.assumingMemoryBound(to: UInt8.self),
                                      output.assumingMemoryBound(to: UInt8.self)) == 1
    }
}
