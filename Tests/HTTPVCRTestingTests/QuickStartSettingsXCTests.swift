import Foundation
import HTTPVCRTesting
import XCTest
import HTTPBinTestSupport

/// What README's quick start says of the test integrations: a cassette starts from the shared defaults
/// (`VCR.setup`), but the integration chooses its file, so the shared `cassettesPath` is not used.
final class QuickStartSettingsXCTests: VCRTestCase {
    override func updateVCRConfiguration(_ configuration: inout VCRConfiguration) {
        configuration.cassettesPath = "/nonexistent/set-in-VCR.setup"
        configuration.matchers = [.method, .path]
        configuration.chronologicalWait = 0.07
    }

    func testSharedDefaultsApplyButTheIntegrationChoosesTheFile() throws {
        let cassette = try XCTUnwrap(cassette)
        XCTAssertEqual(
            cassette.url.path,
            packageRoot.appendingPathComponent("Cassettes.bundle/QuickStartSettingsXCTests/"
                + "testSharedDefaultsApplyButTheIntegrationChoosesTheFile.json").path
        )
        XCTAssertEqual(cassette.configuration.matchers.map(\.name), ["method", "path"])
        XCTAssertEqual(cassette.configuration.chronologicalWait, 0.07)
    }
}
