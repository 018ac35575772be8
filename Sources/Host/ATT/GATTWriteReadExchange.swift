import EventLoop

/// "Write this to one characteristic, then read another": the request/response exchange
/// that challenge-response protocols run over GATT, as a sans-IO sequencer of
/// `GATTClient` procedures.
///
/// Without cached handles: find the service, discover its characteristics until both are
/// seen, write, read. With cached handles: write and read only (two ATT round trips).
/// Nothing here knows what the bytes mean; the caller verifies the value read.
public struct GATTWriteReadExchange: Sendable {
    /// The value handles of the two characteristics.
    public struct Handles: Hashable, Sendable {
        public var write: UInt16
        public var read: UInt16
        public init(write: UInt16, read: UInt16) {
            self.write = write
            self.read = read
        }
    }

    public struct Request: Hashable, Sendable {
        public var service: GATTUUID
        public var writeCharacteristic: GATTUUID
        public var readCharacteristic: GATTUUID
        public var value: [UInt8]
        public var cachedHandles: Handles?

        public init(service: GATTUUID, writeCharacteristic: GATTUUID, readCharacteristic: GATTUUID,
                    value: [UInt8], cachedHandles: Handles? = nil) {
            self.service = service
            self.writeCharacteristic = writeCharacteristic
            self.readCharacteristic = readCharacteristic
            self.value = value
            self.cachedHandles = cachedHandles
        }
    }

    public struct Timings: Hashable, Sendable {
        /// Service and characteristic discovery; zero when the cache was used.
        public var discovery: Duration = .zero
        public var write: Duration = .zero
        public var read: Duration = .zero
    }

    public struct Completion: Hashable, Sendable {
        public var handles: Handles
        public var value: [UInt8]
        public var usedCache: Bool
        public var timings: Timings
        /// ATT requests sent (each one round trip).
        public var attRequests: Int
    }

    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case serviceMissing
        case characteristicMissing
        case gatt(GATTError)

        public var description: String {
            switch self {
            case .serviceMissing: "service not found"
            case .characteristicMissing: "characteristic not found"
            case .gatt(let error): error.description
            }
        }
    }

    public enum Step: Hashable, Sendable {
        case run(GATTClient.Procedure)
        case finished(Result<Completion, Failure>)
    }

    private enum Phase: Sendable {
        case idle
        case findingService
        case discoveringCharacteristics
        case writing(Handles)
        case reading(Handles)
        case done
    }

    public let request: Request
    private var phase: Phase = .idle
    private var phaseStarted = Instant.zero
    private var timings = Timings()
    private var requests = 0

    public init(request: Request) {
        self.request = request
    }

    public mutating func start(now: Instant) -> Step {
        guard case .idle = phase else { return .finished(.failure(.gatt(.busy))) }
        phaseStarted = now
        if let cached = request.cachedHandles {
            phase = .writing(cached)
            return .run(.write(handle: cached.write, value: request.value))
        }
        phase = .findingService
        return .run(.findPrimaryService(request.service))
    }

    /// The result of the procedure the last step asked for.
    public mutating func advance(_ result: Result<GATTClient.Outcome, GATTError>, requests taken: Int, now: Instant) -> Step {
        requests += taken
        let outcome: GATTClient.Outcome
        switch result {
        case .success(let value): outcome = value
        case .failure(let error): return finish(.failure(.gatt(error)))
        }
        switch (phase, outcome) {
        case (.findingService, .service(let range)):
            guard let range else { return finish(.failure(.serviceMissing)) }
            phase = .discoveringCharacteristics
            return .run(.discoverCharacteristics(in: range, until: [request.writeCharacteristic, request.readCharacteristic]))
        case (.discoveringCharacteristics, .characteristics(let found)):
            guard let write = found.first(where: { $0.uuid == request.writeCharacteristic }),
                  let read = found.first(where: { $0.uuid == request.readCharacteristic }) else {
                return finish(.failure(.characteristicMissing))
            }
            timings.discovery = now - phaseStarted
            phaseStarted = now
            let handles = Handles(write: write.valueHandle, read: read.valueHandle)
            phase = .writing(handles)
            return .run(.write(handle: handles.write, value: request.value))
        case (.writing(let handles), .written):
            timings.write = now - phaseStarted
            phaseStarted = now
            phase = .reading(handles)
            return .run(.read(handle: handles.read))
        case (.reading(let handles), .value(let value)):
            timings.read = now - phaseStarted
            return finish(.success(Completion(handles: handles, value: value, usedCache: request.cachedHandles != nil,
                                              timings: timings, attRequests: requests)))
        default:
            // An outcome for a procedure this exchange did not ask for: the caller's bug.
            return finish(.failure(.gatt(.busy)))
        }
    }

    private mutating func finish(_ result: Result<Completion, Failure>) -> Step {
        phase = .done
        return .finished(result)
    }
}
