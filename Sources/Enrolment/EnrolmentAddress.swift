import BluetoothCrypto
import HCI
import Host
import SecurityManager

/// The address the gateway pairs from (docs/pairing.md, "The gateway's address"): the
/// controller's public address when it has a usable one; otherwise a static random
/// address derived from the gateway's site and id, which bring-up sets as the
/// controller's random address, so it is the same at every window and after every
/// restart, and needs nothing stored.
public enum EnrolmentAddress {
    /// The static random address of the gateway `gatewayId` at `site`: SHA-256 of a fixed
    /// label, the site, a zero byte and the id, its first six bytes with the top two bits set.
    public static func staticRandom(site: String, gatewayId: String) -> BluetoothAddress {
        .staticRandom(derivedFrom: Array("BGW-ENROLMENT-ADDRESS-v1".utf8) + Array(site.utf8) + [0] + Array(gatewayId.utf8))
    }

    /// The public address when usable, else the static random one bring-up set; nil when
    /// the controller has neither (no public address, and setting a random one failed or
    /// was not asked for).
    public static func identity(of info: ControllerInfo) -> AddressWithType? {
        if info.hasPublicAddress { return AddressWithType(info.address, isRandom: false) }
        return info.staticRandomAddress.map { AddressWithType($0, isRandom: true) }
    }
}

extension EnrolmentSession.Configuration {
    /// A window of `window` for `method`, advertising `name` from `address` (the identity
    /// `EnrolmentAddress.identity(of:)` chose), with a fresh IRK of ours: distributed so
    /// that iOS hands over its own, kept by nothing.
    public static func window(_ window: Duration, method: PairingMethod, name: String, address: AddressWithType) -> Self {
        Self(window: window, method: method,
             localIdentity: .init(irk: SecretKey128(SecureRandom.octets128()), address: address),
             advertisement: EnrolmentAdvertisement(name: name, randomAddress: address.isRandom ? address.address : nil))
    }
}
