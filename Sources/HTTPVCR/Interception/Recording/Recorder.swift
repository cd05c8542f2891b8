import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The forwarder: an inner URLSession does the real request, and its delegate callbacks become scenes as they
/// happen while the client gets the real response.
final class Recorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    static let shared = Recorder()

    /// Made once, thread-safely (a static `let`): two sessions would number their tasks independently, and a
    /// recording looked up by the other session's task would get the wrong body.
    private static let session: URLSession = {
        // Credentials are the app's to give (``Load``): this session is never to answer a challenge itself.
        let configuration = URLSessionConfiguration.verbatim
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "HTTPVCR.Recorder"
        return URLSession(configuration: configuration, delegate: shared, delegateQueue: queue)
    }()

    /// Keyed by the task object, which the entry keeps alive: its identity cannot be reused while it is here.
    private let recordings = Locked<[ObjectIdentifier: Entry]>([:], level: .recorder)

    private struct Entry {
        let task: URLSessionTask
        let recording: Recording
        /// The origins the task talks to (its request's, then each hop's), which the network guard lets pass.
        var origins: [NetworkOrigin]
        let startedAt = DispatchTime.now().uptimeNanoseconds
    }

    /// Sends the recording's request. Hops off the calling queue first: starting a task from inside
    /// `startLoading` deadlocks, as every session shares one work queue.
    func start(_ recording: Recording) {
        // Bridge: in a process connected to a test's bridge, the bridge is the network (BridgeConnection+Sending).
        if let bridge = BridgeConnection.current { return bridge.send(recording) }
        DispatchQueue.global().async { [self] in
            // Marked through NSMutableURLRequest (the only way to set a protocol property), but sent as a
            // URLRequest: corelibs ignores an NSMutableURLRequest's timeoutInterval.
            let marked = NSMutableURLRequest(url: recording.live.url ?? URL(string: "about:blank")!)
            URLProtocol.setProperty(true, forKey: VCRURLProtocol.passThroughKey, in: marked)
            var request = marked as URLRequest
            request.httpMethod = recording.live.httpMethod ?? "GET"
            request.allHTTPHeaderFields = recording.live.allHTTPHeaderFields
            request.httpBody = recording.live.httpBody
            request.timeoutInterval = recording.timeout
            request.cachePolicy = .reloadIgnoringLocalCacheData
            // The network guard's proxy knows it by its mark, and takes it off (https: by its origin, for a while).
            if NetworkGuard.isActive { request.setValue(NetworkGuard.markToken, forHTTPHeaderField: NetworkGuard.markField) }
            let task = Self.session.dataTask(with: request)
            let origins = NetworkGuard.recording(request.url, onlyTunnels: true).map { [$0] } ?? []
            recordings.withLock { $0[ObjectIdentifier(task)] = Entry(task: task, recording: recording, origins: origins) }
            recording.part?.whenStopped { [task] in
                // The client went away (a stream it cancelled): what it got so far is recorded now, ending in the
                // cancellation, before the client hears of it (corelibs stops the protocol first).
                recording.completed(error: URLError.cancelled(recording.live.url))
                // Cancelling waits on the session's queue, which stopLoading is running on: hop off it first.
                DispatchQueue.global().async { task.cancel() }
            }
            task.resume()
        }
    }

    private func recording(for task: URLSessionTask) -> Recording? {
        recordings.withLock { $0[ObjectIdentifier(task)]?.recording }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let recording = recording(for: task) else { return completionHandler(request) }
        // The hop's request as the app's session would send it: without the network guard's mark, which goes back
        // on the request this session sends.
        var proposed = request
        proposed.setValue(nil, forHTTPHeaderField: NetworkGuard.markField)
        recording.redirected(response, to: proposed) { [self] next in
            if let origin = NetworkGuard.recording(next?.url, onlyTunnels: true) {
                recordings.withLock { $0[ObjectIdentifier(task)]?.origins.append(origin) }
            }
            var marked = next
            if NetworkGuard.isActive { marked?.setValue(NetworkGuard.markToken, forHTTPHeaderField: NetworkGuard.markField) }
            completionHandler(marked)
        }
    }

    /// This session asks only when a load ends on a 401 that asks for credentials (it holds none, and its own
    /// delegate queue has told the whole 401 by then): the recording ends with it, and the app's session decides
    /// whether to send the request again with credentials (``Load``). Cancelling keeps corelibs from waiting for
    /// credentials forever (before 6.3.2, with none to offer, it does).
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard (challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401 else {
            return completionHandler(.performDefaultHandling, nil)
        }
        recording(for: task)?.completed(error: nil)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        recording(for: task)?.part?.send(.sentBody(bytesSent, total: totalBytesSent, expected: totalBytesExpectedToSend))
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse { recording(for: dataTask)?.received(response) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        recording(for: dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = recordings.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        entry.origins.forEach(NetworkGuard.finished)
        entry.recording.completed(
            error: error.map { NetworkGuard.asTheServerWouldFail($0, url: task.currentRequest?.url, since: entry.startedAt) }
        )
    }
}

/// Errors that say the server could not be reached at all, as opposed to what it did (a status, a slow answer)
/// or what the client did (a cancellation, its own timeout).
enum ConnectionError {
    static func isUnreachable(_ error: any Error) -> Bool {
        let error = error as NSError
        guard error.domain == NSURLErrorDomain else { return false }
        switch error.code {
        case NSURLErrorCannotFindHost, NSURLErrorCannotConnectToHost, NSURLErrorNetworkConnectionLost,
             NSURLErrorDNSLookupFailed, NSURLErrorNotConnectedToInternet, NSURLErrorSecureConnectionFailed,
             NSURLErrorInternationalRoamingOff, NSURLErrorDataNotAllowed:
            return true
        default:
            return false
        }
    }
}

extension VCRError {
    static func connectionErrorNotRecorded(_ request: URLRequest, error: any Error, cassettePath: String) -> VCRError {
        let error = error as NSError
        return VCRError(
            .connectionErrorNotRecorded,
            "\(Mismatch.describe(request)) could not reach the server while recording (\(error.domain) "
                + "\(error.code): \(error.localizedDescription)), so it was not written to \(cassettePath): the "
                + "cassette would replay that outage forever. Start the server and record again, or set "
                + "configuration.recordsConnectionErrors = true to record connection errors on purpose.",
            cassettePath: cassettePath,
            request: Mismatch.describe(request)
        )
    }
}

extension URLSessionConfiguration {
    /// For sessions that send exactly what they are given (the recorder's, the bridge's): no cache, no cookies, no
    /// credentials of their own.
    static var verbatim: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.httpMaximumConnectionsPerHost = 16
        return configuration
    }
}
