@testable import HCI

/// One value of every command, return parameters and event type, with every field
/// away from zero where it can be: the golden-bytes and fuzz tests run over these.
enum CodecSamples {
    static let address = BluetoothAddress(rawValue: 0xC0_11_22_33_44_55)
    static let peer = BluetoothAddress(rawValue: 0x7A_66_55_44_33_22)
    static let connection = LEConnectionParameters(intervalMin: 0x0018, intervalMax: 0x0028, maxLatency: 3,
                                                   supervisionTimeout: 0x01F4, minCELength: 1, maxCELength: 2)

    static let commands: [(name: String, command: any HCICommand)] = [
        ("reset", ResetCommand()),
        ("setEventMask", SetEventMaskCommand(mask: .gatewayDefault)),
        ("readLocalVersionInformation", ReadLocalVersionInformationCommand()),
        ("readLocalSupportedCommands", ReadLocalSupportedCommandsCommand()),
        ("readLocalSupportedFeatures", ReadLocalSupportedFeaturesCommand()),
        ("readBufferSize", ReadBufferSizeCommand()),
        ("readBDAddr", ReadBDAddrCommand()),
        ("readRSSI", ReadRSSICommand(connectionHandle: 0x0142)),
        ("disconnect", DisconnectCommand(connectionHandle: 0x0201, reason: .remoteUserTerminated)),
        ("leSetEventMask", LESetEventMaskCommand(mask: LEEventMask(rawValue: 0x0B1A4F))),
        ("leReadBufferSize", LEReadBufferSizeCommand()),
        ("leReadLocalSupportedFeatures", LEReadLocalSupportedFeaturesCommand()),
        ("leReadSupportedStates", LEReadSupportedStatesCommand()),
        ("leSetRandomAddress", LESetRandomAddressCommand(address: address)),
        ("leReadFilterAcceptListSize", LEReadFilterAcceptListSizeCommand()),
        ("leClearFilterAcceptList", LEClearFilterAcceptListCommand()),
        ("leAddDeviceToFilterAcceptList", LEAddDeviceToFilterAcceptListCommand(addressType: .randomDevice, address: address)),
        ("leRemoveDeviceFromFilterAcceptList", LERemoveDeviceFromFilterAcceptListCommand(addressType: .publicDevice, address: peer)),
        ("leSetAdvertisingParameters", LESetAdvertisingParametersCommand(
            intervalMin: 0x00A0, intervalMax: 0x00B0, type: .scannableUndirected, ownAddressType: .randomDevice,
            peerAddressType: .randomDevice, peerAddress: peer, channelMap: 0x05, filterPolicy: AdvertisingFilterPolicy(rawValue: 2))),
        ("leSetAdvertisingData", LESetAdvertisingDataCommand(data: [0x02, 0x01, 0x06, 0x03, 0xFF, 0x34, 0x12])),
        ("leSetAdvertisingDataFull", LESetAdvertisingDataCommand(data: Array(1 ... 31))),
        ("leSetAdvertisingEnable", LESetAdvertisingEnableCommand(enable: true)),
        ("leSetExtendedAdvertisingParameters", LESetExtendedAdvertisingParametersCommand(
            handle: 2, properties: [.connectable, .scannable, .legacy], intervalMin: 0x012345, intervalMax: 0x0ABCDE,
            channelMap: 0x06, ownAddressType: .randomDevice, peerAddressType: .randomDevice, peerAddress: peer,
            filterPolicy: AdvertisingFilterPolicy(rawValue: 1), txPower: -7, primaryPHY: .leCoded, secondaryMaxSkip: 4,
            secondaryPHY: .le2M, sid: 9, scanRequestNotification: true)),
        ("leSetExtendedAdvertisingData", LESetExtendedAdvertisingDataCommand(
            handle: 1, operation: .first, fragmentPreference: 0, data: Array(0 ..< 40))),
        ("leSetExtendedAdvertisingEnable", LESetExtendedAdvertisingEnableCommand(enable: true, sets: [
            .init(handle: 1, duration: 0x0302, maxEvents: 5), .init(handle: 2),
        ])),
        ("leSetExtendedAdvertisingDisableAll", LESetExtendedAdvertisingEnableCommand(enable: false, sets: [])),
        ("leSetScanParameters", LESetScanParametersCommand(scanType: .active, interval: 0x0690, window: 0x05E8,
                                                           ownAddressType: .randomDevice, filterPolicy: .filterAcceptListOnly)),
        ("leSetScanEnable", LESetScanEnableCommand(enable: true, filterDuplicates: true)),
        ("leSetExtendedScanParameters1M", LESetExtendedScanParametersCommand(
            le1M: .init(scanType: .passive, interval: 0x0690, window: 0x0690))),
        ("leSetExtendedScanParametersBoth", LESetExtendedScanParametersCommand(
            ownAddressType: .randomDevice, filterPolicy: .filterAcceptListOnly,
            le1M: .init(scanType: .active, interval: 100, window: 50), leCoded: .init(scanType: .passive, interval: 300, window: 150))),
        ("leSetExtendedScanEnable", LESetExtendedScanEnableCommand(enable: true, filterDuplicates: 2, duration: 0x0102, period: 0x0304)),
        ("leSetScanResponseData", LESetScanResponseDataCommand(data: [0x05, 0x09, 0x44, 0x6F, 0x6F, 0x72])),
        ("leSetExtendedScanResponseData", LESetExtendedScanResponseDataCommand(
            handle: 3, operation: .last, fragmentPreference: 1, data: [0x05, 0x09, 0x44, 0x6F, 0x6F, 0x72])),
        ("leCreateConnection", LECreateConnectionCommand(
            scanInterval: 0x0061, scanWindow: 0x0031, filterPolicy: .filterAcceptList, peerAddressType: .randomDevice,
            peerAddress: peer, ownAddressType: .randomDevice, connection: connection)),
        ("leExtendedCreateConnection1M", LEExtendedCreateConnectionCommand(
            filterPolicy: .peerAddress, peerAddressType: .randomDevice, peerAddress: peer)),
        ("leExtendedCreateConnectionAll", LEExtendedCreateConnectionCommand(
            filterPolicy: .filterAcceptList, ownAddressType: .randomDevice, peerAddressType: .publicDevice, peerAddress: address,
            le1M: .init(scanInterval: 0x10, scanWindow: 0x08, connection: connection),
            le2M: .init(scanInterval: 0x20, scanWindow: 0x10),
            leCoded: .init(scanInterval: 0x30, scanWindow: 0x18, connection: connection))),
        ("leCreateConnectionCancel", LECreateConnectionCancelCommand()),
    ]

    /// Commands added after the golden bytes were captured.
    static let newerCommands: [(name: String, command: any HCICommand)] = [
        ("leSetAdvertisingSetRandomAddress", LESetAdvertisingSetRandomAddressCommand(handle: 1, address: address)),
        ("leConnectionUpdate", LEConnectionUpdateCommand(connectionHandle: 0x0040, connection: connection)),
        ("leLongTermKeyRequestReply", LELongTermKeyRequestReplyCommand(
            connectionHandle: 0x0041, longTermKey: LongTermKeyOctets(leastSignificantFirst: Array(0x10 ..< 0x20))!)),
        ("leLongTermKeyRequestNegativeReply", LELongTermKeyRequestNegativeReplyCommand(connectionHandle: 0x0042)),
    ]

    /// Return parameters added after the golden bytes were captured.
    static let newerReturnParameters: [(name: String, value: any HCIReturnParameters)] = [
        ("leLongTermKeyRequestReply", LELongTermKeyRequestReplyReturn(connectionHandle: 0x0041)),
        ("leLongTermKeyRequestNegativeReply", LELongTermKeyRequestNegativeReplyReturn(
            status: HCIStatus(rawValue: 0x02), connectionHandle: 0x0042)),
    ]

    /// Events added after the golden bytes were captured.
    static let newerEvents: [(name: String, event: HCIEvent)] = [
        ("longTermKeyRequest", .leMeta(.longTermKeyRequest(LELongTermKeyRequest(
            connectionHandle: 0x0041, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0xABCD)))),
        ("encryptionChange", .encryptionChange(HCIEncryptionChange(connectionHandle: 0x0041, encryptionEnabled: 1))),
        ("encryptionChangeV2", .encryptionChange(HCIEncryptionChange(
            format: .v2, status: HCIStatus(rawValue: 0x06), connectionHandle: 0x0042, encryptionEnabled: 0, encryptionKeySize: 7))),
        ("encryptionKeyRefreshComplete", .encryptionKeyRefreshComplete(HCIEncryptionKeyRefreshComplete(connectionHandle: 0x0043))),
    ]

    static let returnParameters: [(name: String, value: any HCIReturnParameters)] = [
        ("localVersionInformation", LocalVersionInformation(hciVersion: 0x0C, hciRevision: 0x1234, lmpVersion: 0x0B,
                                                            manufacturer: 0x005D, lmpSubversion: 0xABCD)),
        ("localSupportedCommands", LocalSupportedCommands(commands: SupportedCommands(octets: (0 ..< 64).map { UInt8($0 * 3 & 0xFF) }))),
        ("localSupportedFeatures", LocalSupportedFeatures(features: LMPFeatures(rawValue: 0x0123_4567_89AB_CDEF))),
        ("bufferSize", BufferSize(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8,
                                  totalSynchronousDataPackets: 3)),
        ("bdAddr", BDAddr(address: address)),
        ("connectionRSSI", ConnectionRSSI(connectionHandle: 0x0040, rssi: -61)),
        ("leBufferSize", LEBufferSize(aclDataPacketLength: 251, totalACLDataPackets: 12)),
        ("leLocalSupportedFeatures", LELocalSupportedFeatures(features: LEFeatures(rawValue: 0x0000_0001_0000_4D3F))),
        ("leSupportedStates", LESupportedStatesReturn(states: LESupportedStates(rawValue: 0x0000_03FF_FFFF_FFFF))),
        ("filterAcceptListSize", FilterAcceptListSize(status: .success, size: 16)),
        ("extendedAdvertisingParameters", ExtendedAdvertisingParametersReturn(selectedTxPower: -4)),
        ("failedStatus", FilterAcceptListSize(status: HCIStatus(rawValue: 0x0C), size: 0)),
    ]

    static let events: [(name: String, event: HCIEvent)] = [
        ("commandComplete", .commandComplete(HCICommandComplete(numberOfCommandPackets: 2, opcode: .readRSSI,
                                                                returnParameters: [0x00, 0x40, 0x00, 0xC3]))),
        ("commandStatus", .commandStatus(HCICommandStatus(status: HCIStatus(rawValue: 0x0C), numberOfCommandPackets: 1,
                                                          opcode: .leCreateConnection))),
        ("disconnectionComplete", .disconnectionComplete(HCIDisconnectionComplete(connectionHandle: 0x0041,
                                                                                  reason: .remoteUserTerminated))),
        ("numberOfCompletedPackets", .numberOfCompletedPackets([
            HCICompletedPackets(connectionHandle: 0x0040, count: 3), HCICompletedPackets(connectionHandle: 0x0EFF, count: 0x0102),
        ])),
        ("hardwareError", .hardwareError(code: 0x42)),
        ("connectionCompleteLegacy", .leMeta(.connectionComplete(LEConnectionComplete(
            format: .legacy, connectionHandle: 0x0040, role: .peripheral, peerAddressType: .randomDevice, peerAddress: peer,
            connectionInterval: 0x0028, peripheralLatency: 1, supervisionTimeout: 0x0100, centralClockAccuracy: 2)))),
        ("connectionCompleteEnhanced", .leMeta(.connectionComplete(LEConnectionComplete(
            format: .enhanced, connectionHandle: 0x0041, peerAddressType: .publicDevice, peerAddress: address,
            localResolvablePrivateAddress: peer, peerResolvablePrivateAddress: BluetoothAddress(rawValue: 0x5A_01_02_03_04_05),
            connectionInterval: 0x0018, peripheralLatency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: 5)))),
        ("connectionCompleteV2", .leMeta(.connectionComplete(LEConnectionComplete(
            format: .enhancedV2, status: HCIStatus(rawValue: 0x3E), connectionHandle: 0x0042, peerAddressType: .randomDevice,
            peerAddress: peer, connectionInterval: 0x0030, advertisingHandle: 1, syncHandle: 0x0203)))),
        ("connectionUpdateComplete", .leMeta(.connectionUpdateComplete(LEConnectionUpdateComplete(
            connectionHandle: 0x0040, connectionInterval: 0x0050, peripheralLatency: 4, supervisionTimeout: 0x0200)))),
        ("advertisingReport", .leMeta(.advertisingReport([
            LEAdvertisingReport(properties: [.legacy, .connectable, .scannable], addressType: .randomDevice, address: peer,
                                rssi: -70, data: [0x02, 0x01, 0x06]),
        ]))),
        ("extendedAdvertisingReport", .leMeta(.extendedAdvertisingReport([
            LEAdvertisingReport(properties: [.connectable], addressType: .publicDevice, address: address, sid: 1, rssi: -50,
                                data: [0x03, 0xFF, 0x01, 0x02]),
        ]))),
        ("unknownEvent", .unknown(code: EventCode(rawValue: 0x57), parameters: [1, 2, 3])),
        ("unknownSubevent", .leMeta(.unknown(subevent: LESubeventCode(rawValue: 0x7F), parameters: [9, 8]))),
    ]
}

extension Sequence<UInt8> {
    var hex: String { map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
}
