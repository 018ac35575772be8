#if canImport(Glibc)
import Glibc
#endif
import Enrolment
import EventLoop
import Fleet
import Journal
import SystemCalls

/// `enroll` through the running agent (SPEC §15; docs/fleet.md, "Enrolment through the
/// status socket"): sends the request on the status socket, shows the agent's progress,
/// asks the installer to compare the six digits and answers, and prints the person. The
/// agent ends the window; the command only waits, bounded by the window and a margin.
struct AgentEnrolmentClient {
    let socketFD: Int32
    let request: EnrolmentChannel.Request
    let json: Bool

    /// Beyond the window: the pairing's own timeout and the link's end.
    static let margin: Duration = .seconds(60)
    static let maxLineBytes = 4096

    /// True when a phone was enrolled (printed).
    func run() -> Bool {
        defer { _ = close(socketFD) }
        guard UnixSocketClient.sendAll(EnrolmentChannel.line(request), on: socketFD) else {
            printError("enroll: cannot send the request to the agent: \(String(cString: strerror(errno)))")
            return false
        }
        let clock = SystemClock()
        let deadline = clock.now + .seconds(Int64(request.seconds)) + Self.margin
        var fromAgent: [UInt8] = []
        var fromInstaller: [UInt8] = []
        var comparing = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let wait = EventLoop.pollTimeout(until: deadline, now: clock.now)
            guard wait != 0 else {
                printError("enroll: the agent gave no outcome within the window")
                return false
            }
            var descriptors = [pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: comparing ? 0 : -1, events: Int16(POLLIN), revents: 0)]
            let ready = SystemCall.retryingInterrupts { poll(&descriptors, 2, wait) }
            guard ready >= 0 else {
                printError("enroll: \(String(cString: strerror(errno)))")
                return false
            }
            if comparing, descriptors[1].revents != 0 {
                let count = SystemCall.retryingInterrupts { read(0, &buffer, buffer.count) }
                if count > 0 { fromInstaller += buffer[..<count] }
                // End of input answers "no", as an empty line does.
                if count <= 0 || fromInstaller.contains(UInt8(ascii: "\n")) {
                    let matches = fromInstaller.first.map { $0 == UInt8(ascii: "y") || $0 == UInt8(ascii: "Y") } ?? false
                    fromInstaller = []
                    comparing = false
                    _ = UnixSocketClient.sendAll(EnrolmentChannel.answerLine(matches: matches), on: socketFD)
                }
            }
            guard descriptors[0].revents != 0 else { continue }
            let count = SystemCall.retryingInterrupts { recv(socketFD, &buffer, buffer.count, 0) }
            guard count > 0 else {
                printError("enroll: the agent closed the connection before the window ended (see journalctl -u beacon-gateway)")
                return false
            }
            fromAgent += buffer[..<count]
            while let newline = fromAgent.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(fromAgent[...newline])
                fromAgent.removeSubrange(...newline)
                switch EnrolmentChannel.message(line) {
                case .progress(let words):
                    printError("enroll: " + words)
                case .compare(let value):
                    printError("enroll: " + EnrolmentProgress.compareQuestion(value))
                    comparing = true
                case .enrolled(let phone):
                    EnrolledPersonOutput.print(phone, personId: request.personId, tagId: request.tagId, json: json)
                    return true
                case .failed(let reason):
                    EnrolledPersonOutput.printFailure(reason, json: json)
                    return false
                case nil:
                    printError("enroll: the agent sent a line this command does not understand (a different version?)")
                    return false
                }
            }
            guard fromAgent.count <= Self.maxLineBytes else {
                printError("enroll: the agent sent an overlong line")
                return false
            }
        }
    }
}
