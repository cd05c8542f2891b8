import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension BridgeConnection {
    /// Sends a recording's request over the bridge in the recorder's place, and tells the recording what came, as
    /// the recorder's session would: a hop for the app to decide on (its answer sent over the bridge again), the
    /// response, its body, the end; or the error the test process answered with.
    func send(_ recording: Recording) {
        let exchange = Locked<BridgeSocket?>(nil, level: .leaf)
        recording.part?.whenStopped {
            // The client went away: what it got so far ends in the cancellation; the exchange, if any, is woken.
            recording.completed(error: URLError.cancelled(recording.live.url))
            exchange.withLock { $0?.shutDown() }
        }
        send(recording.live, for: recording, hops: 0, exchange: exchange)
    }

    private func send(_ request: URLRequest, for recording: Recording, hops: Int, exchange: Locked<BridgeSocket?>) {
        guard let url = request.url, let (origin, target) = BridgeWire.originAndTarget(of: url) else {
            return recording.completed(error: URLError(.unsupportedURL))
        }
        let bytes = BridgeClient.serialize(request, origin: origin, target: target, token: token, port: client.port)
        client.exchange(
            bytes, isHead: request.httpMethod == "HEAD", timeout: recording.timeout, waitingHere: BridgeClient.waitHere,
            using: { socket in exchange.withLock { $0 = socket } }
        ) { [self] result in
            switch result {
            case let .failure(error):
                recording.completed(error: URLError(error.code, userInfo: Self.failingURL(url)))
            case let .success(answer):
                received(answer, for: request, recording: recording, hops: hops, exchange: exchange)
            }
        }
    }

    private func received(
        _ answer: BridgeAnswer, for request: URLRequest, recording: Recording, hops: Int, exchange: Locked<BridgeSocket?>
    ) {
        let url = request.url!
        if let error = Self.failure(in: answer, url: url) { return recording.completed(error: error) }
        guard let response = Self.response(of: answer, url: url) else {
            return recording.completed(error: URLError(.badServerResponse, userInfo: Self.failingURL(url)))
        }
        if hops < LoaderRules.redirectLimit, let proposed = LoaderRules.redirect(from: request, by: response) {
            recording.redirected(response, to: proposed) { [self] next in
                guard let next else { return deliver(response, of: answer, to: recording) }
                send(next, for: recording, hops: hops + 1, exchange: exchange)
            }
            return
        }
        deliver(response, of: answer, to: recording)
    }

    private func deliver(_ response: HTTPURLResponse, of answer: BridgeAnswer, to recording: Recording) {
        recording.received(response, setsCookies: answer.field("Set-Cookie") != nil)
        if !answer.body.isEmpty { recording.received(answer.body) }
        recording.completed(error: nil)
    }

    /// The server's response as the app sees it: its real URL, its fields without the bridge's (a repeated name's
    /// values joined, as `HTTPURLResponse` holds them).
    static func response(of answer: BridgeAnswer, url: URL) -> HTTPURLResponse? {
        // Most answers are on the request's own URL: not parsed again then.
        let real = answer.field(BridgeWire.urlField).flatMap { $0 == url.absoluteString ? url : URL(string: $0) } ?? url
        var fields = [String: String](minimumCapacity: answer.fields.count)
        // One hash a field: a repeated name is rare.
        for field in answer.fields where !BridgeWire.isOwnField(field.name) {
            if let earlier = fields.updateValue(field.value, forKey: field.name) {
                fields[field.name] = earlier + ", " + field.value
            }
        }
        return HTTPURLResponse(url: real, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: fields)
    }

    /// The error an answer stands for, if it is a failure.
    static func failure(in answer: BridgeAnswer, url: URL) -> (any Error)? {
        guard answer.field(BridgeWire.errorField) != nil else { return nil }
        return BridgeWire.error(in: answer.status, fields: answer.field, body: answer.body, url: url)
    }

    static func failingURL(_ url: URL) -> [String: Any] {
        [NSURLErrorFailingURLErrorKey: url, "NSErrorFailingURLStringKey": url.absoluteString]
    }
}
