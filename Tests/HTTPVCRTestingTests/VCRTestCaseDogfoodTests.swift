import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRTesting
import XCTest
import HTTPBinTestSupport

/// The XCTest base class on the project's own replay tests: `Cassettes.bundle/VCRTestCaseDogfoodTests/<test>.json`
/// at the package root, recorded on the first run and committed, replayed with no server after.
///
/// Re-record one: `VCR_RECORD_MODE=all scripts/test --filter VCRTestCaseDogfoodTests/testGetJSON`.
final class VCRTestCaseDogfoodTests: VCRTestCase {
    override func shouldSetUpVCR() -> Bool { !name.contains("Stubbed") }

    override func updateCassetteConfiguration(_ configuration: inout VCRConfiguration) {
        DogfoodServer.configure(&configuration)
    }

    override func setUp() {
        super.setUp()
        failsOnUnplayedInteractions = true
    }

    func testGetJSON() async throws {
        XCTAssertEqual(cassettesPath, packageRoot.appendingPathComponent("Cassettes.bundle/VCRTestCaseDogfoodTests").path)
        XCTAssertEqual(cassettePath, cassettesPath + "/testGetJSON.json")
        let cassette = try XCTUnwrap(cassette)
        XCTAssertEqual(cassette.url.path, cassettePath)
        XCTAssertEqual(VCRActiveCassette.current?.cassette.url, cassette.url, "the task-local reaches async tests")
        XCTAssertEqual(cassette.configuration.matchers.map(\.name), ["method", "path", "query"])

        let before = try? HTTPBin.requestCount()
        let (data, response) = try await URLSession.shared.data(from: DogfoodServer.url("/get?dogfood=xctest"))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(data.json?["args"] as? [String: String], ["dogfood": "xctest"])
        if !cassette.isNew, let before {
            XCTAssertEqual(try HTTPBin.requests(since: before).filter { $0.contains("dogfood=xctest") }, [])
        }
    }

    func test_synchronous_request() throws {
        XCTAssertEqual(cassetteName, "test_synchronous_request", "test names are kept as written")
        let done = expectation(description: "response")
        let url = DogfoodServer.url("/anything/xctest-sync?dogfood=sync")
        let task = URLSession.shared.dataTask(with: url) { data, response, error in
            XCTAssertNil(error)
            XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
            XCTAssertEqual(data?.json?["url"] as? String != nil, true)
            done.fulfill()
        }
        task.resume()
        wait(for: [done], timeout: 30)
    }

    func testStubbedRunsWithoutACassette() {
        XCTAssertNil(cassette)
        XCTAssertNil(VCRActiveCassette.current)
        XCTAssertEqual(testMethodName, "testStubbedRunsWithoutACassette")
        XCTAssertEqual(testFilter, "VCRTestCaseDogfoodTests/testStubbedRunsWithoutACassette")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cassettePath))
    }
}
