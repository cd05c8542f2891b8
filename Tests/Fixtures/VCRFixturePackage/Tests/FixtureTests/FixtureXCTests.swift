import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRTesting
import XCTest

/// Cassettes: `Cassettes.bundle/FixtureXCTests/<test method>.json` in this package.
final class FixtureXCTests: VCRTestCase {
    override func shouldSetUpVCR() -> Bool { !name.contains("Stubbed") }

    override func updateVCRConfiguration(_ configuration: inout VCRConfiguration) {
        // The port changes from run to run: match what the test chooses.
        configuration.matchers = [.method, .path, .query]
    }

    override func updateCassetteConfiguration(_ configuration: inout VCRConfiguration) {
        configuration.playbackMode = .momentary
    }

    override func setUp() {
        super.setUp()
        failsOnUnplayedInteractions = true
    }

    func testGet() async throws {
        XCTAssertEqual(URL(fileURLWithPath: cassettePath).lastPathComponent, "testGet.json")
        XCTAssertEqual(cassette?.url.path, cassettePath)
        let (data, response) = try await URLSession.shared.data(from: Fixture.url("/get"))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        XCTAssertEqual((json?["args"] as? [String: String])?["fixture"], Fixture.query)
    }

    func test_snake_case_name() throws {
        let (data, response, error) = synchronousGet(Fixture.url("/anything/snake"))
        XCTAssertNil(error)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertNotNil(data)
    }

    func testStubbedHasNoCassette() {
        XCTAssertNil(cassette)
        XCTAssertNil(VCR.cassette)
    }
}
