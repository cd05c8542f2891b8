import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// What `vcr serve` does with one request: turn it into the request the cassette knows, ask the any-client door,
/// forward to the upstream when the door records.
struct ServeHandler: Sendable {
    var upstream: URL?
    /// Sends what is recorded: the client's own fields and no others, redirects handed back to the client.
    let forwarder = UpstreamForwarder()

    /// ``answer(_:)``, waited for on the connection's thread. Fine here: this process blocks only its main thread, so
    /// the cooperative pool is free to run the answer.
    func answerWaiting(_ wire: WireRequest) -> WireResponse {
        let result = Locked<WireResponse?>(nil, level: .leaf)
        let done = DispatchSemaphore(value: 0)
        Task {
            let response = await answer(wire)
            result.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .text(500, "HTTPVCR: no answer")
    }

    func answer(_ wire: WireRequest) async -> WireResponse {
        guard let request = urlRequest(for: wire) else {
            return .text(400, "HTTPVCR: the request target '\(wire.target)' is not a path", error: "bad-target")
        }
        do {
            let (body, response) = try await VCR.dataKeepingFields(for: request) { [upstream, forwarder] live in
                guard upstream != nil else { throw NoUpstream() }
                return try await forwarder.send(live)
            }
            let fields = response.headers.map { WireField($0.name, $0.value) }
            return WireResponse(status: response.statusCode, fields: fields, body: body)
        } catch let error as VCRError {
            let kind = error.code == .noMatch ? "no-match" : String(describing: error.code)
            return .text(500, error.message, error: kind)
        } catch {
            return .text(502, "HTTPVCR: the upstream did not answer: \(error.localizedDescription)", error: "upstream")
        }
    }

    /// The request as sent to the upstream (or the placeholder origin): its path and query on the upstream's
    /// scheme, host and port, the client's fields but the hop-by-hop ones and Host (URLSession sets the upstream's).
    func urlRequest(for wire: WireRequest) -> URLRequest? {
        var target = wire.target
        if !target.hasPrefix("/") {
            // Absolute form, as a proxy client sends it: keep its path and query.
            guard let url = URLComponents(string: target), url.scheme != nil else { return nil }
            target = (url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath)
                + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        guard let url = URL(string: origin + target) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = wire.method
        for field in wire.fields {
            let name = field.name.lowercased()
            if WireResponse.hopByHopFields.contains(name) || name == "host" { continue }
            request.addValue(field.value, forHTTPHeaderField: field.name)
        }
        if !wire.body.isEmpty { request.httpBody = wire.body }
        return request
    }

    var origin: String {
        guard let upstream, let scheme = upstream.scheme, let host = upstream.host else {
            return ServeCommand.placeholderOrigin
        }
        return "\(scheme)://\(host)" + (upstream.port.map { ":\($0)" } ?? "")
    }

    struct NoUpstream: LocalizedError {
        var errorDescription: String? { "no --upstream to forward to, so nothing can be recorded" }
    }
}
