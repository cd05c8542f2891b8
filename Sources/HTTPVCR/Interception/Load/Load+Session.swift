import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The app's own session, as the load's task sees it under a cassette: what it adds to every request, who it asks
/// at a redirect or a challenge, on which queue, and who hears of the body and progress. HTTPVCR records through a
/// session of its own, so everything here is what that session would otherwise decide in the app's place.
///
/// swift-corelibs-foundation only: a protocol reaches its task's session there (``CorelibsPlatform``). Apple's
/// loader keeps the session to itself and asks its delegates itself; there ``Load/session`` is nil, and the load
/// goes on as the recording session and the tape say.
extension Load {
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

    /// A request as the loader sends it, and whether its body is hidden from HTTPVCR.
    struct Sent {
        var request: URLRequest
        /// An upload task whose body the loader keeps to itself (Apple platforms): `request` has none, though the
        /// server would get one. Replayable where nothing needs the body (``HiddenBody``).
        var hidesBody = false
    }

    /// `request` as the loader sends it: with the session's additional headers (``addingSessionHeaders(to:)``) and
    /// its body in `httpBody`, wherever the platform put it. Fails only when an upload's file cannot be read; an
    /// upload whose body the platform hides is marked (``Sent/hidesBody``), for the caller to refuse only where the
    /// body is needed.
    func sending(_ request: URLRequest) throws(VCRError) -> Sent {
        var live = Sent(request: addingSessionHeaders(to: request))
        guard live.request.httpBody == nil else { return live }
        switch try body(of: request) {
        case let .shown(body)?: live.request.httpBody = body
        case .hidden?: live.hidesBody = true
        case nil: break
        }
        return live
    }

    private enum FoundBody {
        case shown(Data)
        /// An upload task's body the platform does not show (``LoaderPlatform/uploadBody(of:)`` is nil).
        case hidden
    }

    /// For a request without `httpBody` (``sending(_:)`` has read it): `httpBodyStream` (Apple platforms), or, for
    /// upload tasks on Linux where neither is set, the body the task itself holds (``LoaderPlatform/uploadBody(of:)``).
    private func body(of request: URLRequest) throws(VCRError) -> FoundBody? {
        if let stream = request.httpBodyStream { return .shown(readAll(stream)) }
        // The async upload API hands the protocol a plain URLSessionTask, so look at any task's body; but not
        // for GET and HEAD, which carry none: reflection is slow, and replaying GETs is the hot path.
        // Nearly always spelled `GET`: compared whole first, a tenth of the cost of comparing it ignoring case.
        let method = request.httpMethod ?? "GET"
        guard method != "GET", !method.equalsIgnoringASCIICase("GET"), !method.equalsIgnoringASCIICase("HEAD"), let task
        else {
            return nil
        }
        switch platform.uploadBody(of: task) {
        case let .data(data)?:
            return .shown(data)
        case let .file(url)?:
            do { return .shown(try Data(contentsOf: url)) } catch {
                throw VCRError(
                    .unsupportedRequest,
                    "Cannot read the upload body of \(Mismatch.describe(request)) from \(url.path): \(error.localizedDescription)",
                    request: Mismatch.describe(request)
                )
            }
        case let .stream(stream)?:
            return .shown(readAll(stream))
        case nil:
            return task is URLSessionUploadTask ? .hidden : nil
        }
    }

    private func readAll(_ stream: InputStream) -> Data {
        var data = Data()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            data.append(buffer, count: count)
        }
        return data
    }

    // MARK: Asking the app

    /// Runs `body` once what the client was told before has been told: delegate calls the client makes go to the
    /// delegate queue then, and a question to the delegate must come after them.
    private func afterToldSoFar(_ body: @escaping @Sendable () -> Void) {
        if isOnClientQueue { body() } else { onClientQueue(body) }
    }

    /// Asks the app's delegate what to do at a redirect, as the loader would; without one, follows it with the
    /// cookies the session stored for its URL.
    func askAboutRedirect(
        _ hop: HTTPURLResponse, proposed: URLRequest, _ answer: @escaping @Sendable (URLRequest?) -> Void
    ) {
        guard let decider, let session, let task else {
            return answer(addingCookies(to: proposed))
        }
        afterToldSoFar { [self] in
            onDelegateQueue {
                DelegateCalls.willPerformRedirection(
                    decider, session: session, task: task, response: hop, proposed: proposed, answer: answer
                )
            }
        }
    }

    /// Asks the app's delegate for credentials, as the loader does when a load ends on a 401 that asks for them
    /// (without a delegate: the credential the session's storage proposes), and goes on with its answer: a retry
    /// carrying the credential, the 401 as the outcome, or a cancellation.
    func askAboutChallenge(_ response: HTTPURLResponse, space: URLProtectionSpace) {
        let (failures, last) = withLock { ($0.challenges, $0.lastCredential) }
        let stored = LoaderRules.storedCredential(for: space, in: session?.configuration.urlCredentialStorage)
        // Tried already: the loader does not offer it again.
        let proposed = last?.credential == stored ? nil : stored
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: proposed,
            previousFailureCount: failures,
            failureResponse: response,
            error: nil,
            sender: DelegateAnsweredChallenge()
        )
        let decide: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void = { [self] disposition, credential in
            switch disposition {
            case .useCredential:
                retry(with: credential, for: space)
            case .performDefaultHandling:
                retry(with: proposed, for: space)
            default:
                // The loader cancels the task.
                finishPart(.fail(URLError.cancelled(response.url)))
            }
        }
        guard let decider, let session, let task else {
            return decide(.performDefaultHandling, nil)
        }
        afterToldSoFar { [self] in
            onDelegateQueue {
                DelegateCalls.didReceive(challenge, delegate: decider, session: session, task: task, answer: decide)
            }
        }
    }
}
