#if canImport(Glibc)
import Glibc
#endif
import SystemCalls
import CLinux
import EventLoop

/// Why a local endpoint could not be opened.
public struct LocalServerError: Error, CustomStringConvertible {
    public var description: String

    init(_ what: String, errno code: Int32) {
        description = "\(what): \(String(cString: strerror(code)))"
    }

    init(_ description: String) {
        self.description = description
    }
}

/// A small read-only endpoint on the event loop, TCP or UNIX: accepts clients, runs one
/// `RequestConnection` per client, answers through `answer` and closes. It never blocks
/// the loop (non-blocking sockets, one bounded read per callback) and holds at most
/// `maxConnections` clients: more are closed at once.
public final class LocalServer {
    public enum Address: Hashable, Sendable {
        /// A numeric IPv4 or IPv6 address (or `localhost`) and a port.
        case tcp(host: String, port: UInt16)
        /// A socket file, created with mode 0660 (a stale one is replaced).
        case unix(path: String)
    }

    private final class Client {
        let fd: Int32
        /// Who connected (UNIX sockets only).
        var peer: PeerCredentials?
        var machine: RequestConnection
        var registration: EventLoop.Registration?
        var timer: EventLoop.TimerHandle?

        init(fd: Int32, machine: RequestConnection) {
            self.fd = fd
            self.machine = machine
        }
    }

    public let address: Address
    private let loop: EventLoop
    private let limits: RequestConnection.Limits
    private let maxConnections: Int
    private let answer: ([UInt8]) -> [UInt8]
    private let refusal: (RequestConnection.Refusal) -> [UInt8]
    private var listener: Int32 = -1
    private var listenerRegistration: EventLoop.Registration?
    private var clients: [Int32: Client] = [:]
    /// Clients closed at once because `maxConnections` were open.
    public private(set) var turnedAway = 0
    /// Clients cut off at the time limit.
    public private(set) var timedOut = 0
    /// UNIX clients closed at once because `admits` refused their credentials.
    public private(set) var refusedPeers = 0
    /// The port bound (useful with port 0); nil for a UNIX socket.
    public private(set) var boundPort: UInt16?
    /// Who takes a client over for a longer exchange than one answer, and the longest
    /// line it reads from the client.
    public struct TakeOver {
        public var maxLineBytes: Int
        public var accept: (LocalStream) -> Void

        public init(maxLineBytes: Int, accept: @escaping (LocalStream) -> Void) {
            self.maxLineBytes = maxLineBytes
            self.accept = accept
        }
    }

    /// Claims a request for a longer exchange than one answer (the status socket's
    /// enrolment): given the request head and who sent it (UNIX sockets), who takes the
    /// client over as a `LocalStream`, or nil to answer it as usual. The stream is no
    /// longer this server's client: it counts against no limit here and `close()` leaves
    /// it open.
    public var takeOver: ([UInt8], PeerCredentials?) -> TakeOver? = { _, _ in nil }
    /// Whether a UNIX client may talk to this server at all, by its credentials (read at
    /// every accept; nil when the kernel did not say): refused ones are closed at once.
    public var admits: (PeerCredentials?) -> Bool = { _ in true }

    static let readChunk = 4096
    /// Accepts per readable callback: a flood of connects cannot hold the loop.
    static let acceptsPerTurn = 16

    public init(loop: EventLoop, address: Address, limits: RequestConnection.Limits, maxConnections: Int,
                answer: @escaping ([UInt8]) -> [UInt8],
                refusal: @escaping (RequestConnection.Refusal) -> [UInt8]) throws(LocalServerError) {
        self.loop = loop
        self.address = address
        self.limits = limits
        self.maxConnections = max(1, maxConnections)
        self.answer = answer
        self.refusal = refusal
        switch address {
        case let .tcp(host, port): listener = try Self.listenTCP(host: host, port: port)
        case let .unix(path): listener = try Self.listenUnix(path: path)
        }
        boundPort = Self.localPort(listener)
        listenerRegistration = loop.register(fileDescriptor: listener) { [unowned self] in self.acceptClients() }
    }

    deinit {
        close()
    }

    public var openConnections: Int { clients.count }

    /// Closes the listener and every client; a UNIX socket's file is removed.
    public func close() {
        for client in Array(clients.values) { drop(client) }
        if let listenerRegistration { loop.unregister(listenerRegistration) }
        listenerRegistration = nil
        if listener >= 0 {
            _ = Glibc.close(listener)
            listener = -1
            if case let .unix(path) = address { _ = unlink(path) }
        }
    }

    // MARK: Clients

    private func acceptClients() {
        for _ in 0 ..< Self.acceptsPerTurn {
            let fd = clinux_accept_nonblocking(listener)
            guard fd >= 0 else { return }
            guard clients.count < maxConnections else {
                turnedAway += 1
                _ = Glibc.close(fd)
                continue
            }
            let client = Client(fd: fd, machine: RequestConnection(limits: limits, acceptedAt: loop.now))
            if case .unix = address {
                client.peer = PeerCredentials.of(socket: fd)
                guard admits(client.peer) else {
                    refusedPeers += 1
                    _ = Glibc.close(fd)
                    continue
                }
            }
            clients[fd] = client
            client.registration = loop.register(fileDescriptor: fd) { [unowned self, unowned client] in self.readable(client) }
            client.timer = loop.schedule(at: client.machine.deadline) { [unowned self, unowned client] in
                client.timer = nil
                if let action = client.machine.tick(at: self.loop.now) { self.perform(action, client) }
            }
        }
    }

    private func readable(_ client: Client) {
        var buffer = [UInt8](repeating: 0, count: Self.readChunk)
        let count = SystemCall.retryingInterrupts {
            buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        }
        let action: RequestConnection.Action
        if count > 0 {
            action = client.machine.received(buffer[..<count], at: loop.now)
        } else if count == 0 {
            action = client.machine.hungUp()
        } else if errno == EAGAIN || errno == EWOULDBLOCK {
            return
        } else {
            action = client.machine.failed()
        }
        perform(action, client)
    }

    private func perform(_ action: RequestConnection.Action, _ client: Client) {
        switch action {
        case .readMore:
            break
        case let .answer(head):
            if let taker = takeOver(head, client.peer) {
                return taker.accept(handOver(client, maxLineBytes: taker.maxLineBytes))
            }
            perform(client.machine.respond(answer(head)), client)
        case let .refuse(reason):
            perform(client.machine.respond(refusal(reason)), client)
        case .write:
            write(client)
        case .finishWriting:
            if let registration = client.registration { loop.setWritableCallback(registration, nil) }
            _ = shutdown(client.fd, Int32(SHUT_WR))
        case let .close(reason):
            if reason == .timedOut { timedOut += 1 }
            drop(client)
        }
    }

    private func write(_ client: Client) {
        while client.machine.phase == .writing {
            let unsent = client.machine.unsent
            let count = SystemCall.retryingInterrupts {
                unsent.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    if let registration = client.registration {
                        loop.setWritableCallback(registration) { [unowned self, unowned client] in self.write(client) }
                    }
                    return
                }
                perform(client.machine.failed(), client)
                return
            }
            let action = client.machine.wrote(count, at: loop.now)
            if action != .write {
                perform(action, client)
                return
            }
        }
    }

    /// The client as a stream of its own, out of this server's bookkeeping (its socket stays open).
    private func handOver(_ client: Client, maxLineBytes: Int) -> LocalStream {
        clients.removeValue(forKey: client.fd)
        if let registration = client.registration { loop.unregister(registration) }
        if let timer = client.timer { loop.cancel(timer) }
        client.registration = nil
        client.timer = nil
        return LocalStream(loop: loop, fd: client.fd, maxLineBytes: maxLineBytes)
    }

    private func drop(_ client: Client) {
        guard clients.removeValue(forKey: client.fd) != nil else { return }
        if let registration = client.registration { loop.unregister(registration) }
        if let timer = client.timer { loop.cancel(timer) }
        client.registration = nil
        client.timer = nil
        _ = Glibc.close(client.fd)
    }

    // MARK: Listening sockets

    static let backlog: Int32 = 16

    private static func listenTCP(host: String, port: UInt16) throws(LocalServerError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | (host == "localhost" ? 0 : AI_NUMERICHOST)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw LocalServerError("cannot listen on \(host):\(port): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let entry = list.pointee
        let fd = socket(entry.ai_family, entry.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), entry.ai_protocol)
        guard fd >= 0 else { throw LocalServerError("cannot create a socket for \(host):\(port)", errno: errno) }
        var on: Int32 = 1
        // A restarted agent rebinds at once instead of waiting out TIME_WAIT.
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, entry.ai_addr, entry.ai_addrlen) == 0, listen(fd, backlog) == 0 else {
            let code = errno
            _ = Glibc.close(fd)
            throw LocalServerError("cannot listen on \(host):\(port)", errno: code)
        }
        return fd
    }

    private static func listenUnix(path: String) throws(LocalServerError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { throw LocalServerError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        if isLiveSocket(path) {
            throw LocalServerError("\(path) is in use: is another agent running?")
        }
        // A socket file left by an agent that was killed: replace it (nothing else).
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else { throw LocalServerError("\(path) exists and is not a socket") }
            _ = unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LocalServerError("cannot create a socket for \(path)", errno: errno) }
        // Owner and group only, from the moment the file exists.
        let previous = umask(0o117)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let code = errno
        umask(previous)
        guard bound == 0, listen(fd, backlog) == 0 else {
            let failure = bound == 0 ? errno : code
            _ = Glibc.close(fd)
            throw LocalServerError("cannot listen on \(path)", errno: failure)
        }
        _ = chmod(path, 0o660)
        return fd
    }

    /// Whether an agent answers on `path` (connect succeeds).
    static func isLiveSocket(_ path: String) -> Bool {
        guard let fd = UnixSocketClient.connect(path: path) else { return false }
        _ = Glibc.close(fd)
        return true
    }

    private static func localPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        case AF_INET6:
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        default:
            return nil
        }
    }
}
