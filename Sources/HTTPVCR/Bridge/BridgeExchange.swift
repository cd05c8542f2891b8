import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Where a bridge's requests go: the cassette bound to the task that started it, else the process's inserted
/// cassette as a request of the test that started it would find it (``VCR/attribution(forTest:)``).
struct BridgeTarget: Sendable {
    var bound: Cassette?
    var test: String?

    var attribution: RequestAttribution {
        if let bound { return .cassette(bound) }
        return VCR.attribution(forTest: test)
    }

    /// The cassette requests go to now, if any.
    var cassette: Cassette? {
        if case let .cassette(cassette) = attribution { return cassette }
        return nil
    }

    /// The cassette `request` goes to (nil: the network, as if HTTPVCR were not there), or why it is refused.
    func cassette(for request: URLRequest) throws(VCRError) -> Cassette? {
        switch attribution {
        case .none: return nil
        case let .cassette(cassette): return cassette
        case let .unattributed(why): throw .unattributed(request, why: why)
        case let .withoutCassette(test): throw .networkWithoutCassette(Mismatch.describe(request), test: test)
        }
    }
}

/// One bridge's answers, on the connections' threads: the token checked, the request rebuilt as the app made it, and
/// answered through the ``WireDoor``. A launched process saying who it is (``BridgeWire/processField``) is known from
/// then on as a server under test.
struct BridgeExchange: Sendable {
    let token: String
    let target: BridgeTarget
    let door: WireDoor
    /// Told the pid of each process that says who it is.
    let processConnected: @Sendable (Int32) -> Void

    func answer(_ wire: WireRequest) -> WireResponse {
        guard BridgeWire.tokensMatch(wire.field(BridgeWire.tokenField), token) else {
            return .text(403, "HTTPVCR bridge: the request does not carry this bridge's token", error: "forbidden")
        }
        if let pid = wire.field(BridgeWire.processField).flatMap(Int32.init) {
            processConnected(pid)
            return WireResponse(status: 204)
        }
        guard let request = Self.urlRequest(for: wire) else {
            return .text(400, "HTTPVCR bridge: no valid \(BridgeWire.originField) for '\(wire.target)'",
                         error: "bad-origin")
        }
        let cassette: Cassette?
        do { cassette = try target.cassette(for: request) } catch { return BridgeWire.answer(for: error) }
        switch door.answerWaiting(request, cassette: cassette) {
        case let .success((body, response)):
            var fields = response.headers.map { WireField($0.name, $0.value) }
            fields.append(WireField(BridgeWire.urlField, response.url.isEmpty ? request.url!.absoluteString : response.url))
            return WireResponse(status: response.statusCode, fields: fields, body: body)
        case let .failure(error):
            return BridgeWire.answer(for: error)
        }
    }

    /// The request the app made: its path and query on the origin it named, its fields but the bridge's own, the
    /// hop-by-hop ones and Host (URLSession sets the origin's).
    static func urlRequest(for wire: WireRequest) -> URLRequest? {
        guard let origin = wire.field(BridgeWire.originField), BridgeWire.isOrigin(origin) else { return nil }
        return request(for: wire, on: origin)
    }

    /// `wire`'s method, target, fields and body, sent to `origin` (`scheme://host[:port]`). The fields are set at once:
    /// adding them one by one costs a copy of the request's fields each.
    static func request(for wire: WireRequest, on origin: String) -> URLRequest? {
        guard wire.target.hasPrefix("/"), let url = URL(string: origin + wire.target) else { return nil }
        var request = URLRequest(url: url)
        if wire.method != "GET" { request.httpMethod = wire.method }
        // In order, a repeated name's values joined (as addValue would). Looked for in an array, not the
        // dictionary: iterating a dictionary's pairs for each field cost a tenth of the bridge's answer.
        var kept: [(String, String)] = []
        kept.reserveCapacity(wire.fields.count)
        for field in wire.fields {
            let name = field.name
            if WireResponse.isHopByHop(name) || name.equalsIgnoringASCIICase("host") || BridgeWire.isOwnField(name) {
                continue
            }
            if let index = kept.firstIndex(where: { $0.0.equalsIgnoringASCIICase(name) }) {
                kept[index].1 += "," + field.value
            } else {
                kept.append((name, field.value))
            }
        }
        if !kept.isEmpty { request.allHTTPHeaderFields = Dictionary(uniqueKeysWithValues: kept) }
        if !wire.body.isEmpty { request.httpBody = wire.body }
        return request
    }
}

/// What a server that does not link HTTPVCR is given in place of its upstream (``VCRBridge/url(standingInFor:)``):
/// a loopback server whose requests are sent to that upstream through the bridge's cassette, and answered as the
/// upstream would answer, in plain HTTP. A cassette's refusal is a 500 whose body says why.
struct StandIn: Sendable {
    /// `scheme://host[:port]` of the upstream.
    let origin: String
    let target: BridgeTarget
    let door: WireDoor

    func answer(_ wire: WireRequest) -> WireResponse {
        guard wire.target.hasPrefix("/"), let request = BridgeExchange.request(for: wire, on: origin) else {
            return .text(400, "HTTPVCR: the request target '\(wire.target)' is not a path", error: "bad-target")
        }
        let cassette: Cassette?
        do { cassette = try target.cassette(for: request) } catch { return Self.answer(for: error) }
        switch door.answerWaiting(request, cassette: cassette) {
        case let .success((body, response)):
            return WireResponse(status: response.statusCode, fields: response.headers.map { WireField($0.name, $0.value) },
                                body: body)
        case let .failure(error):
            return Self.answer(for: error)
        }
    }

    /// A failure in plain HTTP: the cassette's refusal (500) or the upstream's absence (502), explained in the body.
    static func answer(for error: any Error) -> WireResponse {
        if let error = error as? VCRError {
            return .text(500, error.message, error: error.code == .noMatch ? "no-match" : "\(error.code)")
        }
        return .text(502, "HTTPVCR: the upstream did not answer: \(error.localizedDescription)", error: "upstream")
    }
}
