import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's own session, as one of its tasks sees it under a cassette: what it adds to every request, who it asks
/// at a redirect or a challenge, on which queue, and who hears of the body and progress. HTTPVCR records through a
/// session of its own, so everything here is what that session would otherwise decide in the app's place.
///
/// swift-corelibs-foundation only: a protocol reaches its task's session there (``CorelibsPlatform``). Apple's
/// loader keeps the session to itself and asks its delegates itself; there ``session`` is nil, and the load goes
/// on as the recording session and the tape say.
final class AppSession: @unchecked Sendable {
    let task: URLSessionTask?
    let session: URLSession?
    let platform: any LoaderPlatform

    /// Read in `startLoading`, on the session's work queue.
    init(task: URLSessionTask?, platform: any LoaderPlatform) {
        self.task = task
        self.platform = platform
        self.session = task.flatMap(platform.session(of:))
    }

    /// Whether the session is known, and so makes the decisions of its own loader: the delegate's answers at
    /// redirects and challenges.
    var decides: Bool { session != nil }

    /// `request` with the session's `httpAdditionalHeaders` under its own fields (a field the request sets wins,
    /// whatever its case), as the loader sends it: what the server gets, and so what is matched and taped.
    func addingSessionHeaders(to request: URLRequest) -> URLRequest {
        guard let additional = session?.configuration.httpAdditionalHeaders, !additional.isEmpty else { return request }
        var fields = request.allHTTPHeaderFields ?? [:]
        let count = fields.count
        for (name, value) in additional {
            guard let name = name as? String, let value = value as? String,
                  request.value(forHTTPHeaderField: name) == nil
            else { continue }
            fields[name] = value
        }
        guard fields.count != count else { return request }
        // Set whole, which keeps each name as written (`setValue` would capitalize it).
        var request = request
        request.allHTTPHeaderFields = fields
        return request
    }

    /// How long the loader lets `request` wait: its own `timeoutInterval` once set, else the session's
    /// `timeoutIntervalForRequest`.
    func timeout(of request: URLRequest) -> TimeInterval {
        guard let configuration = session?.configuration,
              platform.timeoutIsSet(on: request) == false
        else { return request.timeoutInterval }
        return configuration.timeoutIntervalForRequest
    }

    /// The loader asks the task's delegate at a redirect and a challenge, else the session's (corelibs'
    /// `URLSessionTask.delegate`). nil where the session is not known.
    var decider: (any URLSessionTaskDelegate)? {
        guard decides else { return nil }
        return task?.delegate
    }

    /// Runs `body` on the session's delegate queue, after what the loader sent there before: delegates are called
    /// there, in the loader's order.
    func onDelegateQueue(_ body: @escaping @Sendable () -> Void) {
        guard let session else { return body() }
        session.delegateQueue.addOperation(body)
    }

    /// Who hears of the task's body and progress besides its client. Read in `startLoading`, on the work queue.
    func listener() -> TaskListener {
        guard let task, let session else { return .none }
        return platform.listener(of: task, in: session)
    }
}
