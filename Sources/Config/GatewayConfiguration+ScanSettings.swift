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
