import Forwarder
import Journal

/// One log line: level, message and fields, before the sink renders (and redacts) it.
public struct ForwarderLogLine {
    public var level: Severity
    public var message: String
    public var fields: KeyValuePairs<String, String>
}

extension ForwarderEvent {
    /// One log line per happening; routine deliveries and retries at debug, so an outage
    /// of a busy door does not flood the journal (one "failing" line, one "recovered").
    public func log(to sink: LogSink) {
        let line = logLine
        sink.log(line.level, line.message, line.fields)
    }

    /// Idempotency keys go under `idempotency_key`, which is not a secret: an operator
    /// must be able to match a dead letter to the server's records.
    public var logLine: ForwarderLogLine {
        switch self {
        case let .delivered(sequence, key, status):
            .init(level: .debug, message: "event delivered", fields: ["sequence": "\(sequence)", "idempotency_key": key, "status": "\(status)"])
        case let .rejected(sequence, key, status):
            .init(level: .warning, message: "event rejected by the server; kept, not retried",
                  fields: ["sequence": "\(sequence)", "idempotency_key": key, "status": "\(status)"])
        case let .deadLetter(sequence, key, status):
            .init(level: .warning, message: "event refused; kept as a dead letter (beacon-gateway outbox retry-dead)",
                  fields: ["sequence": "\(sequence)", "idempotency_key": key, "status": "\(status)"])
        case let .retrying(sequence, key, errorClass, message, delayMillis):
            .init(level: .debug, message: "delivery will be retried",
                  fields: ["sequence": "\(sequence)", "idempotency_key": key, "class": errorClass.rawValue, "error": message, "retry_in_ms": "\(delayMillis)"])
        case let .failing(errorClass, message):
            .init(level: errorClass == .auth || errorClass == .tls ? .error : .warning, message: "delivery failing; events are kept and retried",
                  fields: ["class": errorClass.rawValue, "error": message])
        case .recovered:
            .init(level: .notice, message: "delivery recovered", fields: [:])
        case let .storeFailed(error):
            .init(level: .error, message: "outbox store error; delivery pauses and retries with backoff", fields: ["error": error.description])
        case .storeRecovered:
            .init(level: .notice, message: "outbox store works again", fields: [:])
        case let .requestFailed(error):
            .init(level: .error, message: "could not start a request", fields: ["error": error.description])
        }
    }
}
