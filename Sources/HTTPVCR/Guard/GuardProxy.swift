import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPVCRCassettes

/// Where a request is going: a host (lowercased, an IPv6 address without brackets) and a port.
struct NetworkOrigin: Hashable, Sendable, CustomStringConvertible {
    let host: String
    let port: Int

    init(host: String, port: Int) {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        self.port = port
    }

    /// The origin of an http(s) URL, its port the scheme's when it names none.
    init?(_ url: URL?) {
        guard let url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty
        else { return nil }
        self.init(host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
    }

    /// `host:port`, or `[v6]:port`.
    var description: String { authority(defaultPort: nil) }

    /// As a URL writes it: without the port where it is the scheme's.
    func authority(defaultPort: Int?) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? shownHost : "\(shownHost):\(port)"
    }

    /// 127.0.0.0/8, ::1 and `localhost`: a server the test runs itself.
    var isLoopback: Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.")
    }
}

/// A request the guard's proxy received from a session HTTPVCR is not in.
struct ProxiedRequest: Sendable {
    /// `CONNECT` for an https request: only its host and port are seen, the rest travels encrypted.
    let method: String
    /// `http://host:port/path?query`, or `https://host:port` for a tunnel.
    let url: String
    let origin: NetworkOrigin
    /// Carries HTTPVCR's recorder's mark (``NetworkGuard/markField``).
    var isMarked = false

    var isTunnel: Bool { method == "CONNECT" }

    /// How messages name it.
    var described: String {
        isTunnel ? "a request to \(url)/… (https: HTTPVCR sees its host, not its method and path)" : "\(method) \(url)"
    }
}

/// What the guard makes of a proxied request.
enum GuardVerdict: Equatable {
    /// To the server.
    case forward
    /// Answered with an error, the message its body.
    case refuse(String)
}

/// The loopback proxy the loader's environment points every session at (``NetworkGuard``): it asks the guard about
/// each request and forwards it, bytes as they come, or refuses it. One thread a connection, never the cooperative
/// pool: tests block it, and a request in flight must not wait for it.
final class GuardProxy: Sendable {
    typealias Judge = @Sendable (ProxiedRequest) -> GuardVerdict

    let port: UInt16
    private let listener: Int32
    private let judge: Judge
    /// How servers are reached: straight, or through the proxy the user had set.
    private let routes: ProxyRoutes
    /// Bumped when cassettes change: a tunnel opened before is judged again when its client next sends, so that a
    /// session cannot keep using, under a cassette, a tunnel it opened before it.
    private let generation = Locked(0, level: .leaf)

    init(
        routes: ProxyRoutes = .none,
        judge: @escaping Judge
    ) throws(LoopbackServer.StartError) {
        self.judge = judge
        self.routes = routes
        (listener, port) = try LoopbackServer.listen(on: 0)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "HTTPVCR network guard"
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Has every open tunnel judged again before its client's next bytes go on.
    func rejudgeTunnels() {
        generation.withLock { $0 += 1 }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno != EINTR { usleep(10_000) }
                continue
            }
            let thread = Thread { [self] in
                serve(client)
                close(client)
            }
            thread.name = "HTTPVCR network guard connection"
            thread.start()
        }
    }

    /// Requests on one connection, one after the other (the loader reuses its connection to a proxy for any
    /// server): each is judged, then sent to its server, whose answer goes back as it comes.
    private func serve(_ clientFD: Int32) {
        var client = ProxySocket(clientFD)
        var upstream: Upstream?
        defer { upstream?.end() }
        while let bytes = client.readHead() {
            guard let head = ProxyHead(bytes) else {
                return refuse(client.fd, status: "400 Bad Request", "HTTPVCR's network guard: malformed request")
            }
            if head.method == "CONNECT" {
                upstream?.end()
                upstream = nil
                return tunnel(head, client: &client)
            }
            guard let (request, originForm) = head.absoluteTarget else {
                return refuse(client.fd, status: "400 Bad Request", "HTTPVCR's network guard forwards requests for "
                    + "other servers only (an absolute http:// target), not \(head.target)")
            }
            if case let .refuse(message) = judge(request) { return refuse(client.fd, message) }
            let via = routes.proxy(for: request.origin, tunnel: false)
            // A connection to the server of its own for each request: the answer to the one before is whole by now
            // (the loader waits for it), and a kept-alive one the server may be closing as the request goes out
            // would lose it.
            upstream?.end()
            upstream = nil
            let next = via?.origin ?? request.origin
            switch ProxySocket.connect(host: next.host, port: next.port) {
            case let .failure(failure):
                // Told to HTTPVCR's recorder; any other session sees the connection end.
                if via == nil { NetworkGuard.noteUpstreamFailure(failure, for: request.origin) }
                return
            case let .success(server):
                upstream = Upstream(server: server, client: clientFD)
            }
            // A user's proxy takes the absolute target, as libcurl would have sent it there.
            let sent = via.map { head.forwarded(target: head.target, proxyAuthorization: $0.authorization) }
                ?? head.forwarded(target: originForm)
            guard let server = upstream?.server,
                  ProxySocket.send(sent[...], to: server),
                  relayBody(of: head, from: &client, to: server)
            else { return }
        }
    }

    /// A request's body, as its head frames it.
    private func relayBody(of head: ProxyHead, from client: inout ProxySocket, to server: Int32) -> Bool {
        if head.isChunked {
            while true {
                guard let line = client.readLine(), ProxySocket.send(line + [13, 10], to: server) else { return false }
                let sizeText = String(decoding: line.prefix { $0 != 59 }, as: UTF8.self)
                    .trimmingCharacters(in: .whitespaces)
                guard let size = Int(sizeText, radix: 16), size >= 0 else { return false }
                if size == 0 { break }
                guard client.relay(size + 2, to: server) else { return false }
            }
            // Trailers, up to the empty line.
            while true {
                guard let line = client.readLine(), ProxySocket.send(line + [13, 10], to: server) else { return false }
                if line.isEmpty { return true }
            }
        }
        return client.relay(head.contentLength ?? 0, to: server)
    }

    /// An https request: judged by its host and port, then a tunnel whose bytes the guard passes on unread.
    private func tunnel(_ head: ProxyHead, client: inout ProxySocket) {
        guard let request = head.tunnelTarget else {
            return refuse(client.fd, status: "400 Bad Request", "HTTPVCR's network guard: bad CONNECT target")
        }
        let verdict = judge(request)
        if case let .refuse(message) = verdict { return refuse(client.fd, message) }
        let via = routes.proxy(for: request.origin, tunnel: true)
        let next = via?.origin ?? request.origin
        let server: Int32
        switch ProxySocket.connect(host: next.host, port: next.port) {
        case let .failure(failure):
            if via == nil { NetworkGuard.noteUpstreamFailure(failure, for: request.origin) }
            return refuse(client.fd, status: "502 Bad Gateway", "HTTPVCR's network guard could not reach \(next)")
        case let .success(socket):
            server = socket
        }
        defer { close(server) }
        if let via, let refusal = openTunnel(to: request.origin, through: via, on: server, client: client.fd) {
            return refuse(client.fd, status: "502 Bad Gateway", refusal)
        }
        guard ProxySocket.send(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)[...], to: client.fd),
              client.flush(to: server)
        else { return }
        let back = DispatchSemaphore(value: 0)
        let clientFD = client.fd
        let thread = Thread {
            ProxySocket.pipe(from: server, to: clientFD)
            back.signal()
        }
        thread.name = "HTTPVCR network guard tunnel"
        thread.start()
        var judged = generation.withLock { $0 }
        ProxySocket.pipe(from: client.fd, to: server) { [self] in
            let now = generation.withLock { $0 }
            if now == judged { return true }
            judged = now
            if case .refuse = judge(request) { return false }
            return true
        }
        // The client is done (or may go no further): so is the server's side.
        shutdown(server, Int32(SHUT_RDWR))
        shutdown(clientFD, Int32(SHUT_RDWR))
        back.wait()
    }

    /// Asks the user's proxy for a tunnel to `origin` on `server`; the reason, when it says no.
    private func openTunnel(to origin: NetworkOrigin, through proxy: UserProxy, on server: Int32, client: Int32) -> String? {
        let authorization = proxy.authorization.map { "Proxy-Authorization: \($0)\r\n" } ?? ""
        let connect = "CONNECT \(origin) HTTP/1.1\r\nHost: \(origin)\r\n\(authorization)\r\n"
        var answers = ProxySocket(server, idleTimeout: 30)
        guard ProxySocket.send(Array(connect.utf8)[...], to: server), let head = answers.readHead() else {
            return "the proxy \(proxy.origin) did not answer CONNECT \(origin)"
        }
        let statusLine = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")[0]
        guard statusLine.split(separator: " ").dropFirst().first?.hasPrefix("2") == true else {
            return "the proxy \(proxy.origin) answered CONNECT \(origin) with \(statusLine)"
        }
        return answers.flush(to: client) ? nil : "the client went away"
    }

    private func refuse(_ client: Int32, status: String = "403 Refused by HTTPVCR", _ message: String) {
        let body = Data((message + "\n").utf8)
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nX-HTTPVCR-Refused: 1\r\n"
            + "Connection: close\r\nContent-Length: \(body.count)\r\n\r\n"
        _ = Loopback.sendAll(Data(head.utf8) + body, to: client)
    }
}

/// The server connection of a proxied connection's current request, and the thread that passes its answers back.
private final class Upstream: @unchecked Sendable {
    let server: Int32
    private let client: Int32
    private let done = DispatchSemaphore(value: 0)
    /// Set before the guard ends the connection for the next request: the client's connection stays open then.
    private let switching = Locked(false, level: .leaf)

    init(server: Int32, client: Int32) {
        self.server = server
        self.client = client
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while let count = ProxySocket.receive(server, into: &chunk, timeout: -1), count > 0,
                  ProxySocket.send(chunk[0..<count], to: client) {}
            // The server closed: so does the connection to the client, which may be how the answer ends.
            if !switching.withLock({ $0 }) { shutdown(client, Int32(SHUT_WR)) }
            done.signal()
        }
        thread.name = "HTTPVCR network guard answers"
        thread.start()
    }

    func end() {
        switching.withLock { $0 = true }
        shutdown(server, Int32(SHUT_RDWR))
        done.wait()
        close(server)
    }
}

/// A request's head, as a proxy receives it.
struct ProxyHead {
    let method: String
    let target: String
    let version: String
    /// Name and value, in order.
    let fields: [(name: String, value: String)]

    init?(_ bytes: ArraySlice<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        while lines.last?.isEmpty == true { lines.removeLast() }
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: false) ?? []
        guard requestLine.count == 3, !requestLine[0].isEmpty, !requestLine[1].isEmpty,
              requestLine[2].hasPrefix("HTTP/1.")
        else { return nil }
        (method, target, version) = (String(requestLine[0]), String(requestLine[1]), String(requestLine[2]))
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        self.fields = fields
    }

    func field(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var isChunked: Bool { field("Transfer-Encoding")?.lowercased().contains("chunked") == true }
    var contentLength: Int? { field("Content-Length").flatMap { Int($0) } }

    /// `http://host[:port]/path`: the request and the target its server expects (`/path`).
    var absoluteTarget: (ProxiedRequest, originForm: String)? {
        guard let schemeEnd = target.range(of: "://") else { return nil }
        let scheme = target[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = target[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard let origin = Self.origin(authority, defaultPort: scheme == "https" ? 443 : 80) else { return nil }
        var originForm = String(rest[authorityEnd...])
        if let fragment = originForm.firstIndex(of: "#") { originForm = String(originForm[..<fragment]) }
        if originForm.hasPrefix("?") || originForm.isEmpty { originForm = "/" + originForm }
        let shownURL = "\(scheme)://\(origin.authority(defaultPort: scheme == "https" ? 443 : 80))\(originForm)"
        var request = ProxiedRequest(method: method, url: shownURL, origin: origin)
        request.isMarked = field(NetworkGuard.markField) == NetworkGuard.markToken
        return (request, originForm)
    }

    /// `CONNECT host:port`.
    var tunnelTarget: ProxiedRequest? {
        guard let origin = Self.origin(target[...], defaultPort: 443) else { return nil }
        return ProxiedRequest(method: method, url: "https://\(origin.authority(defaultPort: 443))", origin: origin)
    }

    /// The head sent on: `target` (origin-form for the server, absolute for a user's proxy), without the fields meant
    /// for HTTPVCR's proxy, with `proxyAuthorization` for the user's.
    func forwarded(target: String, proxyAuthorization: String? = nil) -> [UInt8] {
        var text = "\(method) \(target) \(version)\r\n"
        if let proxyAuthorization { text += "Proxy-Authorization: \(proxyAuthorization)\r\n" }
        for (name, value) in fields
        where !name.lowercased().hasPrefix("proxy-") && name.caseInsensitiveCompare(NetworkGuard.markField) != .orderedSame {
            text += "\(name): \(value)\r\n"
        }
        return Array((text + "\r\n").utf8)
    }

    private static func origin(_ authority: Substring, defaultPort: Int) -> NetworkOrigin? {
        var host = authority
        var port = defaultPort
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            guard let parsed = Int(authority[authority.index(after: colon)...]), (1...65535).contains(parsed) else {
                return nil
            }
            port = parsed
            host = authority[..<colon]
        }
        guard !host.isEmpty else { return nil }
        return NetworkOrigin(host: String(host), port: port)
    }
}
