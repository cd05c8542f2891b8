import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCRTesting
import XCTest

/// ``VCRTestCase`` where its sources are out of reach: the class's file is where no sources are (as on Xcode Cloud),
/// so its cassette comes from the test bundle's copy, `Bundled/Cassettes.bundle/BundleFallbackXCTests/`.
final class BundleFallbackXCTests: VCRTestCase {
    override class var testFilePath: String? {
        "/nonexistent-HTTPVCR-sources/Tests/HTTPVCRTestingTests/BundleFallbackXCTests.swift"
    }

    override func updateCassetteConfiguration(_ configuration: inout VCRConfiguration) {
        DogfoodServer.configure(&configuration)
        configuration.recordMode = .once
    }

    /// What the test was told besides failures.
    private var notices: [String] = []

    override func warnTest(_ message: String) {
        notices.append(message)
    }

    func testReplaysFromTheBundleCopy() async throws {
        let copy = Bundle.module.resourceURL!.appendingPathComponent("Cassettes.bundle").standardizedFileURL.path
            + "/BundleFallbackXCTests/testReplaysFromTheBundleCopy.json"
        XCTAssertEqual(
            cassettesPath, "/nonexistent-HTTPVCR-sources/Tests/HTTPVCRTestingTests/Cassettes.bundle/BundleFallbackXCTests"
        )
        let cassette = try XCTUnwrap(cassette)
        XCTAssertEqual(cassette.path, copy)
        XCTAssertTrue(cassette.isWriteProtected)

        let (data, response) = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?bundled=xctest"))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertTrue(String(decoding: data, as: UTF8.self).contains("\"copy\": \"test bundle\""))

        XCTAssertEqual(notices.count, 1)
        let notice = try XCTUnwrap(notices.first)
        XCTAssertTrue(notice.hasPrefix("Replaying the test bundle's copy of this test's cassette, \(copy)"), notice)
        XCTAssertTrue(notice.contains("(no sources here: Xcode Cloud or a copied test bundle)"), notice)
        XCTAssertTrue(notice.contains("test: BundleFallbackXCTests/testReplaysFromTheBundleCopy"), notice)
    }
}
