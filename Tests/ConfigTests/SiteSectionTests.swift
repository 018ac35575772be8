import Config
import GatewayCore
import XCTest

/// `[site]` (docs/neighbours.md, docs/configuration.md): the neighbouring doors, the margin
/// and the handover, and what neighbours need (the site master key and the bus).
final class SiteSectionTests: XCTestCase {
    /// Line 9 on is `lines`.
    private func site(_ lines: String, security: Bool = true, mqtt: Bool = true) -> String {
        """
        [gateway]
        id = "door-1"
        site = "S_HQ"
        \(security ? "[security]" : "")
        \(security ? #"master_key_file = "/etc/bg/master.key""# : "")
        \(mqtt ? "[mqtt]" : "")
        \(mqtt ? #"url = "mqtts://broker""# : "")
        [site]
        \(lines)
        """
    }

    private func parse(_ text: String) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(text: text, file: "gateway.toml", fileSystem: standardFileSystem())
    }

    func testAListOfNeighboursLoadsWithTheDefaults() throws {
        let config = try parse(site(#"neighbours = ["door-2", "door-3"]"#))
        XCTAssertEqual(config.site, GatewayConfiguration.Site(neighbours: .doors(["door-2", "door-3"]), marginDB: 6, handover: .seconds(5)))
        XCTAssertTrue("\(config)".contains("[site]\nneighbours = [\"door-2\", \"door-3\"]\nmargin_db = 6\nhandover_s = 5\n"), "\(config)")
        // What check-config prints parses back to the same configuration.
        XCTAssertEqual(try parse(config.renderEffective()).site, config.site)
    }

    func testEveryDoorOfTheSiteAndTheNumbers() throws {
        let config = try parse(site("neighbours = [\"*\"]\nmargin_db = 10\nhandover_s = 2.5"))
        XCTAssertEqual(config.site, GatewayConfiguration.Site(neighbours: .anyDoorOfSite, marginDB: 10, handover: .milliseconds(2500)))
        XCTAssertEqual(try parse(config.renderEffective()).site, config.site)
    }

    func testNoNeighboursDecidesAloneAndNeedsNeitherKeyNorBus() throws {
        let config = try parse(site("neighbours = []", security: false, mqtt: false))
        XCTAssertEqual(config.site?.hasNeighbours, false)
    }

    func testNeighboursIsRequiredAndAnArrayOfGatewayIds() {
        assertIssues(site("margin_db = 6"), fileSystem: standardFileSystem(), [
            "gateway.toml:8: site.neighbours: required key is missing",
        ])
        assertIssues(site(#"neighbours = "door-2""#), fileSystem: standardFileSystem(), [
            #"gateway.toml:9: site.neighbours: must be an array of gateway ids, e.g. ["door-lab-302"], or ["*"] for every door of the site, got string"#,
        ])
        assertIssues(site(#"neighbours = ["door-2", 3, "door 4"]"#), fileSystem: standardFileSystem(), [
            "gateway.toml:9: site.neighbours[2]: must be a gateway id (a string), got integer",
            #"gateway.toml:9: site.neighbours[3]: must be a gateway id: 1 to 64 letters, digits or . _ - : @, got "door 4""#,
        ])
    }

    func testANeighbourIsNotThisDoorNorListedTwice() {
        assertIssues(site(#"neighbours = ["door-2", "door-1", "door-2"]"#), fileSystem: standardFileSystem(), [
            "gateway.toml:9: site.neighbours[2]: is this gateway's own id ([gateway] id); list the other doors that can hear its people",
            #"gateway.toml:9: site.neighbours[3]: lists "door-2" a second time"#,
        ])
    }

    func testTheStarOnlyAlone() {
        assertIssues(site(#"neighbours = ["door-2", "*"]"#), fileSystem: standardFileSystem(), [
            #"gateway.toml:9: site.neighbours[2]: "*" (every door of the site) must be the only neighbour: write neighbours = ["*"]"#,
        ])
    }

    func testTheMarginAndTheHandoverInTheirRanges() {
        assertIssues(site("neighbours = [\"door-2\"]\nmargin_db = 0.5\nhandover_s = 120"), fileSystem: standardFileSystem(), [
            "gateway.toml:10: site.margin_db: must be between 1.0 and 30.0, got 0.5",
            "gateway.toml:11: site.handover_s: must be between 1 and 60 (seconds), got 120",
        ])
        assertIssues(site("neighbours = [\"door-2\"]\nmargin_db = \"6\"\nhandover_s = 0.5"), fileSystem: standardFileSystem(), [
            "gateway.toml:10: site.margin_db: must be a number, got string",
            "gateway.toml:11: site.handover_s: must be between 1 and 60 (seconds), got 0.5",
        ])
        assertIssues(site("neighbours = [\"door-2\"]\nmargin = 6"), fileSystem: standardFileSystem(), [
            "gateway.toml:10: site.margin: unknown key; did you mean `margin_db`?",
        ])
    }

    func testNeighboursNeedTheMasterKeyAndTheBusAndSayWhichIsMissing() {
        assertIssues(site(#"neighbours = ["door-2"]"#, security: false), fileSystem: standardFileSystem(), [
            "gateway.toml:9: site.neighbours: needs [security] master_key_file (sightings are signed and name persons with keys derived from it)",
        ])
        assertIssues(site(#"neighbours = ["*"]"#, mqtt: false), fileSystem: standardFileSystem(), [
            "gateway.toml:9: site.neighbours: needs [mqtt] (sightings travel on the site bus)",
        ])
        assertIssues(site(#"neighbours = ["door-2"]"#, security: false, mqtt: false), fileSystem: standardFileSystem(), [
            "gateway.toml:9: site.neighbours: needs [security] master_key_file (sightings are signed and name persons with keys derived from it) and [mqtt] (sightings travel on the site bus)",
        ])
    }
}
