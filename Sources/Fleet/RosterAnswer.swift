/// How a roster request ended (docs/fleet.md): what `RosterFetcher` reports and
/// `RosterSync` decides on.
public enum RosterAnswer: Hashable, Sendable {
    /// 304: the roster of that ETag is still current.
    case notModified
    /// 200 with its ETag (nil when the server sent none) and body.
    case roster(etag: String?, body: [UInt8])
    /// Another status, a timeout, a network error, an answer over the limit, a request
    /// that could not start: not a roster error.
    case failed(String)
}
