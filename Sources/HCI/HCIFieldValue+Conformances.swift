// The named integer fields, each laid out as its raw value.

extension HCIStatus: HCIRawField {}
extension AddressType: HCIRawField {}
extension Opcode: HCIRawField {}
extension EventMask: HCIRawField {}
extension LEEventMask: HCIRawField {}
extension LMPFeatures: HCIRawField {}
extension LEFeatures: HCIRawField {}
extension LESupportedStates: HCIRawField {}
extension LEScanType: HCIRawField {}
extension LEPhy: HCIRawField {}
extension ScanningFilterPolicy: HCIRawField {}
extension InitiatorFilterPolicy: HCIRawField {}
extension AdvertisingFilterPolicy: HCIRawField {}
extension LegacyAdvertisingType: HCIRawField {}
extension LEAdvertisingEventProperties: HCIRawField {}
extension LEConnectionComplete.Role: HCIRawField {}
extension LESetExtendedAdvertisingDataCommand.Operation: HCIRawField {}

extension SupportedCommands: HCIFieldValue {
    public static var codec: HCIFieldCodec<Self> {
        HCIFieldCodec(write: { value, bytes in bytes.append(contentsOf: value.octets) },
                      read: { (reader: inout HCIByteReader) throws(HCIDecodingError) in
                          SupportedCommands(octets: try reader.slice(SupportedCommands.octetCount))
                      })
    }
}
