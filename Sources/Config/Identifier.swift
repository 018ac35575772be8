/// The alphabet of ids (gateway, person, tag): they go into idempotency keys
/// (`|`-separated), URLs and headers, so only 1…64 letters, digits and `. _ - : @`.
public enum Identifier {
    public static func isValid(_ text: String) -> Bool {
        let allowed = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                 UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"): true
            default: false
            }
        }
        return allowed && (1 ... 64).contains(text.utf8.count)
    }
}
