import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Sends a request a client made to the real server, for ``VCRBridge`` and `vcr serve` when they record: the client's
/// own fields and no others go out, and the answer comes back with every field the server sent that URLSession lets
/// through (two `Set-Cookie` stay two).
///
/// ```swift
/// let forwarder = UpstreamForwarder()
/// let (body, response) = try await forwarder.send(request)
/// ```
///
/// Its session never follows a redirect (the 3xx is the answer, for the client to follow) and keeps no cookies,
/// cache or credentials. The completion form needs no thread of Swift's cooperative pool: a bridge in a test process
/// forwards while other tests may hold them all.
///
/// > Note: On Linux, corelibs and libcurl add `User-Agent`, `Accept`, `Accept-Encoding`, `Accept-Language`,
/// > `Connection` and, for a body, `Content-Type` to a request that lacks them; each one the request lacks is given a
/// > blank value, which libcurl does not send but which keeps its own from being added. Apple's loader adds its
/// > own too, and cannot be stopped: there the request goes as URLSession sends it.
package struct UpstreamForwarder: Sendable {
    private let session: URLSession

    /// A forwarder with a session of its own: ephemeral, no redirects followed.
    package init() {
        session = RedirectRefusal.session()
    }

    /// Sends `request` and calls `completion` once, on the session's delegate queue, with the decoded body and the
    /// response as ``UpstreamForwarder`` describes it, or the error.
    ///
    /// - Returns: The task under way: cancelling it ends `completion` with `URLError.cancelled`.
    @discardableResult
    package func send(
        _ request: URLRequest,
        completion: @escaping @Sendable (Result<(Data, RecordedResponse), any Error>) -> Void
    ) -> URLSessionTask {
        let prepared = Self.prepared(request)
        // An https request's fields travel encrypted: the network guard's proxy lets it through by its origin, while
        // this lasts (plain http carries the mark, see prepared(_:)).
        let origin = NetworkGuard.recording(prepared.url, onlyTunnels: true)
        let start = DispatchTime.now().uptimeNanoseconds
        let method = request.httpMethod ?? "GET"
        let task = session.dataTask(with: prepared) { data, response, error in
            NetworkGuard.finished(origin)
            if let error {
                return completion(.failure(NetworkGuard.asTheServerWouldFail(error, url: request.url, since: start)))
            }
            guard let http = response as? HTTPURLResponse else { return completion(.failure(URLError(.badServerResponse))) }
            let body = data ?? Data()
            let fields = Self.responseFields(
                http.allHeaderFields.compactMap { name, value in (name as? String).map { ($0, "\(value)") } },
                decodedBodyLength: Self.hasBody(method: method, status: http.statusCode) ? body.count : nil
            )
            let url = http.url?.absoluteString ?? request.url?.absoluteString ?? ""
            completion(.success((body, RecordedResponse(url: url, statusCode: http.statusCode, headers: fields))))
        }
        task.resume()
        return task
    }

    /// ``send(_:completion:)`` for async callers (`vcr serve`, the door's `sending` closure): cancelling the calling
    /// task cancels the request.
    package func send(_ request: URLRequest) async throws -> (Data, RecordedResponse) {
        let state = Locked<(task: URLSessionTask?, isCancelled: Bool)>((nil, false), level: .leaf)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = send(request) { continuation.resume(with: $0) }
                // Cancelled before the task was there to cancel: cancel it now.
                let cancelNow = state.withLock { state in
                    state.task = task
                    return state.isCancelled
                }
                if cancelNow { task.cancel() }
            }
        } onCancel: {
            let task = state.withLock { state in
                state.isCancelled = true
                return state.task
            }
            task?.cancel()
        }
    }

    /// The request as it goes out: passed by HTTPVCR's URL protocol and the network guard, and with blanks for the
    /// fields the loader would add.
    static func prepared(_ request: URLRequest) -> URLRequest {
        // Marked through NSMutableURLRequest (the only way to set a protocol property), so that HTTPVCR's protocol
        // leaves it to the network from any thread (the door's task-local mark reaches only its own task). Sent as a
        // URLRequest: corelibs ignores an NSMutableURLRequest's timeoutInterval.
        let marked = NSMutableURLRequest(url: request.url ?? URL(string: "about:blank")!)
        URLProtocol.setProperty(true, forKey: VCRURLProtocol.passThroughKey, in: marked)
        var prepared = marked as URLRequest
        prepared.httpMethod = request.httpMethod ?? "GET"
        prepared.allHTTPHeaderFields = request.allHTTPHeaderFields
        prepared.httpBody = request.httpBody
        prepared.timeoutInterval = request.timeoutInterval
        prepared.cachePolicy = .reloadIgnoringLocalCacheData
        #if canImport(FoundationNetworking)
        for name in addedByTheLoader(hasBody: request.httpBody?.isEmpty == false)
        where request.value(forHTTPHeaderField: name) == nil {
            // corelibs sends a blank value as `Name:  `, which libcurl leaves out, while its presence keeps
            // libcurl's own field of that name from being added (an empty value would be sent as an empty field).
            prepared.setValue(" ", forHTTPHeaderField: name)
        }
        #endif
        // The network guard's proxy knows HTTPVCR's plain http requests by this mark, and takes it off.
        if NetworkGuard.isActive, prepared.url?.scheme?.lowercased() == "http" {
            prepared.setValue(NetworkGuard.markToken, forHTTPHeaderField: NetworkGuard.markField)
        }
        return prepared
    }

    /// The fields corelibs (`User-Agent`, `Accept-Language`) and libcurl (the others) add to a request without them.
    /// `Connection` is a hop's own field, and HTTP/1.1 keeps the connection open without it.
    static func addedByTheLoader(hasBody: Bool) -> [String] {
        ["User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Connection"] + (hasBody ? ["Content-Type"] : [])
    }

    /// Whether a response to `method` with `status` has a body (RFC 9112 6.3): not to HEAD, not 1xx, 204 or 304.
    static func hasBody(method: String, status: Int) -> Bool {
        method.uppercased() != "HEAD" && !(100..<200).contains(status) && status != 204 && status != 304
    }
}
