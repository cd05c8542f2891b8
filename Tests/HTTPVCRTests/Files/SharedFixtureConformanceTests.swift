import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

/// Cassettes other tools wrote themselves, where a folder of them is at hand: each reads and replays.
///
/// The project's own tests use the fixtures in `Tests/Fixtures`; this is an extra check against real files that a
/// clone may not have. `scripts/with-httpbin` sets `HTTPVCR_SHARED_FIXTURES` when `../shared/fixtures` is beside
/// the package.
enum SharedFixtures {
    static let folder: URL? = {
        guard let path = ProcessInfo.processInfo.environment["HTTPVCR_SHARED_FIXTURES"], !path.isEmpty else {
            return nil
        }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath()  // the enumerator does not follow a link
    }()

    /// Every cassette file under `folder`, relative to it: `.json`, `.plist` and `.har`, at any depth.
    static let files: [String] = {
        guard let folder, let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        let extensions: Set<String> = ["json", "plist", "har"]
        return walker.compactMap { $0 as? String }
            .filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted()
    }()
}

extension VCRTests {
    @Suite(.enabled(
        if: SharedFixtures.folder != nil,
        "HTTPVCR_SHARED_FIXTURES names a folder of other tools' cassettes; a clone without one has Tests/Fixtures"
    ))
    struct SharedFixtureConformanceTests {
        @Test func theFolderHoldsCassettes() throws {
            let folder = try #require(SharedFixtures.folder)
            #expect(!SharedFixtures.files.isEmpty, "no .json, .plist or .har files under \(folder.path)")
        }

        @Test(arguments: SharedFixtures.files)
        func readsAndReplaysItsFirstRequest(_ name: String) async throws {
            let url = try #require(SharedFixtures.folder).appendingPathComponent(name)
            let (tape, format) = try CassetteFile.read(at: url)
            #expect(format.isForeign, "\(name) reads as HTTPVCR's own \(format.rawValue)")
            let first = try #require(tape.interactions.first, "\(name) holds no interaction")

            var request = URLRequest(url: try #require(URL(string: first.request.url), "\(first.request.url)"))
            request.httpMethod = first.request.method
            request.httpBody = first.request.body
            for header in first.request.headers { request.setValue(header.value, forHTTPHeaderField: header.name) }
            let replay: (inout VCRConfiguration) -> Void = {
                $0.recordMode = .never  // offline: never the network
                $0.playbackMode = .momentary  // the first chapter need not wait for others on the tape
            }
            let session = vcrSession(timeout: 5)
            try await withCassette(url.path, in: "/", replay) { cassette in
                #expect(cassette.format == format)
                if let recorded = first.error {
                    let error = await #expect(throws: URLError.self, "\(name)") { try await session.data(for: request) }
                    if recorded.domain == NSURLErrorDomain { #expect(error?.errorCode == recorded.code, "\(name)") }
                    return
                }
                let (data, response) = try await session.data(for: request)
                let status = try #require(first.response?.statusCode)
                // A 3xx first is followed from the tape: what ends it is another chapter's.
                guard !(300..<400).contains(status) else { return }
                #expect((response as? HTTPURLResponse)?.statusCode == status, "\(name)")
                #expect(data == first.body, "\(name)")
            }
        }
    }
}
