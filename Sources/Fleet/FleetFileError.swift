/// Why a file the fleet's reports keep could not be written or read: node_exporter's
/// metrics textfile (`TextfileWriter`) or the persisted server roster (`RosterFile`).
public struct FleetFileError: Error, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
