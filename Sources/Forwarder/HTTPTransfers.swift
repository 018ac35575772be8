import AttendanceEvents
import CCurl
import EventLoop
#if canImport(Glibc)
import Glibc
#endif

/// libcurl's multi interface on the event loop: curl tells us (socket and timer
/// callbacks) which descriptors to watch and when to wake it; the loop calls back and we
/// hand the event to `curl_multi_socket_action`. Nothing here ever blocks the loop.
///
/// This file is the only one that touches libcurl.
final class HTTPTransfers: TransferSession {
    private let loop: EventLoop
    private let multi: UnsafeMutableRawPointer
    private var sockets: [Int32: EventLoop.Registration] = [:]
    private var timer: EventLoop.TimerHandle?
    private var transfers: [UInt64: Transfer] = [:]
    private var nextID: UInt64 = 1
    /// Called with every batch of finished transfers (one `socket_action`'s worth), so
    /// the caller can record them in one store transaction.
    var onCompletions: ([TransferCompletion]) -> Void = { _ in }
    /// Called, before `onCompletions`, with the kept answer of each finished transfer
    /// whose request had an `answerLimit` and that got a response.
    var onAnswer: (UInt64, ReceivedAnswer) -> Void = { _, _ in }

    /// The state of one transfer that libcurl's callbacks reach through a raw pointer.
    final class Transfer {
        let id: UInt64
        let easy: UnsafeMutableRawPointer
        var headerList: UnsafeMutablePointer<curl_slist>?
        var retryAfter: String?
        /// Only for requests with an `answerLimit`.
        var answerLimit: Int?
        var answerBody: [UInt8] = []
        var answerTooLarge = false
        var etag: String?
        /// libcurl writes its detailed message here: memory that must stay put for the
        /// transfer's lifetime, so not a Swift array.
        let errorBuffer: UnsafeMutablePointer<CChar>
        static let errorBufferSize = Int(CURL_ERROR_SIZE) + 1

        init(id: UInt64, easy: UnsafeMutableRawPointer) {
            self.id = id
            self.easy = easy
            errorBuffer = .allocate(capacity: Self.errorBufferSize)
            errorBuffer.initialize(repeating: 0, count: Self.errorBufferSize)
        }

        /// Only after `curl_easy_cleanup` of `easy`: the handle points at both.
        deinit {
            curl_slist_free_all(headerList)
            errorBuffer.deallocate()
        }

        var errorMessage: String {
            let bytes = UnsafeBufferPointer(start: errorBuffer, count: Self.errorBufferSize - 1)
            return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    init(loop: EventLoop, maxConnections: Int) throws(ForwarderError) {
        guard Self.globalInit, let multi = curl_multi_init() else { throw .curl("libcurl could not be initialised") }
        self.loop = loop
        self.multi = multi
        let me = Unmanaged.passUnretained(self).toOpaque()
        ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, me)
        ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, me)
        ccurl_multi_setopt_socket_function(multi) { _, socket, what, userp, _ in
            guard let userp else { return 0 }
            Unmanaged<HTTPTransfers>.fromOpaque(userp).takeUnretainedValue().watch(socket: socket, what: what)
            return 0
        }
        ccurl_multi_setopt_timer_function(multi) { _, timeoutMillis, userp in
            guard let userp else { return 0 }
            Unmanaged<HTTPTransfers>.fromOpaque(userp).takeUnretainedValue().armTimer(milliseconds: timeoutMillis)
            return 0
        }
        // HTTP/2 multiplexing when the server offers it (ALPN), keep-alive otherwise.
        ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        setMaxConnections(maxConnections)
    }

    deinit {
        cancelAll()
        curl_multi_cleanup(multi)
    }

    var count: Int { transfers.count }

    func setMaxConnections(_ count: Int) {
        ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, count))
        ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, count))
    }

    /// Starts a POST; its result comes through `onCompletions`.
    func start(_ request: TransferRequest) throws(ForwarderError) -> UInt64 {
        // The last line of defence: whatever a caller passes, no clear text leaves the host.
        guard let target = ServerURL(request.url), target.isAllowedTransport else {
            throw .insecureURL(ServerURL(request.url)?.redacted ?? "(not shown)")
        }
        guard let easy = curl_easy_init() else { throw .curl("curl_easy_init failed") }
        let id = nextID
        nextID &+= 1
        let transfer = Transfer(id: id, easy: easy)
        for line in request.headers {
            guard let list = curl_slist_append(transfer.headerList, line) else {
                curl_easy_cleanup(easy)
                throw .curl("out of memory for headers")
            }
            transfer.headerList = list
        }
        var ok = true
        func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }
        check(ccurl_setopt_string(easy, CURLOPT_URL, request.url))
        check(ccurl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, target.scheme == .https ? "https" : "http"))
        if request.isGet {
            check(ccurl_setopt_long(easy, CURLOPT_HTTPGET, 1))
        } else {
            check(ccurl_setopt_long(easy, CURLOPT_POST, 1))
            check(ccurl_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count))
            request.body.withUnsafeBytes { raw in
                // COPYPOSTFIELDS copies POSTFIELDSIZE bytes now: our buffer may go away.
                var bytes = Array(raw) + [0]
                bytes.withUnsafeMutableBytes { check(ccurl_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)) }
            }
        }
        check(ccurl_setopt_slist(easy, CURLOPT_HTTPHEADER, transfer.headerList))
        check(ccurl_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(ccurl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeout)))
        check(ccurl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)))
        // HTTP/2 when the server offers it and this libcurl has it; the release's minimal
        // static libcurl has no nghttp2 and refuses the option: then HTTP/1.1 it is.
        _ = ccurl_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        if request.url.hasPrefix("https:") {
            // Wait for ALPN to tell whether one HTTP/2 connection will carry them all,
            // rather than opening one connection per request. (Plain http has no HTTP/2
            // here: waiting would only serialise the first requests.)
            check(ccurl_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        }
        check(ccurl_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        // Verification is never switched off: https always checks the chain and the name.
        check(ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
        check(ccurl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        if let bundle = request.caBundle {
            var copy = bundle
            copy.withUnsafeMutableBytes { raw in
                var blob = curl_blob(data: raw.baseAddress, len: raw.count, flags: UInt32(CURL_BLOB_COPY))
                check(ccurl_setopt_blob(easy, CURLOPT_CAINFO_BLOB, &blob))
            }
        }
        check(ccurl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer))
        let transferPointer = Unmanaged.passUnretained(transfer).toOpaque()
        check(ccurl_setopt_pointer(easy, CURLOPT_PRIVATE, transferPointer))
        check(ccurl_setopt_pointer(easy, CURLOPT_HEADERDATA, transferPointer))
        check(ccurl_setopt_write_function(easy, CURLOPT_HEADERFUNCTION) { buffer, size, count, userdata in
            let length = size &* count
            guard let buffer, let userdata else { return length }
            let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
            transfer.noteHeader(UnsafeRawBufferPointer(start: buffer, count: length))
            return length
        })
        if let limit = request.answerLimit {
            transfer.answerLimit = limit
            check(ccurl_setopt_pointer(easy, CURLOPT_WRITEDATA, transferPointer))
            check(ccurl_setopt_write_function(easy, CURLOPT_WRITEFUNCTION) { buffer, size, count, userdata in
                let length = size &* count
                guard let buffer, let userdata else { return length }
                let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
                // Returning less than given makes libcurl fail the transfer: bounded memory.
                return transfer.keepAnswer(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
            })
        } else {
            // The body of the answer is not needed: read and dropped, so memory stays bounded.
            check(ccurl_setopt_write_function(easy, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size &* count })
        }
        guard ok else {
            curl_easy_cleanup(easy)
            throw .curl("libcurl refused an option (is it too old? 7.85 or newer is needed)")
        }
        transfers[id] = transfer
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            transfers[id] = nil
            curl_easy_cleanup(easy)
            throw .curl(String(cString: curl_multi_strerror(added)))
        }
        return id
    }

    /// Abandons every transfer (no completion is reported for them).
    func cancelAll() {
        for transfer in transfers.values {
            curl_multi_remove_handle(multi, transfer.easy)
            curl_easy_cleanup(transfer.easy)
        }
        transfers.removeAll()
        for registration in sockets.values { loop.unregister(registration) }
        sockets.removeAll()
        if let timer { loop.cancel(timer) }
        timer = nil
    }

    // MARK: libcurl's callbacks

    private func watch(socket: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if let registration = sockets.removeValue(forKey: socket) { loop.unregister(registration) }
            return
        }
        let registration: EventLoop.Registration
        if let existing = sockets[socket] {
            registration = existing
        } else {
            registration = loop.register(fileDescriptor: socket) { [weak self] in
                self?.act(socket: socket, events: CURL_CSELECT_IN)
            }
            sockets[socket] = registration
        }
        let wantsOutput = what == CURL_POLL_OUT || what == CURL_POLL_INOUT
        loop.setWritableCallback(registration, wantsOutput ? { [weak self] in self?.act(socket: socket, events: CURL_CSELECT_OUT) } : nil)
    }

    private func armTimer(milliseconds: Int) {
        if let timer { loop.cancel(timer) }
        timer = nil
        guard milliseconds >= 0 else { return }
        // Not called from inside this callback: libcurl forbids re-entering socket_action.
        timer = loop.schedule(after: .milliseconds(milliseconds)) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.act(socket: Self.socketTimeout, events: 0)
        }
    }

    /// CURL_SOCKET_TIMEOUT (a macro Swift cannot import).
    private static let socketTimeout: Int32 = -1

    private func act(socket: Int32, events: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, socket, events, &running)
        collectFinished()
    }

    private func collectFinished() {
        var finished: [TransferCompletion] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = ccurl_message_result(message)
            var privatePointer: UnsafeMutablePointer<CChar>?
            ccurl_getinfo_pointer(easy, CURLINFO_PRIVATE, &privatePointer)
            curl_multi_remove_handle(multi, easy)
            guard let privatePointer else {
                curl_easy_cleanup(easy)
                continue
            }
            let transfer = Unmanaged<Transfer>.fromOpaque(UnsafeRawPointer(privatePointer)).takeUnretainedValue()
            let outcome = result(of: transfer, code: code)
            if transfer.answerLimit != nil, case .response = outcome {
                onAnswer(transfer.id, ReceivedAnswer(etag: transfer.etag, body: transfer.answerBody))
            }
            finished.append((transfer.id, outcome))
            curl_easy_cleanup(easy)
            transfers[transfer.id] = nil
        }
        if !finished.isEmpty { onCompletions(finished) }
    }

    private func result(of transfer: Transfer, code: CURLcode) -> AttemptResult {
        if transfer.answerTooLarge, let limit = transfer.answerLimit {
            return .failure(TransportFailure(kind: .protocolError, message: "the answer is larger than \(limit) bytes"))
        }
        guard code == CURLE_OK else {
            let detail = transfer.errorMessage
            let summary = String(cString: curl_easy_strerror(code))
            return .failure(Self.failure(code: code, message: detail.isEmpty ? summary : "\(summary): \(detail)"))
        }
        var status = 0
        ccurl_getinfo_long(transfer.easy, CURLINFO_RESPONSE_CODE, &status)
        return .response(status: status, retryAfter: transfer.retryAfter)
    }

    static func failure(code: CURLcode, message: String) -> TransportFailure {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return TransportFailure(kind: .timeout, message: message)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return TransportFailure(kind: .connect, message: message)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_CRL_BADFILE:
            return TransportFailure(kind: .tls, message: "TLS: \(message)")
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_UNSUPPORTED_PROTOCOL:
            return TransportFailure(kind: .protocolError, message: message)
        default:
            return TransportFailure(kind: .network, message: message)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(clamping: Backoff.milliseconds(duration))
    }
}

extension HTTPTransfers.Transfer {
    /// Keeps `Retry-After` (and, when the answer is kept, `ETag`) from the final response's
    /// headers (a new status line resets them, so a 100 Continue's headers do not count).
    /// Bounded: a `Retry-After` line longer than 256 bytes is not one we need; an `ETag`
    /// is kept whole (libcurl hands over no header line beyond 100 KiB) so that the roster
    /// can say why one too long for it is not kept (docs/fleet.md) instead of losing it.
    func noteHeader(_ line: UnsafeRawBufferPointer) {
        if line.starts(with: Array("HTTP/".utf8)) {
            retryAfter = nil
            etag = nil
            answerBody.removeAll()
            return
        }
        if let value = Self.value(of: "retry-after:", in: line) {
            retryAfter = value
        } else if answerLimit != nil, let value = Self.value(of: "etag:", in: line, maximumLength: line.count) {
            var trimmed = Substring(value)
            while trimmed.first == " " || trimmed.first == "\t" { trimmed = trimmed.dropFirst() }
            while trimmed.last == " " || trimmed.last == "\t" { trimmed = trimmed.dropLast() }
            etag = trimmed.isEmpty ? nil : String(trimmed)
        }
    }

    /// The value of header `name` (lowercase, with its colon) when `line` is that header,
    /// without the line break.
    private static func value(of name: StaticString, in line: UnsafeRawBufferPointer, maximumLength: Int = 256) -> String? {
        let name = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        guard line.count > name.count, line.count <= maximumLength else { return nil }
        for (index, byte) in name.enumerated() {
            let got = line[index] >= 0x41 && line[index] <= 0x5A ? line[index] + 0x20 : line[index]
            guard got == byte else { return nil }
        }
        let value = line[name.count...].filter { $0 != 0x0D && $0 != 0x0A }
        return String(decoding: value, as: UTF8.self)
    }

    /// Appends part of the answer's body; false (and marked) once it exceeds the limit.
    func keepAnswer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let limit = answerLimit, answerBody.count + bytes.count <= limit else {
            answerTooLarge = true
            return false
        }
        answerBody.append(contentsOf: bytes)
        return true
    }
}
