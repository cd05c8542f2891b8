import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A transport that answers every operation itself, with repeated header fields, as a transport that keeps them
/// (AsyncHTTPClient's) hands a server's answer over. No network: the tests that use it run offline.
final class RepeatedFieldsTransport: ClientTransport, @unchecked Sendable {
    /// What it answers, in this order.
    static let fields: [(String, String)] = [
        ("X-Multi", "one"), ("Set-Cookie", "session=transport-one; Path=/"), ("Content-Type", "text/plain"),
        ("X-Multi", "two"), ("Set-Cookie", "theme=transport-two"),
    ]
    static let body = "ok"

    private let lock = NSLock()
    private var sent = 0

    /// How many operations it answered.
    var calls: Int { lock.withLock { sent } }

    func send(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        lock.withLock { sent += 1 }
        var fields = HTTPFields()
        for (name, value) in Self.fields { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return (HTTPResponse(status: .ok, headerFields: fields), HTTPBody(Self.body))
    }
}
