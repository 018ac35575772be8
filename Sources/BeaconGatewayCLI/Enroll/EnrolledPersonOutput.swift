import Fleet
import JSONText
import Journal
import SecurityManager

/// What `enroll` prints for an enrolled phone, the same standalone and through the agent
/// (SPEC §15): the person as a `[[person]]` block, or with `--json` one line. Progress and
/// the summary go to standard error, the person to standard output.
enum EnrolledPersonOutput {
    static func print(_ phone: EnrolmentChannel.Enrolled, personId: String, tagId: String, json: Bool) {
        let addressType = phone.identityAddressIsRandom ? "random" : "public"
        // Nothing of the pairing but the person, the identity address, the method and the outcome.
        printError("enroll: \(personId) enrolled: identity address \(phone.identityAddress) (\(addressType)), \(phone.pairing)"
            + (phone.irk == nil ? ", no IRK (enrolled by its address)" : ""))
        if json {
            var tag = "{\"id\":" + JSONObjectWriter.quote(tagId)
            tag += phone.irk.map { ",\"irk\":" + JSONObjectWriter.quote($0) } ?? ",\"address\":" + JSONObjectWriter.quote(phone.identityAddress)
            tag += "}"
            Swift.print("{\"person\":{\"id\":" + JSONObjectWriter.quote(personId) + ",\"tags\":[" + tag + "]},\"identityAddress\":"
                + JSONObjectWriter.quote(phone.identityAddress) + ",\"identityAddressType\":" + JSONObjectWriter.quote(addressType)
                + ",\"pairing\":" + JSONObjectWriter.quote(phone.pairing) + "}")
        } else {
            if phone.irk != nil {
                Swift.print("# The IRK below lets anyone who holds it follow this phone: keep it as secret as a key file.")
            }
            Swift.print("# Paired by " + (phone.pairing == PairingMethod.numericComparison.rawValue
                ? "numeric-comparison: the installer confirmed the six digits."
                : "\(phone.pairing): nobody compared digits; make sure this was the phone meant."))
            Swift.print("[[person]]")
            Swift.print("id = \"\(personId)\"")
            Swift.print("[[person.tag]]")
            Swift.print("id = \"\(tagId)\"")
            Swift.print(phone.irk.map { "irk = \"\($0)\"" } ?? "address = \"\(phone.identityAddress)\"")
        }
    }

    /// No phone enrolled: why, on standard error (standard output stays empty, so that
    /// `enroll … >> gateway.toml` appends nothing); with `--json`, also as one JSON line there.
    static func printFailure(_ reason: String, json: Bool) {
        printError("enroll: " + reason)
        if json {
            printError("{\"enrolled\":false,\"reason\":" + JSONObjectWriter.quote(reason) + "}")
        }
    }
}
