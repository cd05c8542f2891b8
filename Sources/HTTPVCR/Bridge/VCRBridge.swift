import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Carries the requests of a process your test launches (an app under XCUITest, a server binary) to the test's
/// cassette, over loopback HTTP.
///
/// Start it in the test, hand its ``environment`` to the process, and have that process call
/// ``VCR/connectToBridge()`` early. Every request the process makes through `URLSession.shared`, a session set up
/// with ``VCR/install(in:)`` or ``VCR/data(for:sending:)`` then reaches the cassette in force for the task that
/// started the bridge: the test's own under the `.cassette` trait or `VCRCassetteScope`, else the one inserted for
/// the process. It goes through that cassette's filters, matchers, record mode and playback order as a request made
/// in the test would, and its failures (an unmatched request) are reported on that test. Recording happens here,
/// in the test process, which sends the real request.
///
/// ```swift
/// @Test(.cassette) func serverAnswersFromItsUpstream() async throws {
///     let bridge = try VCRBridge.start()
///     defer { bridge.stop() }
///     let server = Process()
///     server.executableURL = serverExecutable
///     server.environment = ProcessInfo.processInfo.environment.merging(bridge.environment) { $1 }
///     try server.run()
///     …
/// }
/// ```
///
/// The bridge listens on 127.0.0.1 only, on a port the system picks, and answers only requests that carry its
/// token, a random 256-bit value made at ``start()`` and passed in ``environment``: others get 403 and never reach
/// the cassette. Each connection is served on a thread of its own, never on Swift's cooperative pool.
///
/// > Note: Redirects are not followed here: a 3xx is recorded and answered as it is, and the launched process's own
/// > session decides whether to follow it (asking its delegate), its next request crossing the bridge again. A
/// > redirect is therefore taped as two interactions.
public final class VCRBridge: Sendable {
    /// What the launched process needs to reach this bridge: set it on `Process.environment` or
    /// `XCUIApplication.launchEnvironment`. Holds the bridge's URL and its token.
    public let environment: [String: String]
    /// `http://127.0.0.1:PORT`, where the bridge listens.
    public let url: URL

    private let server: LoopbackServer

    /// Why ``VCRBridge/start()`` failed: no socket could be bound on 127.0.0.1.
    public struct StartError: Error, CustomStringConvertible {
        /// What the system said.
        public var description: String
    }

    private init(server: LoopbackServer, token: String) {
        self.server = server
        url = server.url
        // The launched process gets the proxy settings the test process had before HTTPVCR's network guard: the
        // bridge is its way to the cassette.
        environment = (NetworkGuard.isActive ? NetworkGuard.originalEnvironment : [:])
            .merging([BridgeWire.urlVariable: server.url.absoluteString, BridgeWire.tokenVariable: token]) { $1 }
    }

    /// Starts a bridge on 127.0.0.1, on a free port, for the cassette in force for the calling task.
    ///
    /// The cassette is looked up for each request: the one bound to the calling task (a `.cassette` test's own) if
    /// there is one, else the one inserted for the process when a request arrives (not one another test inserted).
    /// With neither, requests go to the network as if HTTPVCR were not there.
    ///
    /// - Throws: ``StartError`` when no port can be bound.
    public static func start() throws -> VCRBridge {
        let token = BridgeWire.makeToken()
        let target = BridgeTarget(bound: VCR.boundCassette, test: VCR.currentTest?())
        let exchange = BridgeExchange(token: token, target: target)
        do {
            let server = try LoopbackServer(handler: exchange.answerWaiting)
            return VCRBridge(server: server, token: token)
        } catch {
            throw StartError(description: error.description)
        }
    }

    /// Stops listening; the requests being answered finish first. Returns once every connection is closed.
    public func stop() {
        server.stop()
    }
}

/// Where a bridge's requests go: the cassette bound to the task that started it, else the process's inserted
/// cassette as a request of the test that started it would find it (``VCR/attribution(forTest:)``).
struct BridgeTarget: Sendable {
    var bound: Cassette?
    var test: String?

    var attribution: RequestAttribution {
        if let bound { return .cassette(bound) }
        return VCR.attribution(forTest: test)
    }
}

/// One bridge's answers: the token checked, the request rebuilt as the app made it, sent through the cassette's door.
struct BridgeExchange: Sendable {
    let token: String
    let target: BridgeTarget
    /// Sends what is recorded; it never follows redirects (the app's session does).
    let session = RedirectRefusal.session()

    /// ``answer(_:)`` waited for on the connection's thread (never a pool thread, which other tests may need): the
    /// answer itself runs in a task of its own, bound to the bridge's cassette.
    func answerWaiting(_ wire: WireRequest) -> WireResponse {
        guard BridgeWire.tokensMatch(wire.field(BridgeWire.tokenField), token) else {
            return .text(403, "HTTPVCR bridge: the request does not carry this bridge's token", error: "forbidden")
        }
        guard let request = Self.urlRequest(for: wire) else {
            return .text(400, "HTTPVCR bridge: no valid \(BridgeWire.originField) for '\(wire.target)'",
                         error: "bad-origin")
        }
        let result = Locked<WireResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        let cassette: Cassette?
        switch target.attribution {
        case .none: cassette = nil
        case let .cassette(attributed): cassette = attributed
        case let .unattributed(why): return BridgeWire.answer(for: VCRError.unattributed(request, why: why))
        case let .withoutCassette(test):
            return BridgeWire.answer(for: VCRError.networkWithoutCassette(Mismatch.describe(request), test: test))
        }
        Task {
            let response = await answer(request, cassette: cassette)
            result.withLock { $0 = response }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .text(500, "HTTPVCR bridge: no answer")
    }

    /// The cassette's answer (or the network's, with no cassette), as the wire carries it.
    func answer(_ request: URLRequest, cassette: Cassette?) async -> WireResponse {
        do {
            let (body, response): (Data, RecordedResponse)
            if let cassette {
                (body, response) = try await VCR.$boundCassette.withValue(cassette) {
                    try await VCR.dataKeepingFields(for: request) { live in try await forward(live) }
                }
            } else {
                (body, response) = try await forward(request)
            }
            var fields = response.headers.map { WireField($0.name, $0.value) }
            fields.append(WireField(BridgeWire.urlField, response.url.isEmpty ? request.url!.absoluteString : response.url))
            return WireResponse(status: response.statusCode, fields: fields, body: body)
        } catch {
            return BridgeWire.answer(for: error)
        }
    }

    /// The request the app made: its path and query on the origin it named, its fields but the bridge's own, the
    /// hop-by-hop ones and Host (URLSession sets the origin's).
    static func urlRequest(for wire: WireRequest) -> URLRequest? {
        guard wire.target.hasPrefix("/"), let origin = wire.field(BridgeWire.originField),
              let originURL = URL(string: origin), ["http", "https"].contains(originURL.scheme ?? ""),
              originURL.host?.isEmpty == false, originURL.path.isEmpty,
              let url = URL(string: origin + wire.target)
        else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = wire.method
        for field in wire.fields {
            let name = field.name.lowercased()
            if WireResponse.hopByHopFields.contains(name) || name == "host" || BridgeWire.ownFields.contains(name) {
                continue
            }
            request.addValue(field.value, forHTTPHeaderField: field.name)
        }
        if !wire.body.isEmpty { request.httpBody = wire.body }
        return request
    }

    /// The real request, redirects not followed. URLSession hands back a decoded body, so Content-Encoding is not
    /// passed on with it.
    func forward(_ request: URLRequest) async throws -> (Data, RecordedResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        let fields = http.allHeaderFields.compactMap { name, value -> RecordedHeader? in
            guard let name = name as? String, name.lowercased() != "content-encoding" else { return nil }
            return RecordedHeader(name, "\(value)")
        }.sorted { $0.name.lowercased() < $1.name.lowercased() }
        return (data, RecordedResponse(url: http.url?.absoluteString ?? "", statusCode: http.statusCode, headers: fields))
    }
}
