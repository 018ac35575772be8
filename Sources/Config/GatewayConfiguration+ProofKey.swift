import PresenceProof

extension GatewayConfiguration {
    /// The key `tag` proves itself with (see docs/proof-protocol.md): its own `key`, else
    /// the one derived from the site master key; nil with neither, and such a tag cannot
    /// prove. The one place this rule is written: `run` and `prove` both ask here.
    public func proofKey(for tag: Tag) -> TagKey? {
        tag.key.flatMap { TagKey(bytes: $0) }
            ?? security.masterKey.flatMap { MasterKey(bytes: $0) }.map { TagKey.derive(masterKey: $0, tagId: tag.id) }
    }
}
