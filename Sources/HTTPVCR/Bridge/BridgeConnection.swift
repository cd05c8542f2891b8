import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The launched process's end of a bridge (``VCR/connectToBridge()``): the bridge is this process's network.
///
/// The URL protocol takes every request under a cassette inserted for that purpose, which replays nothing and keeps
/// nothing (``isBridgeCassette(_:)``): each request is "recorded", so the app's session runs it as it runs a
/// recording — its delegates asked at each hop, its cookies, its chunks — and the recorder's live request goes to
/// the bridge instead of the server (``outbound(_:)``). What comes back is turned into what the server would have
/// said (``inbound(_:)``), or into the error the test process had (``failure(in:)``). The any-client door sends
/// over the bridge directly (``send(_:)``).
final class BridgeConnection: Sendable {
    /// The connected bridge, once ``VCR/connectToBridge()`` found one.
    private static let connected = Locked<BridgeConnection?>(nil)

    /// The connected bridge, if any.
    static var current: BridgeConnection? { connected.withLock { $0 } }

    let base: URL
    let token: String
    /// The cassette that takes this process's requests for the bridge.
    let cassette: Cassette
    /// The door's sender: follows nothing itself (``send(_:)`` follows).
    private let session = RedirectRefusal.session()

    private init(base: URL, token: String, cassette: Cassette) {
        self.base = base
        self.token = token
        self.cassette = cassette
    }

    /// Connects to the bridge `environment` names, once per process. Returns the connection, or nil when the
    /// environment names none (or its URL is not a loopback one); a cassette that cannot be inserted throws.
    static func connect(environment: (String) -> String?) throws(VCRError) -> BridgeConnection? {
        guard let text = environment(BridgeWire.urlVariable), let token = environment(BridgeWire.tokenVariable),
              !token.isEmpty, let base = URL(string: text), base.scheme == "http",
              ["127.0.0.1", "localhost"].contains(base.host ?? ""), base.path.isEmpty || base.path == "/"
        else { return nil }
        if let current { return current }
        let cassette = try VCR.insertCassette { configuration in
            // Never read nor written: `.all` erases nothing that exists and records (here: forwards) everything.
            configuration.cassettePath = NSTemporaryDirectory() + "HTTPVCR-bridge-\(getpid())-\(token.prefix(8)).json"
            configuration.recordMode = .all
            configuration.playbackMode = .momentary
            configuration.checksSecretsOnSave = false
        }
        let connection = BridgeConnection(base: base, token: token, cassette: cassette)
        return connected.withLock { connected in
            if let earlier = connected { return earlier }
            connected = connection
            return connection
        }
    }

    /// Whether `cassette` is a bridge's: what goes through it is forwarded, never taped.
    static func isBridgeCassette(_ cassette: Cassette?) -> Bool {
        guard let cassette, let current else { return false }
        return current.cassette === cassette
    }

    // MARK: The recorder's hooks

    /// `request` as sent over the bridge: to the bridge's address, with the token and the origin it was meant for.
    /// Unchanged when no bridge is connected, or when it is for the bridge already.
    static func outbound(_ request: URLRequest) -> URLRequest {
        guard let current, let url = request.url, url.host != current.base.host || url.port != current.base.port,
              let origin = BridgeWire.origin(of: url),
              let routed = URL(string: current.base.absoluteString.trimmingSuffix("/") + BridgeWire.target(of: url))
        else { return request }
        var bridged = request
        bridged.url = routed
        bridged.setValue(current.token, forHTTPHeaderField: BridgeWire.tokenField)
        bridged.setValue(origin, forHTTPHeaderField: BridgeWire.originField)
        return bridged
    }

    /// A bridge's answer as the server gave it: its real URL, without the bridge's fields. Unchanged when it is no
    /// bridge's answer.
    static func inbound(_ response: HTTPURLResponse) -> HTTPURLResponse {
        guard current != nil, let real = field(BridgeWire.urlField, of: response).flatMap(URL.init(string:)) else {
            return response
        }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, !BridgeWire.ownFields.contains(name.lowercased()) else { continue }
            fields[name] = "\(value)"
        }
        return HTTPURLResponse(url: real, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
            ?? response
    }

    /// At a hop the bridge answered: the hop as the server gave it, and the request the loader proposes next on the
    /// real URLs (a relative `Location` resolved against the real URL, not the bridge's).
    static func inbound(hop: HTTPURLResponse, proposed: URLRequest) -> (HTTPURLResponse, URLRequest) {
        let real = inbound(hop)
        guard real !== hop, let base = real.url,
              let location = field("Location", of: real), let target = URL(string: location, relativeTo: base)
        else { return (real, proposed) }
        var next = proposed
        next.url = target.absoluteURL
        next.setValue(nil, forHTTPHeaderField: BridgeWire.tokenField)
        next.setValue(nil, forHTTPHeaderField: BridgeWire.originField)
        return (real, next)
    }

    /// The error a bridge's answer stands for (a request the test's cassette refused, a recorded transport error),
    /// or nil for an answer to hand over. The body of such an answer is the message: it arrives with the response,
    /// before any data.
    static func failure(in response: HTTPURLResponse, body: Data = Data()) -> (any Error)? {
        guard current != nil, field(BridgeWire.errorField, of: response) != nil else { return nil }
        let real = field(BridgeWire.urlField, of: response).flatMap(URL.init(string:))
        return BridgeWire.error(
            in: response.statusCode, fields: { field($0, of: response) }, body: body, url: real ?? response.url
        )
    }

    private static func field(_ name: String, of response: HTTPURLResponse) -> String? {
        for (key, value) in response.allHeaderFields {
            if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame { return "\(value)" }
        }
        return nil
    }

    // MARK: The any-client door

    /// The door's request over the bridge, redirects followed as a client following them would (up to
    /// ``LoaderRules/redirectLimit`` hops): the final response with every field as the bridge sent it, in order.
    func send(_ request: URLRequest) async throws -> (Data, RecordedResponse) {
        var current = request
        var hops = 0
        while true {
            let (data, response) = try await session.data(for: Self.outbound(current))
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            if let error = Self.failure(in: http, body: data) { throw error }
            let real = Self.inbound(http)
            if hops < LoaderRules.redirectLimit, let next = LoaderRules.redirect(from: current, by: real) {
                current = next
                hops += 1
                continue
            }
            let fields = real.allHeaderFields.compactMap { name, value in
                (name as? String).map { RecordedHeader($0, "\(value)") }
            }.sorted { $0.name.lowercased() < $1.name.lowercased() }
            let url = real.url?.absoluteString ?? request.url?.absoluteString ?? ""
            return (data, RecordedResponse(url: url, statusCode: real.statusCode, headers: fields))
        }
    }

    /// ``send(_:)`` in a door's form: what the bridge answered, as that form hands back a recorded response.
    func send<Response: Sendable>(_ request: URLRequest, as form: DoorForm<Response>) async throws -> (Data, Response) {
        let (data, recorded) = try await send(request)
        let fallback = request.url ?? base
        return (data, try form.replaying(recorded, fallback).get())
    }

    /// The streaming door over the bridge: the whole answer, then its body as one chunk.
    func stream<Response: Sendable>(
        _ request: URLRequest, as form: DoorForm<Response>
    ) async throws -> (Response, AsyncThrowingStream<Data, any Error>) {
        let (data, response) = try await send(request, as: form)
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            if !data.isEmpty { continuation.yield(data) }
            continuation.finish()
        }
        return (response, chunks)
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
