import ArgumentParser
import Fleet
import Journal

/// `status`: asks the running agent over its status socket (see docs/fleet.md). Read-only.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "The running agent's state: controller, scanning, mode, clock, who is present, outbox, last events.",
        discussion: """
        The agent answers on $RUNTIME_DIRECTORY/status.sock (systemd sets RUNTIME_DIRECTORY), \
        else /run/beacon-gateway/status.sock. Exits 1 when no agent is running.
        """
    )

    @Flag(name: .long, help: "One JSON object instead of text.")
    var json = false

    @Option(name: .long, help: "The agent's status socket (default: the rule above).")
    var socket: String?

    func run() throws {
        let path = socket ?? StatusSocketPath.resolve()
        let answer: [UInt8]
        do {
            answer = try UnixSocketClient.exchange(path: path, request: StatusRequest.line(json ? .json : .text))
        } catch {
            switch error {
            case .notRunning:
                printError("status: no running agent answers on \(path) (is beacon-gateway run started?)")
            case .permissionDenied:
                printError("status: permission denied on \(path): run as the service's user or a member of its group")
            case let .failed(message):
                printError("status: \(path): \(message)")
            }
            throw GatewayExitCode.runtimeFailure
        }
        guard !answer.isEmpty else {
            printError("status: the agent closed \(path) without an answer")
            throw GatewayExitCode.runtimeFailure
        }
        writeStandardOutput(String(decoding: answer, as: UTF8.self))
    }
}
