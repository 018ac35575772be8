/// LE Set Extended Advertising Data and LE Set Extended Scan Response Data: one fragment
/// of a set's data, the same parameters under two opcodes (Core Vol 4 Part E 7.8.54/55).
public protocol LEExtendedDataFragmentCommand: HCICommand {
    static var maximumFragmentLength: Int { get }
    var handle: UInt8 { get }
    var operation: LESetExtendedAdvertisingDataCommand.Operation { get }
    var fragmentPreference: UInt8 { get }
    var data: [UInt8] { get }
    init(handle: UInt8, operation: LESetExtendedAdvertisingDataCommand.Operation, fragmentPreference: UInt8, data: [UInt8])
}

extension LEExtendedDataFragmentCommand {
    public func encodeParameters(into bytes: inout [UInt8]) {
        let used = data.prefix(Self.maximumFragmentLength)
        bytes.append(handle)
        bytes.append(operation.rawValue)
        bytes.append(fragmentPreference)
        bytes.append(UInt8(used.count))
        bytes.append(contentsOf: used)
    }

    public init(parameters: ArraySlice<UInt8>) throws(HCIDecodingError) {
        var reader = HCIByteReader(parameters, context: .command(Self.opcode))
        let handle = try reader.u8()
        let operation = LESetExtendedAdvertisingDataCommand.Operation(rawValue: try reader.u8())
        let fragmentPreference = try reader.u8()
        let length = Int(try reader.u8())
        guard length <= Self.maximumFragmentLength else {
            throw .invalidValue(reader.context, field: .dataLength, value: length)
        }
        let data = Array(try reader.slice(length))
        try reader.requireEnd()
        self.init(handle: handle, operation: operation, fragmentPreference: fragmentPreference, data: data)
    }
}
