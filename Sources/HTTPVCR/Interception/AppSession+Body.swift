import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppSession {
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
    func sending(_ request: URLRequest) -> Result<Sent, VCRError> {
        var live = Sent(request: addingSessionHeaders(to: request))
        guard live.request.httpBody == nil else { return .success(live) }
        switch body(of: request) {
        case let .success(.some(body)):
            live.request.httpBody = body
        case .success(nil):
            break
        case .failure(.hidden):
            live.hidesBody = true
        case let .failure(.unreadable(error)):
            return .failure(error)
        }
        return .success(live)
    }

    private enum BodyFailure: Error {
        /// An upload task's body the platform does not show (``LoaderPlatform/uploadBody(of:)`` is nil).
        case hidden
        case unreadable(VCRError)
    }

    /// For a request without `httpBody` (``sending(_:)`` has read it): `httpBodyStream` (Apple platforms), or, for
    /// upload tasks on Linux where neither is set, the body the task itself holds (``LoaderPlatform/uploadBody(of:)``).
    private func body(of request: URLRequest) -> Result<Data?, BodyFailure> {
        if let stream = request.httpBodyStream { return .success(readAll(stream)) }
        // The async upload API hands the protocol a plain URLSessionTask, so look at any task's body; but not
        // for GET and HEAD, which carry none: reflection is slow, and replaying GETs is the hot path.
        // Nearly always spelled `GET`: compared whole first, a tenth of the cost of comparing it ignoring case.
        let method = request.httpMethod ?? "GET"
        guard method != "GET", !method.equalsIgnoringASCIICase("GET"), !method.equalsIgnoringASCIICase("HEAD"), let task
        else {
            return .success(nil)
        }
        switch platform.uploadBody(of: task) {
        case let .data(data)?:
            return .success(data)
        case let .file(url)?:
            do { return .success(try Data(contentsOf: url)) } catch {
                return .failure(.unreadable(VCRError(
                    .unsupportedRequest,
                    "Cannot read the upload body of \(Mismatch.describe(request)) from \(url.path): \(error.localizedDescription)",
                    request: Mismatch.describe(request)
                )))
            }
        case let .stream(stream)?:
            return .success(readAll(stream))
        case nil:
            return task is URLSessionUploadTask ? .failure(.hidden) : .success(nil)
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
}
