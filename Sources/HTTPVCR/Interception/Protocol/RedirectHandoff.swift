import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Chapters whose rest is waiting for the request a reported hop leads to.
///
/// A tape keeps a request's hops in one chapter (the recorder's session followed them). When a hop is reported,
/// the loader starts a new protocol for the next request; that protocol takes the chapter over from here instead
/// of matching the request again, so the chapter plays on, and a recording in flight goes on, where it was.
final class RedirectHandoffs: @unchecked Sendable {
    private struct Key: Hashable {
        let method: String
        let url: String

        init?(_ request: URLRequest) {
            guard let url = request.url?.absoluteString else { return nil }
            self.method = (request.httpMethod ?? "GET").uppercased()
            self.url = url
        }
    }

    private let waiting = Locked<[Key: [Load]]>([:], level: .leaf)

    /// `load` has reported a hop to `request`: the protocol that loads it continues the chapter.
    func expect(_ request: URLRequest, continuing load: Load) {
        guard let key = Key(request) else { return }
        waiting.withLock { $0[key, default: []].append(load) }
    }

    /// Whether a reported hop leads to `request`.
    func isExpecting(_ request: URLRequest) -> Bool {
        guard let key = Key(request) else { return false }
        return waiting.withLock { $0[key] != nil }
    }

    /// The load whose chapter `request` continues, if a reported hop led to it; the oldest first.
    func take(for request: URLRequest) -> Load? {
        guard let key = Key(request) else { return nil }
        return waiting.withLock { waiting in
            guard var loads = waiting[key], !loads.isEmpty else { return nil }
            let load = loads.removeFirst()
            waiting[key] = loads.isEmpty ? nil : loads
            return load
        }
    }
}

extension URLRequest {
    /// The request a redirect leads to: this one with the hop's URL, as ``RedirectRule`` says (and a GET without a
    /// body where the hop was recorded as a GET).
    func followingRedirect(status: Int, to url: URL, recordedMethod: String? = nil) -> URLRequest {
        var next = self
        next.url = url
        let method = (httpMethod ?? "GET").uppercased()
        let recordedAsGet = recordedMethod?.uppercased() == "GET" && method != "GET"
        if RedirectRule.becomesGet(status: status, method: method) || recordedAsGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return next
    }
}
