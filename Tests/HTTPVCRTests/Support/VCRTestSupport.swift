import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Every test that inserts a cassette is nested in this suite: the VCR and its URLProtocol are global, so these
/// tests run one at a time while the rest of the test suite runs in parallel.
@Suite(.serialized) struct VCRTests {}

/// A fresh folder for one test's cassettes, removed afterwards.
struct TemporaryFolder: ~Copyable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("HTTPVCRTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.path }
}

/// Runs `body` with a cassette inserted (shared defaults reset, `cassettesPath` set), and always ejects it.
///
/// Holds ``VCRCassetteLock/shared`` throughout, as the testing integrations do, so that these tests never see
/// the cassettes of HTTPVCRTesting's tests running in parallel in the same process.
func withCassette<T>(
    _ name: String,
    in folder: String,
    _ configure: (inout VCRConfiguration) -> Void = { _ in },
    _ body: (Cassette) async throws -> T
) async throws -> T {
    tellsTestsApart
    if CassetteLockScope.isHeld { return try await withCassetteHeld(name, in: folder, configure, body) }
    return try await VCRCassetteLock.shared.withLock {
        try await withCassetteHeld(name, in: folder, configure, body)
    }
}

/// Holds the cassette lock across several cassettes, so that what the server saw between them is this test's
/// doing alone (the testing integrations' tests record in parallel in this same process).
func holdingCassettes<T>(_ body: () async throws -> T) async throws -> T {
    tellsTestsApart
    return try await VCRCassetteLock.shared.withLock {
        try await CassetteLockScope.$isHeld.withValue(true) { try await body() }
    }
}

/// As HTTPVCRTesting does: a cassette these tests insert for the process is their test's, and never takes the
/// requests of HTTPVCRTesting's tests running beside them without a cassette.
let tellsTestsApart: Void = { VCR.currentTest = { Test.current.map { String(describing: $0.id) } } }()

enum CassetteLockScope {
    @TaskLocal static var isHeld = false
}

private func withCassetteHeld<T>(
    _ name: String,
    in folder: String,
    _ configure: (inout VCRConfiguration) -> Void,
    _ body: (Cassette) async throws -> T
) async throws -> T {
    _ = VCR.takeFailures()
    let cassette = try VCR.insertCassette { configuration in
        configuration = VCRConfiguration()
        configuration.cassettesPath = folder
        configuration.cassettePath = name
        configure(&configuration)
    }
    do {
        let result = try await body(cassette)
        try VCR.ejectCassette()
        return result
    } catch {
        try? VCR.ejectCassette()
        throw error
    }
}

/// A session that goes through HTTPVCR, made from an ephemeral configuration.
func vcrSession(timeout: TimeInterval = 30) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = timeout
    VCR.install(in: configuration)
    return URLSession(configuration: configuration)
}

/// The status of each request, sent one after the other through `session` (0 for an answer that is no HTTP one).
func statuses(of requests: [URLRequest], through session: URLSession) async throws -> [Int] {
    var statuses: [Int] = []
    for request in requests {
        let (_, response) = try await session.data(for: request)
        statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
    }
    return statuses
}

/// Replays the cassette `name` of `folder` offline (`.never`, after `configure`) with `run`, expecting every
/// interaction played and none of the tape's requests or hops to reach httpbin. Returns what `run` gave.
func replayOffline<T>(
    _ name: String,
    in folder: URL,
    _ configure: (inout VCRConfiguration) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation,
    _ run: () async throws -> T
) async throws -> T {
    let before = try HTTPBin.settledRequestCount()
    let replayed = try await withCassette(name, in: folder.path, {
        configure(&$0)
        $0.recordMode = .never
    }) { cassette in
        let replayed = try await run()
        #expect(cassette.allPlayed, sourceLocation: sourceLocation)
        return replayed
    }
    let tape = try CassetteFile.read(at: folder.appendingPathComponent(name + ".json")).tape
    #expect(try HTTPBin.requests(since: before, to: HTTPBin.targets(of: tape)).isEmpty, sourceLocation: sourceLocation)
    return replayed
}

/// How a test sees which request finished first: what HTTPVCR guarantees is the order the session is told,
/// and so the order one session runs completion handlers and delegate callbacks in. (Code awaiting
/// `data(from:)` in separate tasks resumes in whatever order Swift's scheduler picks, as with a server.)
enum CompletionObserver: String, CaseIterable, CustomTestStringConvertible {
    case completionHandlers, delegate
    var testDescription: String { rawValue }
}

/// Requests `urls` together (`spacing` apart) and returns their bodies in the order the session reported them
/// finished.
func completionOrder(
    _ urls: [URL],
    observedBy observer: CompletionObserver,
    spacing: TimeInterval = 0
) async -> [String] {
    let finished = Locked<[String]>([])
    let configuration = URLSessionConfiguration.ephemeral
    VCR.install(in: configuration)
    let delegate = FinishLog(finished)
    let session = observer == .delegate
        ? URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        : URLSession(configuration: configuration)
    defer { session.finishTasksAndInvalidate() }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for (index, url) in urls.enumerated() {
            group.enter()
            let task: URLSessionDataTask
            switch observer {
            case .completionHandlers:
                task = session.dataTask(with: url) { data, _, _ in
                    finished.withLock { $0.append(String(decoding: data ?? Data(), as: UTF8.self)) }
                    group.leave()
                }
            case .delegate:
                delegate.whenFinished(url) { group.leave() }
                task = session.dataTask(with: url)
            }
            if index == 0 || spacing == 0 {
                task.resume()
            } else {
                DispatchQueue.global().asyncAfter(deadline: .now() + spacing * Double(index)) { task.resume() }
            }
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
    return finished.withLock { $0 }
}

/// A session delegate that notes which request finished, in the order the session says so.
final class FinishLog: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let finished: Locked<[String]>
    private let waiting = Locked<[URL: () -> Void]>([:])
    private let bodies = Locked<[Int: Data]>([:])

    init(_ finished: Locked<[String]>) {
        self.finished = finished
    }

    func whenFinished(_ url: URL, _ action: @escaping () -> Void) {
        waiting.withLock { $0[url] = action }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bodies.withLock { $0[dataTask.taskIdentifier, default: Data()].append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let body = bodies.withLock { $0.removeValue(forKey: task.taskIdentifier) } ?? Data()
        finished.withLock { $0.append(String(decoding: body, as: UTF8.self)) }
        let action = task.originalRequest?.url.flatMap { url in waiting.withLock { $0.removeValue(forKey: url) } }
        action?()
    }
}

/// A cookie httpbin sets for a test (`/response-headers?Set-Cookie=…`), under a name of its own, and what
/// `HTTPCookieStorage.shared` holds of it. The shared storage outlives the test: call ``forget()`` when done.
struct SharedStorageCookie {
    let name: String
    let url: URL

    init(prefix: String) throws {
        name = "\(prefix)\(UUID().uuidString.prefix(8))"
        url = try HTTPBin.url("/response-headers?Set-Cookie=\(name)%3Dbaked")
    }

    func stored() throws -> [HTTPCookie] {
        (HTTPCookieStorage.shared.cookies(for: try HTTPBin.baseURL()) ?? []).filter { $0.name == name }
    }

    func forget() {
        for cookie in (try? stored()) ?? [] { HTTPCookieStorage.shared.deleteCookie(cookie) }
    }
}
