import Host

extension GatewayConfiguration.Bluetooth {
    /// `[bluetooth]` as the host scans (`scan`, `tag_interval_ms`, `scan_duty`). `active` and
    /// `duty` are `scan`'s `--active` and `--duty`, which override the file. The one place
    /// this is read: `run` and the controller commands all ask here.
    public func scanSettings(active: Bool = false, duty: Double? = nil) -> ScanSettings {
        ScanSettings(
            mode: active || scan == .active ? .active : .passive,
            tagIntervalMs: tagIntervalMilliseconds,
            dutyOverride: duty ?? scanDuty
        )
    }
}

extension GatewayConfiguration.Bluetooth {
    /// `[bluetooth]` as the host makes connections (`connect_mode`, `max_connections`);
    /// `maxConnections` overrides the file (`prove` connects to one tag). The one place
    /// this is read: `run` and `prove` both ask here.
    public func connectScheduling(maxConnections: Int? = nil) -> ConnectScheduler.Configuration {
        ConnectScheduler.Configuration(mode: connectMode == .direct ? .direct : .acceptList,
                                       maxConnections: maxConnections ?? self.maxConnections)
    }
}
