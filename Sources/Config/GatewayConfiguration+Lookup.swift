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
}
