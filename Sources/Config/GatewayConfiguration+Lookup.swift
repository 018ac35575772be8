import Advertisements

extension GatewayConfiguration {
    /// The person with this id.
    public func person(id: String) -> Person? {
        persons.first { $0.id == id }
    }

    /// The tag with this id and the person carrying it (`prove TAG`, `calibrate TAG`).
    public func tag(id: String) -> (person: Person, tag: Tag)? {
        for person in persons {
            if let tag = person.tags.first(where: { $0.id == id }) { return (person, tag) }
        }
        return nil
    }

    /// Every person's id with the identities of all their tags: what an enrolled phone's
    /// identity must not already be (docs/security.md).
    public var personIdentities: [(personId: String, identities: [TagIdentity])] {
        persons.map { ($0.id, $0.tags.flatMap(\.identities)) }
    }
}
