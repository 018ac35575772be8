import HCI
import Host

/// What enrolment advertises (SPEC §15): connectable and undirected (legacy ADV_IND, so
/// every phone sees it), with Flags, an Appearance, the 16-bit Heart Rate service UUID
/// and the name, so phones list the gateway in their Bluetooth settings. A name too long
/// for the advertising data goes there shortened and whole in the scan response.
public struct EnrolmentAdvertisement: Hashable, Sendable {
    /// Heart Rate service (0x180D): what phones list as a pairable accessory.
    public static let heartRateService: UInt16 = 0x180D
    /// Appearance "Generic Heart Rate Sensor" (0x0340), matching the service.
    public static let appearance: UInt16 = 0x0340
    /// 100 ms: phones in their settings page find it within a second or two.
    public static let intervalUnits: UInt16 = 160

    public let advertisingData: [UInt8]
    public let scanResponseData: [UInt8]
    /// The static random address bring-up set, to advertise from (and pair from); nil:
    /// the controller's public address (docs/pairing.md, "The gateway's address").
    public let randomAddress: BluetoothAddress?

    public init(name: String, randomAddress: BluetoothAddress? = nil) {
        self.randomAddress = randomAddress
        let maximum = LESetAdvertisingDataCommand.maximumLength
        var data: [UInt8] = [0x02, 0x01, 0x06]
        data += [0x03, 0x19, UInt8(Self.appearance & 0xFF), UInt8(Self.appearance >> 8)]
        data += [0x03, 0x03, UInt8(Self.heartRateService & 0xFF), UInt8(Self.heartRateService >> 8)]
        let whole = Array(name.utf8)
        let room = maximum - data.count - 2
        if whole.count <= room {
            data += [UInt8(whole.count + 1), 0x09] + whole
            scanResponseData = []
        } else {
            let shortened = Self.prefix(of: name, fitting: room)
            data += [UInt8(shortened.count + 1), 0x08] + shortened
            let complete = Self.prefix(of: name, fitting: maximum - 2)
            scanResponseData = [UInt8(complete.count + 1), complete.count == whole.count ? 0x09 : 0x08] + complete
        }
        advertisingData = data
    }

    /// The longest prefix of `name` within `limit` UTF-8 bytes, never cutting a character.
    static func prefix(of name: String, fitting limit: Int) -> [UInt8] {
        var bytes = [UInt8]()
        for character in name {
            let next = Array(String(character).utf8)
            guard bytes.count + next.count <= limit else { break }
            bytes += next
        }
        return bytes
    }

    /// The commands, in order, that put it on air with `family`'s commands, from the
    /// address the phone pairs with: the public one, or the static random one bring-up set
    /// (the legacy commands do not set it again: a controller refuses that while it scans).
    public func startCommands(family: CommandFamily) -> [(HCIPacket, Opcode)] {
        ConnectableAdvertising(advertisingData: advertisingData, scanResponseData: scanResponseData,
                               intervalUnits: Self.intervalUnits, randomAddress: randomAddress,
                               randomAddressIsSet: true).startCommands(family: family)
    }

    /// Advertising off (the controller also stops it by itself when a central connects).
    /// The standalone command has the controller to itself: set 0. (Beside the agent's
    /// door beacon, which also uses set 0, enrolment would take the beacon's place.)
    public static func stopCommand(family: CommandFamily) -> (HCIPacket, Opcode) {
        ConnectableAdvertising.stopCommand(family: family)
    }
}
