import Foundation
import HTTPVCRTesting
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The local httpbin that `scripts/test` starts for the tests (a copy of `Tests/HTTPVCRTests/Support/HTTPBin.swift`,
/// trimmed to what these tests use).
///
/// Without it every call throws, so a test that needs the server fails (it is never skipped) with a message that
/// says how to start it.
enum HTTPBin {
    struct Failure: Error, CustomStringConvertible, LocalizedError {
        var description: String
        var errorDescription: String? { description }
    }

    /// The server's base URL from `HTTPBIN_URL`, e.g. `http://127.0.0.1:40123`.
    static func baseURL() throws -> URL {
        let value = try environment("HTTPBIN_URL")
        guard let url = URL(string: value), url.host != nil else {
            throw Failure(description: "HTTPBIN_URL is not a URL: \(value)")
        }
        return url
    }

    /// How many requests the server has logged so far (lines in `HTTPBIN_ACCESS_LOG`).
    static func requestCount() throws -> Int {
        try logLines().count
    }

    /// The requests logged after the first `count`, as "METHOD TARGET", e.g. "GET /get?a=1".
    static func requests(since count: Int) throws -> [String] {
        try logLines().dropFirst(max(count, 0)).map { line in
            line.split(separator: " ", omittingEmptySubsequences: true).prefix(2).joined(separator: " ")
        }
    }

    static func environment(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw Failure(description:
                "\(name) is not set: run the tests with scripts/test, which starts a local httpbin")
        }
        return value
    }

    /// The complete lines of the access log (a line still being written is left out).
    private static func logLines() throws -> [Substring] {
        let path = try environment("HTTPBIN_ACCESS_LOG")
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Failure(description: "cannot read HTTPBIN_ACCESS_LOG at \(path): \(error)")
        }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines
    }
}

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

extension Data {
    var text: String { String(decoding: self, as: UTF8.self) }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: self)) as? [String: Any] }
}

/// The package root: the nearest folder above this file that holds Package.swift.
let packageRoot: URL = {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
        url.deleteLastPathComponent()
    }
    return url
}()

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
