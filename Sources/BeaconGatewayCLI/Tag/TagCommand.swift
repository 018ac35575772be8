import Advertisements
import ArgumentParser
import Config
import HCI
import Journal
import PresenceProof

/// `beacon-gateway tag --id TAG`: a reference tag for the proof protocol (SPEC §16,
/// docs/proof-protocol.md, "The reference tag"; docs/cli.md).
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Act as a tag that answers a door's proof challenges.",
        discussion: """
        Advertises connectable (ADV_IND) from a static random address derived from the tag id \
        (with the iBeacon frame when --ibeacon is given) and serves the Presence Proof service, \
        answering each challenge with the tag's key: from --key-file (64 hex digits), or derived \
        from the site master key and the tag id as the door derives it. Logs each challenge \
        answered, never a key. Exit 0 after --seconds or on SIGINT/SIGTERM, 1 when the \
        controller fails, 2 on usage errors.
        """
    )

    @Option(name: .long, help: "The tag id (as in the door's configuration).")
    var id: String

    @Option(name: .customLong("key-file"), help: "The tag's own key K_tag: a 0600 file with 64 hex digits.")
    var keyFile: String?

    @Option(name: .customLong("master-key-file"), help: "The site master key file: K_tag is derived from it and --id.")
    var masterKeyFile: String?

    @Option(name: .long, help: "Also advertise this iBeacon identity, UUID:MAJOR:MINOR.")
    var ibeacon: String?

    @Option(name: .customLong("interval-ms"), help: "Advertising interval in milliseconds, 20…10240 (default 100).")
    var intervalMs: Int = 100

    @Option(name: .long, help: "The controller (default hci0), e.g. hci1, tcp:HOST:PORT, serial:/dev/ttyACM0.")
    var transport: String?

    @Option(name: .long, help: "Stop after this many seconds (default: until SIGINT/SIGTERM).")
    var seconds: Int?

    func validate() throws {
        guard Identifier.isValid(id) else {
            throw ValidationError("--id must be 1 to 64 letters, digits or . _ - : @, got \"\(id)\"")
        }
        guard (keyFile == nil) != (masterKeyFile == nil) else {
            throw ValidationError("give exactly one of --key-file and --master-key-file")
        }
        if let ibeacon { _ = try iBeacon(ibeacon) }
        guard (20 ... 10240).contains(intervalMs) else { throw ValidationError("--interval-ms must be 20…10240, got \(intervalMs)") }
        if let seconds, !(1 ... 31_536_000).contains(seconds) {
            throw ValidationError("--seconds must be 1…31536000, got \(seconds)")
        }
    }

    private func iBeacon(_ text: String) throws -> TagIdentity {
        do {
            return try TagIdentity.parse(key: "ibeacon", value: text)
        } catch {
            throw ValidationError("--ibeacon: \(error)")
        }
    }

    func run() throws {
        let spec = try transportSpec(option: transport, otherwise: .userChannel(index: 0))
        let key: TagKey
        switch (keyFile, masterKeyFile) {
        case (let path?, _):
            // A tag key file has the master key file's form and checks: 64 hex digits, 0600.
            switch MasterKeyFile.read(path: path).map({ TagKey(bytes: $0.bytes) }) {
            case .success(let own?): key = own
            case .success(nil): throw GatewayExitCode.configurationError  // 32 bytes read: never
            case .failure(let failure):
                printError("tag: --key-file " + failure.message)
                throw GatewayExitCode.configurationError
            }
        case (nil, let path?):
            switch MasterKeyFile.read(path: path) {
            case .success(let master): key = TagKey.derive(masterKey: master, tagId: id)
            case .failure(let failure):
                printError("tag: --master-key-file " + failure.message)
                throw GatewayExitCode.configurationError
            }
        default:
            throw GatewayExitCode.configurationError
        }
        let session = TagSession(tagId: id, key: key, iBeacon: try ibeacon.map(iBeacon), transport: spec,
                                 intervalUnits: UInt16(intervalMs * 1000 / 625))
        guard session.run(limit: seconds.map { .seconds(Int64($0)) }) else { throw GatewayExitCode.runtimeFailure }
    }
}
