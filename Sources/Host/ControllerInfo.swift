import HCI

/// Which family of LE advertising/scanning/initiating commands the host uses with a
/// controller. Chosen once after reset and never mixed: controllers reject the other
/// family with "command disallowed" (0x0C).
public enum CommandFamily: Hashable, Sendable, CustomStringConvertible {
    case legacy
    case extended

    /// Extended only when the controller both claims the LE Extended Advertising
    /// feature and lists the extended scan and create-connection commands. Bumble's
    /// controller sets the feature bit but lists none of them: legacy.
    public static func choose(features: LEFeatures, commands: SupportedCommands) -> CommandFamily {
        features.contains(.extendedAdvertising) && commands.hasExtendedScanningAndInitiating ? .extended : .legacy
    }

    /// Whether `opcode` may be sent in this family.
    public func allows(_ opcode: Opcode) -> Bool {
        switch self {
        case .legacy: !opcode.isExtendedFamily
        case .extended: !opcode.isLegacyFamily
        }
    }

    public var description: String { self == .legacy ? "legacy" : "extended" }
}

/// The controller's ACL buffers for LE links.
public struct ACLBufferInfo: Hashable, Sendable {
    public var packetLength: Int
    public var packetCount: Int
    /// LE traffic uses the BR/EDR pool (LE Read Buffer Size answered zero).
    public var isShared: Bool

    public init(packetLength: Int, packetCount: Int, isShared: Bool) {
        self.packetLength = packetLength
        self.packetCount = packetCount
        self.isShared = isShared
    }
}

/// What bring-up learnt about the controller.
public struct ControllerInfo: Hashable, Sendable {
    public var version: LocalVersionInformation?
    public var address: BluetoothAddress
    public var lmpFeatures: LMPFeatures
    public var leFeatures: LEFeatures
    public var supportedCommands: SupportedCommands
    public var leBuffer: ACLBufferInfo
    public var supportedStates: LESupportedStates
    /// 0 when unknown.
    public var filterAcceptListSize: Int
    public var commandFamily: CommandFamily
    /// The scan timing in use.
    public var scanTiming: ScanTiming?
    /// The static random address set at bring-up because the controller has no usable
    /// public address (`HostConfiguration.staticRandomAddress`); nil when none was set.
    public var staticRandomAddress: BluetoothAddress?

    public init(version: LocalVersionInformation? = nil, address: BluetoothAddress = BluetoothAddress(rawValue: 0),
                lmpFeatures: LMPFeatures = [], leFeatures: LEFeatures = [], supportedCommands: SupportedCommands = .none,
                leBuffer: ACLBufferInfo = ACLBufferInfo(packetLength: 27, packetCount: 1, isShared: false),
                supportedStates: LESupportedStates = .assumedWhenUnknown, filterAcceptListSize: Int = 0,
                commandFamily: CommandFamily = .legacy, scanTiming: ScanTiming? = nil, staticRandomAddress: BluetoothAddress? = nil) {
        self.version = version
        self.address = address
        self.lmpFeatures = lmpFeatures
        self.leFeatures = leFeatures
        self.supportedCommands = supportedCommands
        self.leBuffer = leBuffer
        self.supportedStates = supportedStates
        self.filterAcceptListSize = filterAcceptListSize
        self.commandFamily = commandFamily
        self.scanTiming = scanTiming
        self.staticRandomAddress = staticRandomAddress
    }

    public var manufacturer: UInt16? { version?.manufacturer }

    /// A public address a peer can pair with: not all-zero (no BD_ADDR, or one a firmware
    /// loader never set) and not all-ones.
    public var hasPublicAddress: Bool { address.rawValue != 0 && address.rawValue != 0xFFFF_FFFF_FFFF }
}
