import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 server on 127.0.0.1 for driving the real forwarder: one thread per
/// connection, keep-alive, answers chosen by the test per request.
final class LoopbackServer: @unchecked Sendable {
    struct Request: Equatable {
        var key: String
        var person: String
        var sequence: Int
    }

    struct Answer {
        var status: Int
        var headers: [String] = []
        var body = "{}"
    }

    private let listener: Int32
    /// The accept loop's thread, joined by `stop()` before the listener is closed: a
    /// thread still about to call accept(2) on a closed number would take the connections
    /// of whatever socket a later test gets at that number.
    private var acceptThread = pthread_t()
    let port: UInt16
    private let state = Mutex<[Request]>([])
    private let headState = Mutex<[String]>([])
    private let decide: @Sendable (_ index: Int, _ request: Request) -> Answer

    init(decide: @escaping @Sendable (_ index: Int, _ request: Request) -> Answer) throws {
        self.decide = decide
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw POSIXFailure(errno: errno)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
        acceptThread = start { [self] in acceptLoop() }
    }

    struct POSIXFailure: Error { var errno: Int32 }

    var url: String { "http://127.0.0.1:\(port)" }

    var requests: [Request] { state.withLock { $0 } }
    /// Every request's line and headers, as received.
    var heads: [String] { headState.withLock { $0 } }

    /// Once: shutdown(2) makes the pending accept(2) fail, the accept thread ends, then
    /// the listener is closed.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        pthread_join(acceptThread, nil)
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            spawn { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            // Headers.
            var headerEnd: Int?
            while headerEnd == nil {
                if let end = Self.find([13, 10, 13, 10], in: buffer) { headerEnd = end; break }
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
                buffer += chunk[0 ..< count]
            }
            guard let end = headerEnd else { return }
            let head = String(decoding: buffer[0 ..< end], as: UTF8.self)
            var length = 0
            var key = ""
            for line in head.split(separator: "\r\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                let value = parts[1].trimmingPrefix(" ")
                switch parts[0].lowercased() {
                case "content-length": length = Int(value) ?? 0
                case "idempotency-key": key = String(value)
                default: break
                }
            }
            while buffer.count < end + 4 + length {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
                buffer += chunk[0 ..< count]
            }
            let request = Request(key: key, body: Array(buffer[(end + 4) ..< (end + 4 + length)]))
            buffer.removeFirst(end + 4 + length)
            headState.withLock { $0.append(head) }
            let index = state.withLock { requests in
                requests.append(request)
                return requests.count - 1
            }
            let answer = decide(index, request)
            let content = answer.status == 304 ? "" : answer.body
            var response = "HTTP/1.1 \(answer.status) X\r\nContent-Length: \(content.utf8.count)\r\nContent-Type: application/json\r\n"
            for header in answer.headers { response += header + "\r\n" }
            response += "\r\n" + content
            let bytes = Array(response.utf8)
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0 ... haystack.count - needle.count where haystack[start ..< start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}

extension LoopbackServer.Request {
    /// The request an event's POST carries: its key, and person and sequence from the
    /// flat JSON bodies the tests write.
    init(key: String, body: [UInt8]) {
        let text = String(decoding: body, as: UTF8.self)
        self.init(key: key, person: Self.field("person", in: text) ?? "", sequence: Int(Self.field("sequence", in: text) ?? "") ?? -1)
    }

    /// `"name": value` from a flat JSON body.
    private static func field(_ name: String, in body: String) -> String? {
        guard let range = body.range(of: "\"\(name)\": ") else { return nil }
        let rest = body[range.upperBound...].prefix { $0 != "," && $0 != "}" }
        return String(rest.filter { $0 != "\"" })
    }
}

/// Runs `body` on a detached thread.
private func spawn(_ body: @escaping @Sendable () -> Void) {
    pthread_detach(start(body))
}

/// Runs `body` on a new thread, to be joined or detached by the caller.
private func start(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
        box.body()
        return nil
    }, context)
    precondition(started == 0, "pthread_create: \(started)")
    return thread
}
