#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing
@testable import HTTPVCR

/// `CorelibsPlatform`'s readers against the swift-corelibs-foundation this suite runs on: every internal is found,
/// and what each reader gives is what the task was made with. The listener is read where HTTPVCR reads it, in a
/// URL protocol's `startLoading`, on the session's work queue (the registry is kept there).
@Suite struct CorelibsInternalsTests {
    /// Answers at once, after noting the session and listener the platform reads for its task.
    final class Probe: URLProtocol {
        struct Seen: Sendable {
            var session: ObjectIdentifier
            var listener: String
            var delegate: ObjectIdentifier?
        }

        static let seen = Locked([String: Seen]())

        override class func canInit(with request: URLRequest) -> Bool { true }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        override func startLoading() {
            let platform = CorelibsPlatform()
            if let task, let url = request.url?.absoluteString, let session = platform.session(of: task) {
                let listener = platform.listener(of: task, in: session)
                let name = switch listener {
                case .none: "none"
                case .sessionDelegate: "sessionDelegate"
                case .completionHandler(taskDelegate: nil): "completionHandler"
                case .completionHandler: "completionHandlerWithTaskDelegate"
                }
                let seen = Seen(
                    session: ObjectIdentifier(session),
                    listener: name,
                    delegate: listener.delegate.map { ObjectIdentifier($0) }
                )
                Self.seen.withLock { $0[url] = seen }
            }
            let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: Data("ok".utf8))
            client?.urlProtocolDidFinishLoading(self)
        }

        override func stopLoading() {}
    }

    final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        let done = DispatchSemaphore(value: 0)
        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            done.signal()
        }
    }

    static func session(delegate: Delegate? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [Probe.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    static func url(_ name: String) -> URL {
        URL(string: "http://corelibs-internals.invalid/\(name)-\(UUID().uuidString)")!
    }

    @Test func everyInternalIsFound() {
        #expect(CorelibsPlatform.internals.degraded.isEmpty, "\(CorelibsPlatform.internals.degraded)")
        #expect(CorelibsPlatform.internals.registryTable != nil)
        #expect(CorelibsPlatform.internals.taskState.map { $0.type == URLSessionTask.State.self } == true)
    }

    @Test func aTaskWithoutAHandlerIsHeardByTheSessionsDelegate() throws {
        let delegate = Delegate()
        let session = Self.session(delegate: delegate)
        defer { session.finishTasksAndInvalidate() }
        let url = Self.url("delegate")
        session.dataTask(with: url).resume()
        #expect(delegate.done.wait(timeout: .now() + 10) == .success)
        let seen = try #require(Probe.seen.withLock { $0[url.absoluteString] })
        #expect(seen.session == ObjectIdentifier(session))
        #expect(seen.listener == "sessionDelegate")
        #expect(seen.delegate == ObjectIdentifier(delegate))
    }

    @Test func aTaskWithAHandlerIsHeardByTheHandler() throws {
        // A session delegate too: the handler still takes the outcome, and the reader must not mistake it.
        let session = Self.session(delegate: Delegate())
        defer { session.finishTasksAndInvalidate() }
        for _ in 1...3 {  // the first read learns the entry's layout, the others read its bytes
            let url = Self.url("handler")
            let done = DispatchSemaphore(value: 0)
            session.dataTask(with: url) { _, _, _ in done.signal() }.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            let seen = try #require(Probe.seen.withLock { $0[url.absoluteString] })
            #expect(seen.session == ObjectIdentifier(session))
            #expect(seen.listener == "completionHandler")
            #expect(seen.delegate == nil)
        }
    }

    @Test func anAsyncCallsDelegateIsTheTasksListener() async throws {
        let session = Self.session()
        defer { session.finishTasksAndInvalidate() }
        for _ in 1...3 {
            let url = Self.url("async")
            let taskDelegate = Delegate()
            _ = try await session.data(for: URLRequest(url: url), delegate: taskDelegate)
            let seen = try #require(Probe.seen.withLock { $0[url.absoluteString] })
            #expect(seen.listener == "completionHandlerWithTaskDelegate")
            #expect(seen.delegate == ObjectIdentifier(taskDelegate))
            let plain = Self.url("async-plain")
            _ = try await session.data(for: URLRequest(url: plain))
            #expect(Probe.seen.withLock { $0[plain.absoluteString]?.listener } == "completionHandler")
        }
    }
}
#endif
