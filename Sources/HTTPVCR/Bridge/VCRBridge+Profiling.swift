import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension VCRBridge {
    /// The test process's side of bridged requests without sockets, for `vcr-bench --profile bridge-answer`: what a
    /// connection's thread does with each request's bytes (parse, answer from the cassette inserted for the process,
    /// write the answer).
    package struct ProfiledAnswers: Sendable {
        let exchange: BridgeExchange
        let token: String

        package init() {
            token = BridgeWire.makeToken()
            exchange = BridgeExchange(token: token, target: BridgeTarget(), door: WireDoor()) { _ in }
        }

        /// The bytes the launched process sends for `request`.
        package func bytes(of request: URLRequest) -> Data {
            BridgeClient.serialize(request, origin: BridgeWire.origin(of: request.url!)!, token: token, port: 1)
        }

        /// The answer's bytes, as the connection writes them.
        package func answer(_ bytes: Data) -> Data {
            var parser = RequestParser(limits: WireLimits())
            parser.feed(bytes)
            guard let wire = try? parser.next() else { return Data() }
            return exchange.answer(wire).serialized(closing: false)
        }
    }
}
