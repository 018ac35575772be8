import Advertisements
import ArgumentParser
import Config
import HCI
import Journal

#if canImport(Glibc)
import Glibc
import PresenceProof
#endif

/// `beacon-gateway keygen`: provisioning keys (see docs/proof-protocol.md, docs/cli.md).
///
/// `--tag ID` prints the key derived for a tag from the site master key, for flashing
/// into the tag. `--new-master PATH` creates a master key file (0600, never
/// overwriting); the key itself goes to stdout only with `--print`.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Provisioning keys: derive a tag's proof key, or create a new site master key.",
        discussion: """
        beacon-gateway keygen --tag tag-1001                      (master key from the configuration)
        beacon-gateway keygen --tag tag-1001 --master-key-file master.key
        beacon-gateway keygen --new-master /etc/beacon-gateway/master.key
        """
    )

    @Option(name: .long, help: "Print the proof key derived for this tag id (64 hex digits).")
    var tag: String?

    @Option(name: .long, help: "Create a new master key file at this path (mode 0600; never overwrites).")
    var newMaster: String?

    @Flag(name: .long, help: "With --new-master: also print the new key on standard output.")
    var print = false

    @Option(name: .long, help: "Configuration file whose [security] master_key_file is used.")
    var config: String = defaultConfigurationPath

    @Option(name: .long, help: "Master key file to derive from, instead of the configuration's.")
    var masterKeyFile: String?

    func validate() throws {
        guard (tag == nil) != (newMaster == nil) else {
            throw ValidationError("give exactly one of --tag ID or --new-master PATH")
        }
        if tag != nil, print { throw ValidationError("--print goes with --new-master") }
        if newMaster != nil, masterKeyFile != nil { throw ValidationError("--master-key-file goes with --tag") }
        if let tag, tag.isEmpty { throw ValidationError("--tag needs a tag id") }
    }

    func run() throws {
        if let newMaster {
            try createMaster(at: newMaster)
        } else if let tag {
            let (master, configuration) = try loadMaster()
            writeStandardOutput(HexText.lowercase(TagKey.derive(masterKey: master, tagId: tag).bytes) + "\n")
            if let configured = configuration?.tag(id: tag), configured.tag.key != nil {
                printError("note: \(tag) has its own key = \"…\" in \(config); the gateway uses that one, not this derived key")
            }
        }
    }

    // MARK: Master key

    /// The master key, and the configuration when it came from there.
    private func loadMaster() throws -> (MasterKey, GatewayConfiguration?) {
        if let masterKeyFile {
            switch MasterKeyFile.read(path: masterKeyFile) {
            case .success(let key): return (key, nil)
            case .failure(let error):
                printError(error.message)
                throw GatewayExitCode.configurationError
            }
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(path: config)
        } catch {
            printError(error.description)
            printError("\(config): \(error.issues.count) problem\(error.issues.count == 1 ? "" : "s"); give --master-key-file to derive without it")
            throw GatewayExitCode.configurationError
        }
        guard let bytes = configuration.security.masterKey, let key = MasterKey(bytes: bytes) else {
            printError("\(config): no [security] master_key_file to derive tag keys from; give --master-key-file PATH")
            throw GatewayExitCode.configurationError
        }
        return (key, configuration)
    }

    private func createMaster(at path: String) throws {
        var generator = SystemRandomNumberGenerator()
        let key = MasterKey.generate(using: &generator)
        switch MasterKeyFile.create(path: path, content: key.fileContent) {
        case .success(let owner):
            let readable = owner == .serviceUser
                ? "mode 0600, owner \(SecretFileRule.serviceUser): the service reads it"
                : "mode 0600, owned by whoever ran this; the service reads it as the user \(SecretFileRule.serviceUser): "
                    + "`chown \(SecretFileRule.serviceUser): \(path)`"
            printError("wrote a new master key to \(path) (\(readable)); set [security] master_key_file = \"\(path)\"")
            if print { writeStandardOutput(HexText.lowercase(key.bytes) + "\n") }
        case .failure(let error):
            printError(error.message)
            throw GatewayExitCode.runtimeFailure
        }
    }
}
