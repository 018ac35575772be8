import EventLoop
import HCI

/// Bring-up: the steps after Reset, in order, each waiting for the previous answer.
struct BringUp {
    enum Step: Int, CaseIterable {
        case reset
        case readLocalVersion
        case readLocalSupportedCommands
        case readLocalSupportedFeatures
        case readBDAddr
        case leReadLocalSupportedFeatures
        case leReadBufferSize
        /// Only when LE Read Buffer Size says the LE pool is shared.
        case readBufferSize
        case leReadSupportedStates
        case setEventMask
        case leSetEventMask
        case leReadFilterAcceptListSize
        /// Only without a usable public address, when a static random one is configured.
        case leSetRandomAddress

        var opcode: Opcode {
            switch self {
            case .reset: .reset
            case .readLocalVersion: .readLocalVersionInformation
            case .readLocalSupportedCommands: .readLocalSupportedCommands
            case .readLocalSupportedFeatures: .readLocalSupportedFeatures
            case .readBDAddr: .readBDAddr
            case .leReadLocalSupportedFeatures: .leReadLocalSupportedFeatures
            case .leReadBufferSize: .leReadBufferSize
            case .readBufferSize: .readBufferSize
            case .leReadSupportedStates: .leReadSupportedStates
            case .setEventMask: .setEventMask
            case .leSetEventMask: .leSetEventMask
            case .leReadFilterAcceptListSize: .leReadFilterAcceptListSize
            case .leSetRandomAddress: .leSetRandomAddress
            }
        }

        /// Steps whose failure (error status or no answer) leaves a usable default.
        /// They are also skipped when the controller does not list them.
        var isOptional: Bool {
            switch self {
            case .readLocalSupportedFeatures, .readBDAddr, .leReadSupportedStates, .leReadFilterAcceptListSize, .leSetRandomAddress: true
            default: false
            }
        }

        func packet(_ configuration: HostConfiguration) -> HCIPacket {
            switch self {
            case .reset: ResetCommand().packet
            case .readLocalVersion: ReadLocalVersionInformationCommand().packet
            case .readLocalSupportedCommands: ReadLocalSupportedCommandsCommand().packet
            case .readLocalSupportedFeatures: ReadLocalSupportedFeaturesCommand().packet
            case .readBDAddr: ReadBDAddrCommand().packet
            case .leReadLocalSupportedFeatures: LEReadLocalSupportedFeaturesCommand().packet
            case .leReadBufferSize: LEReadBufferSizeCommand().packet
            case .readBufferSize: ReadBufferSizeCommand().packet
            case .leReadSupportedStates: LEReadSupportedStatesCommand().packet
            case .setEventMask: SetEventMaskCommand(mask: configuration.eventMask).packet
            case .leSetEventMask: LESetEventMaskCommand(mask: configuration.leEventMask).packet
            case .leReadFilterAcceptListSize: LEReadFilterAcceptListSizeCommand().packet
            case .leSetRandomAddress: LESetRandomAddressCommand(address: configuration.staticRandomAddress ?? BluetoothAddress(rawValue: 0)).packet
            }
        }
    }

    var step: Step = .reset
    var info = ControllerInfo()
    var needsSharedBufferSize = false
    var commandsKnown = false
    /// What to set as the random address if the controller has no usable public one.
    let staticRandomAddress: BluetoothAddress?

    init(staticRandomAddress: BluetoothAddress?) {
        self.staticRandomAddress = staticRandomAddress
    }

    /// The step after the current one, skipping what does not apply.
    func next(after step: Step) -> Step? {
        var candidate = Step(rawValue: step.rawValue + 1)
        while let current = candidate {
            let skip = (current == .readBufferSize && !needsSharedBufferSize)
                || (current == .leSetRandomAddress && (staticRandomAddress == nil || info.hasPublicAddress))
                || (current.isOptional && commandsKnown && info.supportedCommands.contains(current.opcode) == false)
            if !skip { return current }
            candidate = Step(rawValue: current.rawValue + 1)
        }
        return nil
    }
}

extension HostController {
    mutating func startBringUp(now: Instant, into actions: inout [HostAction]) {
        _ = flushCommands(into: &actions)
        probeOutstanding = false
        nextProbeAt = nil
        // A reset controller scans again unpaused: whoever paused it hears of the reset
        // (state change) and asks again if it still needs to.
        scanPauseRequested = false
        phase = .bringUp(BringUp(staticRandomAddress: configuration.staticRandomAddress))
        if failedAttempts == 0 { setState(.initializing, into: &actions) }
        actions.append(.log(.bringUpStarted))
        flow.enqueue(BringUp.Step.reset.packet(configuration), opcode: .reset, origin: .host)
    }

    /// The answer to one of the host's own commands.
    mutating func hostAnswer(opcode: Opcode, answer: Answer, now: Instant, into actions: inout [HostAction]) {
        switch phase {
        case .bringUp(var bringUp):
            guard bringUp.step.opcode == opcode else { return }
            let step = bringUp.step
            // Success means a Command Complete with status 0; a Command Status is no
            // answer for these commands.
            guard case .complete(let parameters) = answer, answer.status == .success else {
                guard step.isOptional else {
                    let reason: RecoveryReason = if let status = answer.status, status != .success {
                        .commandFailed(opcode, status)
                    } else {
                        .malformedAnswer(opcode)
                    }
                    beginRecovery(reason, now: now, transportClosed: false, into: &actions)
                    return
                }
                actions.append(.log(.optionalStepFailed(opcode, status: answer.status)))
                advance(bringUp, now: now, into: &actions)
                return
            }
            do {
                try apply(step, parameters, to: &bringUp, into: &actions)
            } catch {
                guard step.isOptional else {
                    beginRecovery(.malformedAnswer(opcode), now: now, transportClosed: false, into: &actions)
                    return
                }
                actions.append(.log(.optionalStepFailed(opcode, status: nil)))
            }
            advance(bringUp, now: now, into: &actions)
        case .startingScan(let info, let step):
            guard opcode == scanOpcode(step, info.commandFamily) else { return }
            guard answer.status == .success else {
                beginRecovery(answer.status.map { .commandFailed(opcode, $0) } ?? .malformedAnswer(opcode),
                              now: now, transportClosed: false, into: &actions)
                return
            }
            switch step {
            case .parameters:
                phase = .startingScan(info, .enable)
                flow.enqueue(scanEnablePacket(info.commandFamily), opcode: scanOpcode(.enable, info.commandFamily), origin: .host)
            case .enable:
                phase = .scanning(info)
                failedAttempts = 0
                resetsSinceOpen = 0
                nextProbeAt = now + configuration.probeInterval
                setState(.scanning(info), into: &actions)
                actions.append(.log(.scanningStarted(info.scanTiming ?? ScanTiming.derive(configuration.scan), info.commandFamily)))
            }
        case .scanning(let info):
            if opcode == scanOpcode(.enable, info.commandFamily) {
                scanEnableAnswered(opcode, answer: answer, now: now, into: &actions)
                return
            }
            if opcode == Self.probeOpcode, probeOutstanding {
                probeOutstanding = false
                nextProbeAt = now + configuration.probeInterval
            }
        default:
            break
        }
    }

    /// An optional bring-up step that went unanswered: carry on with its default.
    mutating func hostTimeoutIsTolerated(_ opcode: Opcode, now: Instant, into actions: inout [HostAction]) -> Bool {
        guard case .bringUp(let bringUp) = phase, bringUp.step.opcode == opcode, bringUp.step.isOptional else { return false }
        actions.append(.log(.optionalStepFailed(opcode, status: nil)))
        advance(bringUp, now: now, into: &actions)
        return true
    }

    private func apply(_ step: BringUp.Step, _ parameters: ArraySlice<UInt8>, to bringUp: inout BringUp,
                       into actions: inout [HostAction]) throws(HCIDecodingError) {
        switch step {
        case .readLocalVersion:
            bringUp.info.version = try LocalVersionInformation(returnParameters: parameters)
        case .readLocalSupportedCommands:
            bringUp.info.supportedCommands = try LocalSupportedCommands(returnParameters: parameters).commands
            bringUp.commandsKnown = true
        case .readLocalSupportedFeatures:
            bringUp.info.lmpFeatures = try LocalSupportedFeatures(returnParameters: parameters).features
        case .readBDAddr:
            bringUp.info.address = try BDAddr(returnParameters: parameters).address
        case .leReadLocalSupportedFeatures:
            let features = try LELocalSupportedFeatures(returnParameters: parameters).features
            bringUp.info.leFeatures = features
            bringUp.info.commandFamily = CommandFamily.choose(features: features, commands: bringUp.info.supportedCommands)
            actions.append(.log(.commandFamilyChosen(bringUp.info.commandFamily, leFeatures: features)))
        case .leReadBufferSize:
            let size = try LEBufferSize(returnParameters: parameters)
            bringUp.needsSharedBufferSize = size.isShared
            bringUp.info.leBuffer = ACLBufferInfo(packetLength: Int(size.aclDataPacketLength),
                                                  packetCount: Int(size.totalACLDataPackets), isShared: size.isShared)
        case .readBufferSize:
            let size = try BufferSize(returnParameters: parameters)
            bringUp.info.leBuffer = ACLBufferInfo(packetLength: Int(size.aclDataPacketLength),
                                                  packetCount: Int(size.totalACLDataPackets), isShared: true)
            actions.append(.log(.bufferSizeFallback(bringUp.info.leBuffer)))
        case .leReadSupportedStates:
            bringUp.info.supportedStates = try LESupportedStatesReturn(returnParameters: parameters).states
        case .leReadFilterAcceptListSize:
            bringUp.info.filterAcceptListSize = Int(try FilterAcceptListSize(returnParameters: parameters).size)
        case .leSetRandomAddress:
            bringUp.info.staticRandomAddress = bringUp.staticRandomAddress
        case .reset, .setEventMask, .leSetEventMask:
            break
        }
    }

    private mutating func advance(_ bringUp: BringUp, now: Instant, into actions: inout [HostAction]) {
        var bringUp = bringUp
        guard let next = bringUp.next(after: bringUp.step) else {
            startScanning(bringUp.info, now: now, into: &actions)
            return
        }
        bringUp.step = next
        phase = .bringUp(bringUp)
        flow.enqueue(next.packet(configuration), opcode: next.opcode, origin: .host)
    }

    private mutating func startScanning(_ info: ControllerInfo, now: Instant, into actions: inout [HostAction]) {
        var info = info
        let timing = ScanTiming.derive(configuration.scan)
        info.scanTiming = timing
        phase = .startingScan(info, .parameters)
        flow.enqueue(scanParametersPacket(info, timing), opcode: scanOpcode(.parameters, info.commandFamily), origin: .host)
    }

    func scanOpcode(_ step: ScanStep, _ family: CommandFamily) -> Opcode {
        switch (step, family) {
        case (.parameters, .legacy): .leSetScanParameters
        case (.enable, .legacy): .leSetScanEnable
        case (.parameters, .extended): .leSetExtendedScanParameters
        case (.enable, .extended): .leSetExtendedScanEnable
        }
    }

    private func scanParametersPacket(_ info: ControllerInfo, _ timing: ScanTiming) -> HCIPacket {
        let type = configuration.scan.scanType
        switch info.commandFamily {
        case .legacy:
            return LESetScanParametersCommand(scanType: type, interval: timing.interval, window: timing.window,
                                              ownAddressType: configuration.ownAddressType).packet
        case .extended:
            let phy = LESetExtendedScanParametersCommand.PHYParameters(scanType: type, interval: timing.interval, window: timing.window)
            let coded = configuration.scan.scanCodedPHY && info.leFeatures.contains(.codedPHY)
            return LESetExtendedScanParametersCommand(ownAddressType: configuration.ownAddressType, le1M: phy,
                                                      leCoded: coded ? phy : nil).packet
        }
    }

    /// Duplicate filtering stays off: presence needs every report's RSSI.
    func scanEnablePacket(_ family: CommandFamily, enable: Bool = true) -> HCIPacket {
        switch family {
        case .legacy: LESetScanEnableCommand(enable: enable, filterDuplicates: false).packet
        case .extended: LESetExtendedScanEnableCommand(enable: enable, filterDuplicates: 0, duration: 0, period: 0).packet
        }
    }
}
