import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR

/// An app's session delegate, as the tests of the session's decisions use it: it answers redirects and challenges
/// as told, and notes every call the loader makes, in order, as corelibs' own URLSession tests do.
final class AppDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What to answer at a redirect: the proposed request (follow), nil (refuse) or another request.
    var redirect: @Sendable (HTTPURLResponse, URLRequest) -> URLRequest? = { $1 }
    /// Whether redirects are answered at all (an app may never call the completion handler).
    var answersRedirects = true
    /// Called when the delegate is asked about a redirect.
    var onRedirect: (@Sendable () -> Void)?
    /// What to answer to a challenge; nil: the loader's default handling.
    var challenge: (@Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?))?

    private struct State {
        var calls: [String] = []
        var redirects: [(response: HTTPURLResponse, proposed: URLRequest)] = []
        var challenges: [URLAuthenticationChallenge] = []
        var responses: [URLResponse] = []
        var chunks: [Data] = []
        var sent: [Int64] = []
        var finished: [Int: (any Error)?] = [:]
        var waiting: [Int: CheckedContinuation<(any Error)?, Never>] = [:]
    }

    private let state = Locked(State())

    var calls: [String] { state.withLock { $0.calls } }
    var redirects: [(response: HTTPURLResponse, proposed: URLRequest)] { state.withLock { $0.redirects } }
    var challenges: [URLAuthenticationChallenge] { state.withLock { $0.challenges } }
    var responses: [URLResponse] { state.withLock { $0.responses } }
    var body: Data { state.withLock { $0.chunks.reduce(Data(), +) } }
    /// `totalBytesSent` of each `didSendBodyData`.
    var sent: [Int64] { state.withLock { $0.sent } }

    private func note(_ call: String) {
        state.withLock { $0.calls.append(call) }
    }

    /// Resumes `task` and waits for `didCompleteWithError`; returns its error.
    func run(_ task: URLSessionTask) async -> (any Error)? {
        await withCheckedContinuation { continuation in
            let finished: (any Error)?? = state.withLock { state in
                if let error = state.finished[task.taskIdentifier] { return .some(error) }
                state.waiting[task.taskIdentifier] = continuation
                return nil
            }
            if let finished { return continuation.resume(returning: finished) }
            task.resume()
        }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        note("willPerformHTTPRedirection")
        state.withLock { $0.redirects.append((response, request)) }
        onRedirect?()
        if answersRedirects { completionHandler(redirect(response, request)) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        note("didReceiveChallenge")
        state.withLock { $0.challenges.append(challenge) }
        let (disposition, credential) = self.challenge?(challenge) ?? (.performDefaultHandling, nil)
        completionHandler(disposition, credential)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        state.withLock { state in
            if state.calls.last != "didSendBodyData" { state.calls.append("didSendBodyData") }
            state.sent.append(totalBytesSent)
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        note("didReceiveResponse")
        state.withLock { $0.responses.append(response) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state.withLock { state in
            if state.calls.last != "didReceiveData" { state.calls.append("didReceiveData") }
            state.chunks.append(data)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        note("didComplete")
        let waiting = state.withLock { state in
            state.finished[task.taskIdentifier] = .some(error)
            return state.waiting.removeValue(forKey: task.taskIdentifier)
        }
        waiting?.resume(returning: error)
    }
}

/// A session with HTTPVCR installed, `delegate` as its delegate, and `configure` applied to its configuration.
func appSession(
    delegate: (any URLSessionDelegate)? = nil,
    _ configure: (URLSessionConfiguration) -> Void = { _ in }
) -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 30
    configure(configuration)
    VCR.install(in: configuration)
    return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
}
