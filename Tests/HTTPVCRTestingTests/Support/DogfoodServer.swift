import Foundation
import HTTPBinTestSupport
import HTTPVCRTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLs for the tests that use cassettes in this target.
///
/// They go to `localhost` (httpbin's port, from `HTTPBIN_URL`), and their cassettes intercept only `localhost`
/// (``DogfoodServer/configure(_:)``): the core tests in the same process talk to `127.0.0.1`, so a cassette of
/// these tests never records or refuses their traffic. Without `HTTPBIN_URL` (replaying with no server) the
/// port is 1, where nothing listens; the cassettes match on method, path and query only, so any port replays.
enum DogfoodServer {
    static func url(_ pathAndQuery: String) -> URL {
        let port = (try? HTTPBin.baseURL())?.port ?? 1
        let tail = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: "http://localhost:\(port)\(tail)")!
    }

    /// Whether a live server is there to record against.
    static var isRunning: Bool { (try? HTTPBin.baseURL()) != nil }

    /// The cassette settings every cassette of this target uses.
    @Sendable static func configure(_ configuration: inout VCRConfiguration) {
        configuration.hostFilter = ["localhost"]
        configuration.matchers = [.method, .path, .query]
    }

    /// A session of its own for each call: an ephemeral configuration with HTTPVCR installed.
    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        VCR.install(in: configuration)
        return URLSession(configuration: configuration)
    }
}

/// A fresh folder, removed when the value goes away.
final class TemporaryFolder: @unchecked Sendable {
    let url: URL

    init(_ prefix: String = "HTTPVCRTestingTests") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.path }
}
