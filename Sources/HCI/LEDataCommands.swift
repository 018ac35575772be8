/// LE Set Extended Advertising Data and LE Set Extended Scan Response Data: one fragment
/// of a set's data, the same parameters under two opcodes (Core Vol 4 Part E 7.8.54/55).
public protocol LEExtendedDataFragmentCommand: HCICommand, HCIFieldLayout {
    var handle: UInt8 { get set }
    var operation: LESetExtendedAdvertisingDataCommand.Operation { get set }
    var fragmentPreference: UInt8 { get set }
    var data: [UInt8] { get set }
}

extension LEExtendedDataFragmentCommand {
    public static var expectedResponse: HCIExpectedResponse { .commandComplete(returnParametersLength: 1) }
    public static var maximumFragmentLength: Int { 251 }
    public static var fields: [HCIField<Self>] {
        [.field(\.handle), .field(\.operation), .field(\.fragmentPreference),
         .field(\.data, .lengthPrefixed(maximum: maximumFragmentLength))]
    }

    public init(handle: UInt8 = 0, operation: LESetExtendedAdvertisingDataCommand.Operation = .complete,
                fragmentPreference: UInt8 = 0x01, data: [UInt8]) {
        self.init()
        self.handle = handle
        self.operation = operation
        self.fragmentPreference = fragmentPreference
        self.data = data
    }
}

/// LE Set Advertising Data and LE Set Scan Response Data (legacy): always a length
/// byte and 31 bytes, zero padded; the same parameters under two opcodes.
public protocol LELegacyDataCommand: HCICommand, HCIFieldLayout {
    var data: [UInt8] { get set }
}

extension LELegacyDataCommand {
    public static var expectedResponse: HCIExpectedResponse { .commandComplete(returnParametersLength: 1) }
    public static var maximumLength: Int { 31 }
    public static var fields: [HCIField<Self>] { [.field(\.data, .lengthPrefixed(maximum: maximumLength, padded: true))] }

    public init(data: [UInt8]) {
        self.init()
        self.data = data
    }
}
