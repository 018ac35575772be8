import HCI
@testable import Host

/// A scripted controller that answers commands like a real one, in memory.
///
/// Profiles mimic the virtual controllers the project tests against: `bumble()` sets
/// the LE extended advertising feature but lists no extended commands and ignores
/// Read RSSI; `modern()` lists and handles both families. It enforces "never mix
/// families" the way RootCanal does, answering 0x0C and recording the violation.
struct FakeController {
    var leFeatures: LEFeatures
    var supportedCommands: SupportedCommands
    var leBuffer = LEBufferSize(aclDataPacketLength: 251, totalACLDataPackets: 8)
    var buffer = BufferSize(aclDataPacketLength: 1021, totalACLDataPackets: 6)
    var states = LESupportedStates(rawValue: 0x0000_01FF_FFFF_FFFF)
    var filterAcceptListSize: UInt8 = 16
    var address = BluetoothAddress("00:1A:7D:DA:71:13")!
    /// The last LE Set Random Address.
    private(set) var randomAddress: BluetoothAddress?
    var version = LocalVersionInformation(hciVersion: 0x0B, hciRevision: 1, lmpVersion: 0x0B, manufacturer: 0x0059, lmpSubversion: 2)

    /// Opcodes never answered (as Bumble does for commands it has no handler for).
    var silentOpcodes: Set<Opcode> = []
    /// Opcodes answered with an error status.
    var failingOpcodes: [Opcode: HCIStatus] = [:]
    /// Answers nothing at all while true (a stalled controller).
    var isStalled = false
    /// Drop the answer to the next command with this opcode once.
    var dropNextAnswer: Opcode?
    /// Credits in the next answer, then back to 1.
    var creditsInNextAnswer: UInt8?

    private(set) var received: [Opcode] = []
    private(set) var receivedPackets: [HCIPacket] = []
    private(set) var familyViolations = 0
    private var familyInUse: CommandFamily?
    private(set) var isScanning = false
    /// Answers a create-connection with 0x0C while scanning, as a controller whose LE
    /// Supported States forbid scanning and initiating at once.
    var rejectsInitiatingWhileScanning = false
    private(set) var createConnectionsWhileScanning = 0
    private(set) var createConnectionsAccepted = 0

    init(leFeatures: LEFeatures, supportedCommands: SupportedCommands) {
        self.leFeatures = leFeatures
        self.supportedCommands = supportedCommands
    }

    static let legacyCommandSet: [Opcode] = [
        .disconnect, .setEventMask, .reset, .readLocalVersionInformation, .readLocalSupportedFeatures,
        .readBufferSize, .readBDAddr, .readRSSI, .leSetEventMask, .leReadBufferSize, .leReadLocalSupportedFeatures,
        .leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData,
        .leSetAdvertisingEnable, .leSetScanParameters, .leSetScanEnable, .leCreateConnection, .leCreateConnectionCancel,
        .leReadFilterAcceptListSize, .leClearFilterAcceptList, .leAddDeviceToFilterAcceptList,
        .leRemoveDeviceFromFilterAcceptList, .leConnectionUpdate, .leReadSupportedStates,
    ]
    static let extendedCommandSet: [Opcode] = [
        .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData, .leSetExtendedAdvertisingEnable,
        .leSetExtendedScanParameters, .leSetExtendedScanEnable, .leExtendedCreateConnection,
    ]

    static func commands(_ opcodes: [Opcode]) -> SupportedCommands {
        var commands = SupportedCommands.none
        for opcode in opcodes { commands.insert(opcode) }
        return commands
    }

    /// Bumble's virtual controller: extended feature bit, legacy commands only,
    /// Read RSSI listed but never answered, supported states without scan+initiate.
    static func bumble() -> FakeController {
        var controller = FakeController(
            leFeatures: [.encryption, .extendedAdvertising, .codedPHY, .le2MPHY, .periodicAdvertising],
            supportedCommands: commands(legacyCommandSet)
        )
        controller.silentOpcodes = [.readRSSI]
        controller.leBuffer = LEBufferSize(aclDataPacketLength: 27, totalACLDataPackets: 64)
        controller.states = LESupportedStates(rawValue: 0x0000_03FF_FF3F_FFFF)
        controller.filterAcceptListSize = 8
        return controller
    }

    /// A controller with both families (as RootCanal reports).
    static func modern() -> FakeController {
        FakeController(leFeatures: [.encryption, .extendedAdvertising, .codedPHY, .le2MPHY],
                       supportedCommands: commands(legacyCommandSet + extendedCommandSet))
    }

    /// Takes one packet from the host; returns the packets the controller sends back.
    mutating func receive(_ packet: HCIPacket) -> [HCIPacket] {
        guard let (opcode, parameters) = try? HCICommandPacket.split(packet) else { return [] }
        received.append(opcode)
        receivedPackets.append(packet)
        if isStalled || silentOpcodes.contains(opcode) { return [] }
        if dropNextAnswer == opcode {
            dropNextAnswer = nil
            return []
        }
        let credits = creditsInNextAnswer ?? 1
        creditsInNextAnswer = nil
        func complete(_ returnParameters: [UInt8]) -> [HCIPacket] {
            [HCIEvent.commandComplete(HCICommandComplete(numberOfCommandPackets: credits, opcode: opcode, returnParameters: returnParameters[...])).packet]
        }
        if let status = failingOpcodes[opcode] { return complete([status.rawValue]) }
        // The family rule: after reset, the first LE advertising/scanning command fixes it.
        let family: CommandFamily? = opcode.isExtendedFamily ? .extended : (opcode.isLegacyFamily ? .legacy : nil)
        if let family {
            if let inUse = familyInUse, inUse != family {
                familyViolations += 1
                return complete([HCIStatus.commandDisallowed.rawValue])
            }
            familyInUse = family
        }
        switch opcode {
        case .reset:
            familyInUse = nil
            isScanning = false
            return complete([0])
        case .readLocalVersionInformation: return complete(version.encoded)
        case .readLocalSupportedCommands: return complete(LocalSupportedCommands(commands: supportedCommands).encoded)
        case .readLocalSupportedFeatures: return complete(LocalSupportedFeatures(features: [.leSupportedController]).encoded)
        case .readBufferSize: return complete(buffer.encoded)
        case .readBDAddr: return complete(BDAddr(address: address).encoded)
        case .leReadBufferSize: return complete(leBuffer.encoded)
        case .leReadLocalSupportedFeatures: return complete(LELocalSupportedFeatures(features: leFeatures).encoded)
        case .leReadSupportedStates: return complete(LESupportedStatesReturn(states: states).encoded)
        case .leReadFilterAcceptListSize: return complete(FilterAcceptListSize(size: filterAcceptListSize).encoded)
        case .readRSSI:
            let handle = (try? ReadRSSICommand(parameters: parameters).connectionHandle) ?? 0
            return complete(ConnectionRSSI(connectionHandle: handle, rssi: -60).encoded)
        case .leSetScanParameters, .leSetExtendedScanParameters:
            return complete([isScanning ? HCIStatus.commandDisallowed.rawValue : 0])
        case .leSetRandomAddress:
            // Core 5.x controllers refuse a new random address while they scan.
            guard !isScanning, let command = try? LESetRandomAddressCommand(parameters: parameters) else {
                return complete([HCIStatus.commandDisallowed.rawValue])
            }
            randomAddress = command.address
            return complete([0])
        case .leSetScanEnable:
            isScanning = (try? LESetScanEnableCommand(parameters: parameters).enable) ?? false
            return complete([0])
        case .leSetExtendedScanEnable:
            isScanning = (try? LESetExtendedScanEnableCommand(parameters: parameters).enable) ?? false
            return complete([0])
        case .leCreateConnection, .leExtendedCreateConnection:
            if isScanning { createConnectionsWhileScanning += 1 }
            let refused = isScanning && rejectsInitiatingWhileScanning
            if !refused { createConnectionsAccepted += 1 }
            return [HCIEvent.commandStatus(HCICommandStatus(
                status: refused ? .commandDisallowed : .success, numberOfCommandPackets: credits, opcode: opcode)).packet]
        case .disconnect:
            return [HCIEvent.commandStatus(HCICommandStatus(status: .success, numberOfCommandPackets: credits, opcode: opcode)).packet]
        default:
            guard let length = opcode.returnParametersLength else {
                return complete([HCIStatus.unknownCommand.rawValue])
            }
            return complete([UInt8](repeating: 0, count: length))
        }
    }
}
