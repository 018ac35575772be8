import HCI

/// Creates the transport a spec names, closed: call `open()` on it.
///
/// - Parameter capturePath: `--capture FILE`: wrap it in a `CapturingTransport` writing there.
/// - Parameter captureKeys: `--capture-keys`: keys written as they are, not zeroed.
public func makeTransport(_ spec: TransportSpec, capturePath: String? = nil, captureKeys: Bool = false) throws(TransportError) -> any HCITransport {
    let transport: any HCITransport = switch spec {
    case .userChannel(let index): UserChannelTransport(index: index)
    case .tcp(let host, let port): TCPTransport(host: host, port: port)
    case .serial(let path, let baud): try SerialTransport(path: path, baud: baud)
    case .btsnoop(let path): BTSnoopReplayTransport(path: path)
    }
    guard let capturePath else { return transport }
    return CapturingTransport(wrapping: transport, path: capturePath, keepsKeys: captureKeys)
}
