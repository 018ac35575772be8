import Forwarder
import Journal

extension ForwarderEvent {
    /// One log line per happening; routine deliveries and retries at debug, so an outage
    /// of a busy door does not flood the journal (one "failing" line, one "recovered").
    public func log(to sink: LogSink) {
        switch self {
        case let .delivered(sequence, key, status):
            sink.log(.debug, "event delivered", ["sequence": "\(sequence)", "key": key, "status": "\(status)"])
        case let .rejected(sequence, key, status):
            sink.log(.warning, "event rejected by the server; kept, not retried", ["sequence": "\(sequence)", "key": key, "status": "\(status)"])
        case let .deadLetter(sequence, key, status):
            sink.log(.warning, "event refused; kept as a dead letter (beacon-gateway outbox retry-dead)", ["sequence": "\(sequence)", "key": key, "status": "\(status)"])
        case let .retrying(sequence, key, errorClass, message, delayMillis):
            sink.log(.debug, "delivery will be retried", ["sequence": "\(sequence)", "key": key, "class": errorClass.rawValue, "error": message, "retry_in_ms": "\(delayMillis)"])
        case let .failing(errorClass, message):
            sink.log(errorClass == .auth || errorClass == .tls ? .error : .warning, "delivery failing; events are kept and retried",
                     ["class": errorClass.rawValue, "error": message])
        case .recovered:
            sink.log(.notice, "delivery recovered")
        case let .storeFailed(error):
            sink.log(.error, "outbox store error", ["error": error.description])
        case let .requestFailed(error):
            sink.log(.error, "could not start a request", ["error": error.description])
        }
    }
}
