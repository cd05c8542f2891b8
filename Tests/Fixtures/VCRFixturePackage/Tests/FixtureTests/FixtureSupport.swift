import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fixture's server: `HTTPBIN_URL` (a closed port when replaying), and the query value every request carries,
/// `FIXTURE_QUERY` (default `recorded`), which the failure scenario changes so that nothing matches.
enum Fixture {
    static let base = ProcessInfo.processInfo.environment["HTTPBIN_URL"] ?? "http://127.0.0.1:1"
    static let query = ProcessInfo.processInfo.environment["FIXTURE_QUERY"] ?? "recorded"
    /// Whether a server is there (the replaying runs point at port 1, where nothing listens).
    static var isLive: Bool { URL(string: base)?.port != 1 }

    static func url(_ path: String) -> URL {
        URL(string: "\(base)\(path)?fixture=\(query)")!
    }
}

/// A synchronous GET, for synchronous XCTest methods.
func synchronousGet(_ url: URL) -> (Data?, URLResponse?, (any Error)?) {
    final class Box: @unchecked Sendable { var result: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil) }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: url) { data, response, error in
        box.result = (data, response, error)
        done.signal()
    }.resume()
    done.wait()
    return box.result
}
