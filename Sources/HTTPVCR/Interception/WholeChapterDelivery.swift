import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension VCRURLProtocol {
    /// Hands a whole recorded chapter to the client from inside `startLoading`, as ``ClientChannel`` would: the
    /// response, the body (in one `didLoad` on Linux, chunk by chunk elsewhere), then the end. It needs no
    /// channel, queue or lock: nothing else talks to this client meanwhile, and the cassette holds back every
    /// other delivery until ``Cassette/endDirectReplay()``.
    func handOver(_ chapter: Cassette.ReplayedChapter) {
        guard let client, isTaskLive else { return }
        var body = Data()
        for position in chapter.positions {
            switch chapter.scenes[position].event {
            case .request, .redirect, .completion:
                continue
            case let .response(recorded):
                guard let response = recorded.httpURLResponse(fallbackURL: request.url) else {
                    return client.urlProtocol(self, didFailWithError: VCRError.unusableResponseURL(recorded))
                }
                client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            case let .data(data):
                #if canImport(FoundationNetworking)
                if body.isEmpty { body = data } else { body.append(data) }
                #else
                client.urlProtocol(self, didLoad: data)
                #endif
            case let .error(recorded):
                if !body.isEmpty { client.urlProtocol(self, didLoad: body) }
                return client.urlProtocol(self, didFailWithError: recorded.foundationError)
            }
        }
        if !body.isEmpty { client.urlProtocol(self, didLoad: body) }
        client.urlProtocolDidFinishLoading(self)
    }
}

extension VCRError {
    static func unusableResponseURL(_ recorded: RecordedResponse) -> VCRError {
        VCRError(.malformedCassette, "A recorded response has no usable URL: \(recorded.url)")
    }
}
