/// What the process itself costs, as Prometheus's standard `process_*` metrics say it.
public struct ProcessSnapshot: Hashable, Sendable {
    public var cpuSeconds: Double
    public var residentBytes: Int
    public var startTimeSeconds: Double

    public init(cpuSeconds: Double, residentBytes: Int, startTimeSeconds: Double) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
        self.startTimeSeconds = startTimeSeconds
    }
}
