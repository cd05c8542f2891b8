import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The launched process's end of a bridge (``VCR/connectToBridge()``): the bridge is this process's network.
///
/// The URL protocol takes every request under a cassette inserted for that purpose, which replays nothing and keeps
/// nothing (``isBridgeCassette(_:)``): each request is "recorded", so the app's session runs it as it runs a
/// recording — its delegates asked at each hop, its cookies, its timeouts — and the recorder hands the live request
/// to ``send(_:)-(Recording)`` instead of sending it to the server: over the bridge, with ``BridgeClient``. What
/// comes back is what the server said, on the server's URL, or the error the test process had. The any-client door
/// sends over the bridge directly (``send(_:as:)``).
final class BridgeConnection: Sendable {
    /// The connected bridge, once ``VCR/connectToBridge()`` found one.
    private static let connected = Locked<BridgeConnection?>(nil, level: .leaf)

    /// The connected bridge, if any.
    static var current: BridgeConnection? { connected.withLock { $0 } }

    let base: URL
    let token: String
    /// The cassette that takes this process's requests for the bridge.
    let cassette: Cassette
    /// Kept-alive connections to the bridge.
    let client: BridgeClient

    private init(base: URL, token: String, cassette: Cassette) {
        self.base = base
        self.token = token
        self.cassette = cassette
        client = BridgeClient(port: UInt16(base.port ?? 80))
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
        let (kept, isNew) = connected.withLock { connected in
            if let earlier = connected { return (earlier, false) }
            connected = connection
            return (connection, true)
        }
        if isNew { kept.sayWhoThisIs() }
        return kept
    }

    /// Tells the bridge this process's pid, waiting (briefly) for it to hear: the test may call this process's
    /// server as soon as it listens, and that call must go to the server, not the cassette (``ServersUnderTest``).
    private func sayWhoThisIs() {
        let hello = "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(client.port)\r\n\(BridgeWire.tokenField): \(token)\r\n"
            + "\(BridgeWire.processField): \(getpid())\r\nContent-Length: 0\r\n\r\n"
        let heard = DispatchSemaphore(value: 0)
        client.exchange(Data(hello.utf8), isHead: false, timeout: 5) { _ in heard.signal() }
        _ = heard.wait(timeout: .now() + 5)
    }

    /// Whether `cassette` is a bridge's: what goes through it is forwarded, never taped.
    static func isBridgeCassette(_ cassette: Cassette?) -> Bool {
        guard let cassette, let current else { return false }
        return current.cassette === cassette
    }

    // MARK: The any-client door

    /// The door's request over the bridge, redirects followed as a client following them would (up to
    /// ``LoaderRules/redirectLimit`` hops): the final response with every field as the bridge sent it, in order.
    func send(_ request: URLRequest) async throws -> (Data, RecordedResponse) {
        var current = request
        var hops = 0
        while true {
            guard let url = current.url, let origin = BridgeWire.origin(of: url) else { throw URLError(.unsupportedURL) }
            let bytes = BridgeClient.serialize(current, origin: origin, token: token, port: client.port)
            let answer = try await client.exchange(bytes, isHead: current.httpMethod == "HEAD", timeout: current.timeoutInterval)
            if let error = Self.failure(in: answer, url: url) { throw error }
            guard let response = Self.response(of: answer, url: url) else { throw URLError(.badServerResponse) }
            if hops < LoaderRules.redirectLimit, let next = LoaderRules.redirect(from: current, by: response) {
                current = next
                hops += 1
                continue
            }
            let fields = answer.fields.filter { !BridgeWire.isOwnField($0.name) }
                .map { RecordedHeader($0.name, $0.value) }
            return (answer.body, RecordedResponse(url: response.url?.absoluteString ?? url.absoluteString,
                                                  statusCode: answer.status, headers: fields))
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
