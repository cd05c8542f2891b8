#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing
@testable import HTTPVCR

/// `CorelibsPlatform`'s readers against the swift-corelibs-foundation this suite runs on: every internal is found,
/// and what each reader gives is what the task was made with. What a load reads of its task (`startLoad(of:)`) is
/// read where HTTPVCR reads it, in a URL protocol's `startLoading`, on the session's work queue (the registry is
/// kept there).
@Suite struct CorelibsInternalsTests {
    /// Answers at once, after noting the session and listener the platform reads for its task.
    final class Probe: URLProtocol {
        struct Seen: Sendable {
            var session: ObjectIdentifier
            var listener: String
            var delegate: ObjectIdentifier?
            var route: String
            /// `_callCompletionHandlerInline` before and after `startLoad(of:)`.
            var resumesInline: (before: Bool?, after: Bool?)
        }

        static let seen = Locked([String: Seen]())

        override class func canInit(with request: URLRequest) -> Bool { true }
        override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

        override func startLoading() {
            let platform = CorelibsPlatform()
            let inline = { (task: URLSessionTask) in
                CorelibsPlatform.internals.taskInlineCompletion?.value(in: task, as: Bool.self)
            }
            if let task, let url = request.url?.absoluteString {
                let before = inline(task)
                let surroundings = platform.startLoad(of: task)
                let (session, listener) = (surroundings.session, surroundings.listener)
                let name = switch listener {
                case .none: "none"
                case .sessionDelegate: "sessionDelegate"
                case .completionHandler(taskDelegate: nil): "completionHandler"
                case .completionHandler: "completionHandlerWithTaskDelegate"
                }
                let route = switch surroundings.route {
                case .whole: "whole"
                case .chunks: "chunks"
                case .wholeAndChunksToListener: "wholeAndChunksToListener"
                case .file: "file"
                }
                let seen = Seen(
                    session: session.map(ObjectIdentifier.init) ?? ObjectIdentifier(Probe.self),
                    listener: name,
                    delegate: listener.delegate.map { ObjectIdentifier($0) },
                    route: route,
                    resumesInline: (before, inline(task))
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
        // A session data delegate is told every chunk.
        #expect(seen.route == "chunks")
        #expect(seen.resumesInline.before == false && seen.resumesInline.after == false)
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
            // corelibs keeps only the last `didLoad` for a handler.
            #expect(seen.route == "whole")
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
            #expect(seen.route == "wholeAndChunksToListener")
            // `data(for:)` has corelibs resume its caller on the work queue; the load has it resume it off that
            // queue, as a handler is called (CallerTask: corelibs#5412).
            #expect(seen.resumesInline.before == true && seen.resumesInline.after == false)
            let plain = Self.url("async-plain")
            _ = try await session.data(for: URLRequest(url: plain))
            let plainSeen = try #require(Probe.seen.withLock { $0[plain.absoluteString] })
            #expect(plainSeen.listener == "completionHandler")
            #expect(plainSeen.route == "whole")
            #expect(plainSeen.resumesInline.before == true && plainSeen.resumesInline.after == false)
        }
    }
}
#endif
