import COpenSSL

/// AES-128 encryption of single blocks with one fixed key — the Core specification's
/// security function `e` — through OpenSSL's libcrypto. The only file that sees OpenSSL.
///
/// The context is set up once per key: IRK resolution calls this for every new
/// resolvable private address and every configured IRK.
final class AES128: @unchecked Sendable {
    // @unchecked: the context is private and only used through `encrypt`, which the agent
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

    /// Encrypts one 16-byte block in place; false (block untouched) on any failure.
    func encrypt(_ block: inout [UInt8]) -> Bool {
        guard block.count == 16 else { return false }
        var output = [UInt8](repeating: 0, count: 16)
        let ok = block.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                copenssl_aes128_encrypt_block(context, input.baseAddress, out.baseAddress) == 1
            }
        }
        if ok { block = output }
        return ok
    }
}
