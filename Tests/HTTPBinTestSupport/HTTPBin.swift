import Foundation
import HTTPVCR
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The local httpbin that `scripts/test` starts for the tests (gunicorn on 127.0.0.1), shared by the test targets.
///
/// Without it every call throws, so a test that needs the server fails (it is never skipped)
/// with a message that says how to start it.
///
/// The access log is shared by all tests, and Swift Testing runs tests in parallel: a test that
/// asserts what the server saw should look only at requests carrying something unique to it
/// (a path such as `/anything/<uuid>` or a query item), e.g.
/// `try HTTPBin.requests(since: before).filter { $0.contains(id) }`.
public enum HTTPBin {
    public struct Failure: Error, CustomStringConvertible, LocalizedError {
        public var description: String
        public var errorDescription: String? { description }
    }

    /// The server's base URL from `HTTPBIN_URL`, e.g. `http://127.0.0.1:40123`.
    public static func baseURL() throws -> URL {
        let value = try environment("HTTPBIN_URL")
        guard let url = URL(string: value), url.host != nil else {
            throw Failure(description: "HTTPBIN_URL is not a URL: \(value)")
        }
        return url
    }

    /// The server's URL for a path with an optional query, e.g. `url("/get?a=1")`.
    public static func url(_ pathAndQuery: String) throws -> URL {
        let base = try baseURL().absoluteString
        let tail = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        let joined = (base.hasSuffix("/") ? String(base.dropLast()) : base) + tail
        guard let url = URL(string: joined) else {
            throw Failure(description: "not a valid httpbin URL: \(joined)")
        }
        return url
    }

    /// How many requests the server has logged so far (lines in `HTTPBIN_ACCESS_LOG`).
    ///
    /// gunicorn writes a request's line just *after* sending its response, so a client can see
    /// the response a moment before the line is there: use `waitForRequestCount` to count a
    /// request the test has just made.
    public static func requestCount() throws -> Int {
        try logLines().count
    }

    /// The requests this test process made after the first `count` logged, as "METHOD TARGET", e.g.
    /// "GET /get?a=1".
    ///
    /// Lines are `METHOD TARGET PROTOCOL STATUS "USER-AGENT"` (the format scripts/test sets). URLSession on Linux
    /// sends the process name as its user agent, so requests from other processes (the fixture package that
    /// HTTPVCRTestingTests runs with `swift test`) are left out.
    public static func requests(since count: Int) throws -> [String] {
        let process = "\"" + ProcessInfo.processInfo.processName + " "
        return try logLines().dropFirst(max(count, 0))
            .filter { !$0.contains("\"") || $0.contains(process) }
            .map(methodAndTarget)
    }

    /// The requests logged after the first `count` from any process, e.g. a fixture package run by a test.
    public static func requestsFromAnyProcess(since count: Int) throws -> [String] {
        try logLines().dropFirst(max(count, 0)).map(methodAndTarget)
    }

    private static func methodAndTarget(_ line: Substring) -> String {
        line.split(separator: " ", omittingEmptySubsequences: true).prefix(2).joined(separator: " ")
    }

    /// The requests since `count` to one of these paths: what a test asks the server must not have seen,
    /// without the lines other tests' slow requests write meanwhile (a timed out `/delay/2` is logged when the
    /// server finishes it, after the client gave up).
    public static func requests(since count: Int, to paths: [String]) throws -> [String] {
        try requests(since: count).filter { line in
            let target = line.split(separator: " ").dropFirst().first ?? ""
            return paths.contains(String(target.prefix { $0 != "?" }))
        }
    }

    /// The paths a tape's requests and redirect hops were sent to.
    public static func targets(of tape: Tape) -> [String] {
        tape.interactions.flatMap { [$0.request.url] + $0.redirects.map(\.request.url) }.compactMap { text in
            guard let url = URL(string: text) else { return nil }
            return url.path(percentEncoded: true)
        }
    }

    /// The request count once the log has stopped growing for 50 ms: requests answered just before still
    /// have their lines written after the answer, and must not be counted as what comes next.
    public static func settledRequestCount() throws -> Int {
        var count = try requestCount()
        var stableSince = Date()
        while Date().timeIntervalSince(stableSince) < 0.05 {
            Thread.sleep(forTimeInterval: 0.01)
            let now = try requestCount()
            if now != count {
                count = now
                stableSince = Date()
            }
        }
        return count
    }

    /// The request count once this process's requests to `paths` since `count` are all in the log (one line
    /// each, up to `timeout` seconds), and the log has settled. The server writes a line when it finishes a
    /// request, which can be long after the client had its answer or gave up: a recorded `/drip` or a timed-out
    /// `/delay` must not be logged inside the window of the replay that follows.
    public static func requestCount(onceLogged paths: [String], since count: Int, timeout: TimeInterval = 5) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while try requests(since: count, to: paths).count < paths.count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        return try settledRequestCount()
    }

    /// The requests since `count` whose target holds `text` (something unique to the test: from any process, so
    /// that a session sending a `User-Agent` of its own is counted), once at least `n` are logged (up to `timeout`
    /// seconds) and the log has settled: the server writes a request's line after answering it.
    public static func requests(
        containing text: String, since count: Int, atLeast n: Int, timeout: TimeInterval = 5
    ) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while try requestsFromAnyProcess(since: count).filter({ $0.contains(text) }).count < n, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
        _ = try settledRequestCount()
        return try requestsFromAnyProcess(since: count).filter { $0.contains(text) }
    }

    /// Waits up to `timeout` seconds for the log to hold at least `n` requests, and returns
    /// the count then (less than `n` if the timeout ran out, for the caller to check).
    @discardableResult
    public static func waitForRequestCount(atLeast n: Int, timeout: TimeInterval = 2) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let count = try requestCount()
            if count >= n || Date() >= deadline { return count }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// A loopback port nothing listens on (one the system handed out, closed again): requests to it are refused,
    /// as they are when a server is down.
    public static func closedPort() throws -> Int {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "cannot bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    // MARK: - Private

    private static func environment(_ name: String) throws -> String {
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
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last "\n": empty, or a partial line
        return lines
    }
}

extension Data {
    /// The bytes as UTF-8 text, for messages and comparisons.
    public var text: String { String(decoding: self, as: UTF8.self) }
    /// The bytes as a JSON object, if they are one.
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: self)) as? [String: Any] }
}

/// The package root: the nearest folder above this file that holds Package.swift.
public let packageRoot: URL = {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
        url.deleteLastPathComponent()
    }
    return url
}()
