import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

// MARK: The floor

/// A bare URLProtocol that answers every request with the same 512-byte body: what URLSession costs without
/// a VCR. It hands over what HTTPVCR hands over on replay: a response with the same headers, the body in one
/// `didLoad`, then the end.
final class FloorProtocol: URLProtocol {
    static let body = Fixtures.body(0)
    static let headers = Fixtures.responseHeaderFields

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let client, let url = request.url,
              let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: Self.headers)
        else { return }
        client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client.urlProtocol(self, didLoad: Self.body)
        client.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

// MARK: Sessions

enum SessionKind {
    /// ``FloorProtocol`` in front.
    case floor
    /// HTTPVCR in front (`VCR.install(in:)`).
    case vcr
    /// Nothing in front: the network.
    case direct
}

/// Every row's session, made the same way: an ephemeral configuration without a URL cache (so that the same
/// URL asked again in a later run is not served from a cache), and the row's protocol class in front.
func makeSession(_ kind: SessionKind) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    switch kind {
    case .floor:
        configuration.protocolClasses = [FloorProtocol.self] + (configuration.protocolClasses ?? [])
    case .vcr:
        VCR.install(in: configuration)
    case .direct:
        break
    }
    return URLSession(configuration: configuration)
}

// MARK: Cassettes

enum Fixtures {
    static let host = "bench.local"
    static let responseHeaderFields = ["Content-Type": "application/json", "Content-Length": "512"]
    static let requestHeaderFields = ["Accept": "application/json"]

    static func url(_ index: Int) -> URL {
        URL(string: "http://\(host)/item/\(index)")!
    }

    /// A 512-byte JSON body, different for every interaction.
    static func body(_ index: Int) -> Data {
        let head = "{\"id\":\(index),\"name\":\"item \(index)\",\"payload\":\""
        let tail = "\"}\n"
        // Data(repeating:), not String(repeating:), which appends one "x" at a time.
        var data = Data(head.utf8)
        data.append(Data(repeating: UInt8(ascii: "x"), count: 512 - head.utf8.count - tail.utf8.count))
        data.append(contentsOf: tail.utf8)
        precondition(data.count == 512)
        return data
    }

    /// A tape of `count` GET requests to distinct URLs, each answered with 200 and a 512-byte body
    /// (`body(firstBody + index)`).
    static func tape(count: Int, url: (Int) -> URL = url, firstBody: Int = 0) -> Tape {
        var interactions: [Interaction] = []
        interactions.reserveCapacity(count)
        for index in 0..<count {
            let url = url(index).absoluteString
            interactions.append(Interaction(
                chapter: index + 1,
                request: RecordedRequest(
                    method: "GET",
                    url: url,
                    headers: requestHeaderFields.map { RecordedHeader($0.key, $0.value) }
                ),
                response: RecordedResponse(
                    url: url,
                    statusCode: 200,
                    headers: responseHeaderFields.sorted { $0.key < $1.key }.map { RecordedHeader($0.key, $0.value) }
                ),
                chunks: [body(firstBody + index)]
            ))
        }
        return Tape(interactions: interactions)
    }

    static func cassetteName(_ count: Int) -> String { "bench-\(count)" }

    /// Writes the cassettes of every size into `directory` and returns their files by size.
    static func writeCassettes(sizes: [Int], in directory: URL) throws -> [Int: URL] {
        var files: [Int: URL] = [:]
        for size in sizes {
            let file = directory.appendingPathComponent(cassetteName(size) + ".json")
            try CassetteFile.write(tape(count: size), to: file, as: .json)
            files[size] = file
        }
        return files
    }

    static func request(_ url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        for (name, value) in requestHeaderFields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }
}

// MARK: Issuing requests

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Sends `requests` one after the other; returns the seconds it took. Every response must be a 200 with
/// `expectedBytes` bytes (any count when nil).
func runSequential(_ session: URLSession, _ requests: [URLRequest], expectedBytes: Int?) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for request in requests {
        try check(try await session.data(for: request), request, expectedBytes)
    }
    return seconds(since: start)
}

/// Sends `requests` one after the other with completion handlers, each started when the last one ended.
func runWithHandlers(_ session: URLSession, _ requests: [URLRequest], expectedBytes: Int?) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    for request in requests {
        let result: (Data, URLResponse) = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                guard let data, let response else {
                    return continuation.resume(throwing: error ?? BenchFailure("no response"))
                }
                continuation.resume(returning: (data, response))
            }.resume()
        }
        try check(result, request, expectedBytes)
    }
    return seconds(since: start)
}

/// Sends `requests` with `width` in flight at a time (a sliding window: one starts as soon as one ends), in
/// order; returns the seconds it took.
func runWindowed(_ session: URLSession, _ requests: [URLRequest], width: Int, expectedBytes: Int?) async throws -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        func startNext() {
            let request = requests[next]
            next += 1
            group.addTask { try check(try await session.data(for: request), request, expectedBytes) }
        }
        while next < min(width, requests.count) { startNext() }
        while try await group.next() != nil {
            if next < requests.count { startNext() }
        }
    }
    return seconds(since: start)
}

private func check(_ result: (Data, URLResponse), _ request: URLRequest, _ expectedBytes: Int?) throws {
    let (data, response) = result
    guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
        throw BenchFailure("\(request.url?.absoluteString ?? "?"): expected a 200, got \(response)")
    }
    if let expectedBytes, data.count != expectedBytes {
        throw BenchFailure("\(request.url?.absoluteString ?? "?"): expected \(expectedBytes) bytes, got \(data.count)")
    }
}

/// CPU time this process has used, every thread, in seconds.
func processCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func seconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs `body` and returns its result and the seconds it took.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (result, seconds(since: start))
}
