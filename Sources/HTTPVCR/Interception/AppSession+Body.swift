import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AppSession {
    /// `request` as the loader sends it: with the session's additional headers (``addingSessionHeaders(to:)``) and
    /// its body in `httpBody`, wherever the platform put it. Fails rather than send or record an upload without its
    /// body.
    func sending(_ request: URLRequest) -> Result<URLRequest, VCRError> {
        var live = addingSessionHeaders(to: request)
        guard live.httpBody == nil else { return .success(live) }
        switch body(of: request) {
        case let .success(body):
            // Set only when there is one: setting nil copies the request all the same.
            if let body { live.httpBody = body }
            return .success(live)
        case let .failure(error):
            return .failure(error)
        }
    }

    /// `httpBody` (Linux), `httpBodyStream` (Apple platforms), or, for upload tasks on Linux where neither is
    /// set, the body the task itself holds (``LoaderPlatform/uploadBody(of:)``).
    private func body(of request: URLRequest) -> Result<Data?, VCRError> {
        if let body = request.httpBody { return .success(body) }
        if let stream = request.httpBodyStream { return .success(readAll(stream)) }
        // The async upload API hands the protocol a plain URLSessionTask, so look at any task's body; but not
        // for GET and HEAD, which carry none: reflection is slow, and replaying GETs is the hot path.
        let method = request.httpMethod ?? "GET"
        guard let task, !method.equalsIgnoringASCIICase("GET"), !method.equalsIgnoringASCIICase("HEAD") else {
            return .success(nil)
        }
        let isUpload = task is URLSessionUploadTask
        switch platform.uploadBody(of: task) {
        case let .data(data)?:
            return .success(data)
        case let .file(url)?:
            do { return .success(try Data(contentsOf: url)) } catch {
                return .failure(VCRError(
                    .unsupportedRequest,
                    "Cannot read the upload body of \(Mismatch.describe(request)) from \(url.path): \(error.localizedDescription)",
                    request: Mismatch.describe(request)
                ))
            }
        case let .stream(stream)?:
            return .success(readAll(stream))
        case nil:
            guard isUpload else { return .success(nil) }
            return .failure(VCRError(
                .unsupportedRequest,
                "HTTPVCR cannot see the body of the upload task \(Mismatch.describe(request)) on this platform, "
                    + "so it neither sends nor records it. Set the body on the request (request.httpBody) and use "
                    + "data(for:) instead of upload(for:from:).",
                request: Mismatch.describe(request)
            ))
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
