import Foundation

/// How the guard's proxy reaches a server: straight, or through the proxy the user's environment named before
/// HTTPVCR took `http_proxy` and `https_proxy` over (a company's proxy on CI), as libcurl would have.
struct ProxyRoutes: Sendable {
    /// The user's proxy for plain and for https requests, if any.
    let plain: UserProxy?
    let secure: UserProxy?
    /// `no_proxy`: hosts, and domains they may end in, reached straight; `*` for every host.
    let direct: [String]

    static let none = ProxyRoutes(plain: nil, secure: nil, direct: [])

    /// Read from variables as libcurl reads them: `http_proxy` (lowercase only), `https_proxy`/`HTTPS_PROXY`,
    /// `all_proxy`/`ALL_PROXY` for both, `no_proxy`/`NO_PROXY`. Throws the variable whose proxy the guard cannot
    /// speak to (not `http://`).
    init(environment: [String: String]) throws(UnsupportedProxy) {
        func value(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        }
        let all = try UserProxy(value("all_proxy", "ALL_PROXY"), variable: "all_proxy")
        plain = try UserProxy(value("http_proxy"), variable: "http_proxy") ?? all
        secure = try UserProxy(value("https_proxy", "HTTPS_PROXY"), variable: "https_proxy") ?? all
        direct = (value("no_proxy", "NO_PROXY") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }
            .filter { !$0.isEmpty }
    }

    init(plain: UserProxy?, secure: UserProxy?, direct: [String]) {
        (self.plain, self.secure, self.direct) = (plain, secure, direct)
    }

    /// The user's proxy a request to `origin` goes through, or nil for straight.
    func proxy(for origin: NetworkOrigin, tunnel: Bool) -> UserProxy? {
        guard let proxy = tunnel ? secure : plain else { return nil }
        let reachedStraight = direct.contains { entry in
            entry == "*" || origin.host == entry || origin.host.hasSuffix("." + entry)
        }
        return reachedStraight ? nil : proxy
    }

    /// A proxy variable the guard cannot chain to: it steps aside and says which.
    struct UnsupportedProxy: Error {
        let variable: String
        let value: String
    }
}

/// A proxy the user set: where it listens, and the `Proxy-Authorization` its URL's credentials make.
struct UserProxy: Sendable, Equatable {
    let origin: NetworkOrigin
    let authorization: String?

    init(origin: NetworkOrigin, authorization: String? = nil) {
        self.origin = origin
        self.authorization = authorization
    }

    /// `http://[user:password@]host[:port]`, or `host[:port]` (libcurl's default scheme); nil for nothing.
    init?(_ text: String?, variable: String) throws(ProxyRoutes.UnsupportedProxy) {
        guard let text else { return nil }
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty
        else { throw ProxyRoutes.UnsupportedProxy(variable: variable, value: text) }
        origin = NetworkOrigin(host: host, port: url.port ?? 1080)
        authorization = url.user.map { user in
            let credentials = (user.removingPercentEncoding ?? user) + ":"
                + (url.password.map { $0.removingPercentEncoding ?? $0 } ?? "")
            return "Basic " + Data(credentials.utf8).base64EncodedString()
        }
    }
}
