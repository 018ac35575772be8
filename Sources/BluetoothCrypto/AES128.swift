import COpenSSL

/// AES-128 encryption of single blocks with one fixed key — the Core specification's
/// security function `e` (Vol 3 Part H §2.2.1) — through OpenSSL's libcrypto. Key,
/// plaintext and ciphertext are most significant octet first, which is AES's own order.
///
/// The context is set up once per key: IRK resolution calls this for every new
/// resolvable private address and every configured IRK.
public final class AES128: @unchecked Sendable {
    // @unchecked: the context is private and only used through `encryptBlock`, which the agent
    // calls from its one event-loop thread.
    private let context: OpaquePointer

    /// Nil unless `key` has 16 bytes (or libcrypto cannot make a context).
    public init?(key: [UInt8]) {
        guard key.count == 16, let context = key.withUnsafeBufferPointer({ copenssl_aes128_new($0.baseAddress) }) else {
            return nil
        }
        self.context = context
    }

    deinit { copenssl_aes128_free(context) }

    /// Encrypts the 16 bytes at `input` into the 16 bytes at `output` (they may be the
    /// same), with no allocation: IRK resolution's hot call.
    public func encryptBlock(_ input: UnsafeRawPointer, into output: UnsafeMutableRawPointer) -> Bool {
        copenssl_aes128_encrypt_block(context, input.assumingMemoryBound(to: UInt8.self),
                                      output.assumingMemoryBound(to: UInt8.self)) == 1
    }
}

extension AES128 {
    /// The security function `e`: one block, allocated; for everything but the hot path.
    public static func e(key: Octets128, plaintext: Octets128) -> Octets128 {
        guard let cipher = AES128(key: key.mostSignificantFirst) else { preconditionFailure("libcrypto has no AES-128 context") }
        var block = plaintext.mostSignificantFirst
        let ok = block.withUnsafeMutableBytes { cipher.encryptBlock(UnsafeRawPointer($0.baseAddress!), into: $0.baseAddress!) }
        // Fails only without memory; a wrong block would be a silent wrong key.
        precondition(ok, "libcrypto could not encrypt an AES-128 block")
        return Octets128(validated: block)
    }
}
