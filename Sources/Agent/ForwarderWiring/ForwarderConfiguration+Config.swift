import Config
import Forwarder

extension ForwarderConfiguration {
    /// The forwarder's settings from `[gateway]` and `[server]` (the token as read, and
    /// permission-checked, by the configuration loader).
    public init(server: GatewayConfiguration.Server, gateway: GatewayConfiguration.Gateway, appVersion: String, maxInFlight: Int = 8) {
        self.init(url: server.url, deviceId: gateway.id, appVersion: appVersion, token: server.token,
                  caFile: server.caFile, timeout: server.timeout, maxBackoff: server.maxBackoff, maxInFlight: maxInFlight)
    }
}
