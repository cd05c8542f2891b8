import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The calls a loader makes on an app's URLSession delegates, spelled once for both loaders: swift-corelibs-foundation
/// gives every requirement a default implementation, Apple's declares them `@objc optional` (a delegate that does
/// not implement one gets what the loader does without it).
enum DelegateCalls {
    /// Asks `delegate` what to do at a redirect; `answer` gets the request to follow with, or nil to stop there.
    static func willPerformRedirection(
        _ delegate: any URLSessionTaskDelegate,
        session: URLSession,
        task: URLSessionTask,
        response: HTTPURLResponse,
        proposed: URLRequest,
        answer: @escaping @Sendable (URLRequest?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: proposed) { answer($0) }
        #else
        let asked: Void? = delegate.urlSession?(
            session, task: task, willPerformHTTPRedirection: response, newRequest: proposed
        ) { answer($0) }
        if asked == nil { answer(proposed) }
        #endif
    }

    /// Asks `delegate` for credentials; `answer` gets its disposition and credential.
    static func didReceive(
        _ challenge: URLAuthenticationChallenge,
        delegate: any URLSessionTaskDelegate,
        session: URLSession,
        task: URLSessionTask,
        answer: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, task: task, didReceive: challenge) { answer($0, $1) }
        #else
        let asked: Void? = delegate.urlSession?(session, task: task, didReceive: challenge) { answer($0, $1) }
        if asked == nil { answer(.performDefaultHandling, nil) }
        #endif
    }

    static func didReceive(
        _ data: Data, delegate: any URLSessionDataDelegate, session: URLSession, task: URLSessionDataTask
    ) {
        #if canImport(FoundationNetworking)
        delegate.urlSession(session, dataTask: task, didReceive: data)
        #else
        delegate.urlSession?(session, dataTask: task, didReceive: data)
        #endif
    }

    static func didSendBodyData(
        _ bytes: Int64,
        total: Int64,
        expected: Int64,
        delegate: any URLSessionTaskDelegate,
        session: URLSession,
        task: URLSessionTask
    ) {
        #if canImport(FoundationNetworking)
        delegate.urlSession(
            session, task: task, didSendBodyData: bytes, totalBytesSent: total, totalBytesExpectedToSend: expected
        )
        #else
        delegate.urlSession?(
            session, task: task, didSendBodyData: bytes, totalBytesSent: total, totalBytesExpectedToSend: expected
        )
        #endif
    }

    static func didWriteData(
        _ bytes: Int64,
        total: Int64,
        expected: Int64,
        delegate: any URLSessionDownloadDelegate,
        session: URLSession,
        task: URLSessionDownloadTask
    ) {
        #if canImport(FoundationNetworking)
        delegate.urlSession(
            session, downloadTask: task, didWriteData: bytes, totalBytesWritten: total,
            totalBytesExpectedToWrite: expected
        )
        #else
        delegate.urlSession?(
            session, downloadTask: task, didWriteData: bytes, totalBytesWritten: total,
            totalBytesExpectedToWrite: expected
        )
        #endif
    }
}
