#if canImport(Glibc)
import Glibc
#endif
import CMosquitto

/// One connection to the broker through libmosquitto, driven from the agent's poll loop
/// (no thread of the library's own): the only file that sees libmosquitto's types. A new
/// client per connection attempt: nothing of an old connection's in-flight state survives
/// into the next, the outbox is the record (docs/site-bus.md).
final class MosquittoClient {
    struct Credentials {
        var username: String?
        var password: [UInt8]?
    }

    struct TLS {
        /// The extra CA (`ca_file`), besides the system's CAs.
        var caFile: String?
    }

    /// What libmosquitto reported from inside a read, a write or `misc`, in order.
    enum Happening {
        case connected(reason: Int, sessionPresent: Bool)
        /// `reason`: errno's text when the code is an errno, the library's last error line
        /// for a TLS failure.
        case disconnected(code: Int, reason: String)
        case acknowledged(mid: Int32, reason: Int)
        /// `payload` is nil when it is longer than the limit given to `init`.
        case message(topic: String, payload: [UInt8]?, payloadCount: Int, qos: Int, retain: Bool)
    }

    private let handle: OpaquePointer
    let version5: Bool
    private let maximumPayload: Int
    /// The library's last error line (its log), for a fault's text: libmosquitto says why a
    /// TLS handshake failed only there.
    private(set) var lastLibraryError: String?
    private var happenings: [Happening] = []

    /// Session expiry (MQTT 5): how long the broker keeps this door's session (its
    /// subscriptions, QoS 1 messages for it) while the door is away.
    static let sessionExpirySeconds: UInt32 = 3600
    /// The largest packet the broker may send the door (MQTT 5 Maximum Packet Size): a
    /// compliant broker drops bigger messages rather than sending them.
    static let maximumPacketSize: UInt32 = 64 * 1024

    enum SetupError: Error, CustomStringConvertible {
        case library(String, Int32)
        var description: String {
            switch self {
            case let .library(step, code): "\(step): \(String(cString: mosquitto_strerror(code)))"
            }
        }
    }

    /// `will` nil: none, and the broker keeps no session (a reader only, docs/cli.md).
    init(clientId: String, version5: Bool, credentials: Credentials, will: BusMessage?, tls: TLS?,
         maximumPayload: Int) throws(SetupError) {
        MosquittoLibrary.prepare()
        guard let handle = mosquitto_new(clientId, will == nil, nil) else { throw .library("mosquitto_new", MOSQ_ERR_NOMEM.rawValue) }
        self.handle = handle
        self.version5 = version5
        self.maximumPayload = maximumPayload
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try check("protocol version", mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION,
                                                            version5 ? Int32(MQTT_PROTOCOL_V5) : Int32(MQTT_PROTOCOL_V311)))
        if let username = credentials.username {
            let password = credentials.password.map { String(decoding: $0, as: UTF8.self) }
            try check("credentials", mosquitto_username_pw_set(handle, username, password))
        }
        if let will {
            try check("will", will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            })
        }
        if let tls {
            let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
            let capath = "/etc/ssl/certs"
            try check("TLS", mosquitto_tls_set(handle, tls.caFile ?? systemBundle, tls.caFile == nil ? nil : capath, nil, nil, nil))
            try check("TLS options", mosquitto_tls_opts_set(handle, 1 /* SSL_VERIFY_PEER */, "tlsv1.2", nil))
        }
        mosquitto_connect_v5_callback_set(handle) { _, context, reason, flags, _ in
            MosquittoClient.from(context).happenings.append(.connected(reason: Int(reason), sessionPresent: flags & 1 != 0))
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, code, _ in
            let client = MosquittoClient.from(context)
            client.happenings.append(.disconnected(code: Int(code), reason: client.describe(code)))
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reason, _ in
            MosquittoClient.from(context).happenings.append(.acknowledged(mid: mid, reason: Int(reason)))
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, _ in
            guard let message else { return }
            let client = MosquittoClient.from(context)
            let count = Int(message.pointee.payloadlen)
            var payload: [UInt8]?
            if count <= client.maximumPayload {
                payload = count == 0 || message.pointee.payload == nil ? []
                    : Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: count))
            }
            let topic = message.pointee.topic.map { String(cString: $0) } ?? ""
            client.happenings.append(.message(topic: topic, payload: payload, payloadCount: count,
                                              qos: Int(message.pointee.qos), retain: message.pointee.retain))
        }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level & Int32(MOSQ_LOG_ERR) != 0, let text else { return }
            MosquittoClient.from(context).lastLibraryError = String(cString: text)
        }
        if version5 {
            // libmosquitto takes CONNECT properties only through its blocking connect, which
            // stores them before it checks the host: a nil host stores them and returns
            // MOSQ_ERR_INVAL without connecting, and the non-blocking connect below sends them.
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            try check("session expiry", mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                                                                     will == nil ? 0 : Self.sessionExpirySeconds))
            try check("maximum packet size", mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), Self.maximumPacketSize))
            let stored = mosquitto_connect_bind_v5(handle, nil, 0, 30, nil, properties)
            guard stored == MOSQ_ERR_INVAL.rawValue else { throw .library("CONNECT properties", stored) }
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MosquittoClient {
        Unmanaged<MosquittoClient>.fromOpaque(context!).takeUnretainedValue()
    }

    private func check(_ step: String, _ code: Int32) throws(SetupError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else { throw .library(step, code) }
    }

    /// Starts a non-blocking connection (the host name is resolved here, blocking: see
    /// docs/site-bus.md). nil when started, else why not.
    func connect(host: String, port: Int, keepAliveSeconds: Int) -> String? {
        errno = 0
        let code = mosquitto_connect_async(handle, host, Int32(port), Int32(keepAliveSeconds))
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return describe(code) }
        return nil
    }

    /// The connection's descriptor, -1 when there is none.
    var socket: Int32 { mosquitto_socket(handle) }
    var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// The descriptor is readable: read what is there; what it meant is returned.
    func read() -> [Happening] {
        errno = 0
        let code = mosquitto_loop_read(handle, 1)
        return take(code)
    }

    func write() -> [Happening] {
        errno = 0
        let code = mosquitto_loop_write(handle, 1)
        return take(code)
    }

    /// Keep-alive and retries; about once a second.
    func misc() -> [Happening] {
        take(mosquitto_loop_misc(handle))
    }

    /// The message id, or the reason it was not queued.
    func publish(_ message: BusMessage) -> Result<Int32, PublishFailure> {
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return .success(mid) }
        let tooLarge = code == MOSQ_ERR_OVERSIZE_PACKET.rawValue || code == MOSQ_ERR_PAYLOAD_SIZE.rawValue
        return .failure(PublishFailure(text: describe(code), tooLarge: tooLarge))
    }

    func subscribe(_ topic: String, qos: Int) -> String? {
        let code = mosquitto_subscribe(handle, nil, topic, Int32(qos))
        return code == MOSQ_ERR_SUCCESS.rawValue ? nil : describe(code)
    }

    /// A clean DISCONNECT (reason 0: the broker discards the will).
    func disconnect() {
        _ = mosquitto_disconnect(handle)
    }

    /// The text of a library code, with errno when the code is one.
    func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue, errno != 0 { return String(cString: strerror(errno)) }
        if code == MOSQ_ERR_TLS.rawValue, let lastLibraryError { return lastLibraryError }
        return String(cString: mosquitto_strerror(code))
    }

    struct PublishFailure: Error {
        var text: String
        /// Larger than the broker takes (its CONNACK's maximum packet size): never will be.
        var tooLarge: Bool
    }

    static let tlsCode = Int(MOSQ_ERR_TLS.rawValue)
    static let errnoCode = Int(MOSQ_ERR_ERRNO.rawValue)
    static let connectionLostCode = Int(MOSQ_ERR_CONN_LOST.rawValue)
    static let keepAliveCode = Int(MOSQ_ERR_KEEPALIVE.rawValue)

    /// What callbacks reported outside a read or write (a publish written at once).
    func drain() -> [Happening] { take(MOSQ_ERR_SUCCESS.rawValue) }

    /// What the callbacks reported, and the connection's end when the library closed it
    /// without telling its callback (a failed TLS handshake returns from `loop_read` with
    /// the socket closed and no disconnect callback).
    private func take(_ code: Int32) -> [Happening] {
        var taken = happenings
        happenings = []
        let ended = taken.contains { if case .disconnected = $0 { true } else { false } }
        if !ended, code != MOSQ_ERR_SUCCESS.rawValue || mosquitto_socket(handle) < 0 {
            let failure = code == MOSQ_ERR_SUCCESS.rawValue ? MOSQ_ERR_NO_CONN.rawValue : code
            taken.append(.disconnected(code: Int(failure), reason: describe(failure)))
        }
        return taken
    }
}
