/// The one rule for files holding a secret (the token, the master key, and the
/// configuration file when it holds a secret inline: a tag's key or IRK, a password in
/// the URL): closed to group and others, and readable by the service, which runs as the
/// user `beacon-gateway` (docs/security.md). The advice gives both halves: `chmod 600`
/// alone on a file root made would lock the service out of it.
public enum SecretFileRule {
    /// The user the packaged service runs as (systemd/beacon-gateway.service).
    public static let serviceUser = "beacon-gateway"

    /// Why a file holding a secret is unsafe, with the commands that fix it; `nil` when it
    /// is closed to group and others.
    public static func exposure(of path: String, permissions: UInt32) -> String? {
        guard permissions & 0o077 != 0 else { return nil }
        return "\(path) must not be accessible to group or others (mode \(octal(permissions))); "
            + "run `chown \(serviceUser): \(path) && chmod 600 \(path)` (the service reads it as the user \(serviceUser))"
    }
}
