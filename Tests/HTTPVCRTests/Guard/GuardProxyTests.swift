import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// The network guard's proxy on the wire, driven as libcurl drives it: absolute targets, several requests on one
/// connection, `CONNECT` for https, refusals.
@Suite struct GuardProxyTests {
    struct WireFailure: Error {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A connection to the proxy, and what came back on it.
    struct Client: ~Copyable {
        let fd: Int32
        private var socket: ProxySocket

        init(_ proxy: GuardProxy) throws {
            fd = Loopback.tcpSocket()
            guard Loopback.connect(fd, port: proxy.port) == 0 else { throw WireFailure("no proxy") }
            socket = ProxySocket(fd, idleTimeout: 10)
        }

        deinit { close(fd) }

        func send(_ text: String) {
            _ = Loopback.sendAll(Data(text.utf8), to: fd)
        }

        /// One response framed by Content-Length: its status line, fields and body.
        mutating func response() throws -> (status: String, fields: [String], body: String) {
            guard let head = socket.readHead() else { throw WireFailure("no response head") }
            let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
            let length = lines.first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            // The body through a socket pair, as the proxy relays it to a peer (small: the pair holds it).
            var ends: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                throw WireFailure("no socket pair")
            }
            defer { close(ends[0]) }
            let relayed = socket.relay(length, to: ends[1])
            close(ends[1])
            var body = [UInt8](repeating: 0, count: length + 1)
            let count = length == 0 ? 0 : read(ends[0], &body, length + 1)
            guard relayed, count == length else { throw WireFailure("body cut at \(count) of \(length)") }
            return (lines[0], Array(lines.dropFirst()), String(decoding: body.prefix(length), as: UTF8.self))
        }
    }

    @Test func requestsOnOneConnectionEachReachTheirServerAndComeBack() throws {
        let judged = Locked<[String]>([])
        let proxy = try GuardProxy { request in
            judged.withLock { $0.append(request.url) }
            return .forward
        }
        let base = try HTTPBin.baseURL()
        let host = "\(base.host!):\(base.port!)"
        let id = UUID().uuidString.prefix(8)
        var client = try Client(proxy)
        client.send("GET \(base.absoluteString)/anything/guard-\(id)?n=1 HTTP/1.1\r\nHost: \(host)\r\n"
            + "Proxy-Connection: Keep-Alive\r\n\r\n")
        let first = try client.response()
        #expect(first.status == "HTTP/1.1 200 OK")
        #expect(first.body.contains("/anything/guard-\(id)?n=1"))
        // The same connection, a chunked body: the proxy frames it through to the server.
        client.send("POST \(base.absoluteString)/anything/guard-\(id)?n=2 HTTP/1.1\r\nHost: \(host)\r\n"
            + "Transfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let second = try client.response()
        #expect(second.status == "HTTP/1.1 200 OK")
        #expect(second.body.contains(#""data": "hello world""#))
        #expect(judged.withLock { $0 } == [
            "\(base.absoluteString)/anything/guard-\(id)?n=1", "\(base.absoluteString)/anything/guard-\(id)?n=2",
        ])
        // The server got origin-form targets, without the proxy's own fields.
        let seen = try HTTPBin.requests(containing: "guard-\(id)", since: 0, atLeast: 2)
        #expect(Set(seen.map { $0.components(separatedBy: " ").prefix(2).joined(separator: " ") })
            == ["GET /anything/guard-\(id)?n=1", "POST /anything/guard-\(id)?n=2"])
    }

    @Test func aRefusedRequestGetsTheMessageAndNeverReachesTheServer() throws {
        let proxy = try GuardProxy { _ in .refuse("HTTPVCR refused it: a test said so") }
        let base = try HTTPBin.baseURL()
        let id = UUID().uuidString.prefix(8)
        let before = try HTTPBin.settledRequestCount()
        var client = try Client(proxy)
        client.send("GET \(base.absoluteString)/anything/refused-\(id) HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.response()
        #expect(response.status == "HTTP/1.1 403 Refused by HTTPVCR")
        #expect(response.fields.contains("X-HTTPVCR-Refused: 1"))
        #expect(response.body == "HTTPVCR refused it: a test said so\n")
        #expect(try HTTPBin.requestsFromAnyProcess(since: before).filter { $0.contains("refused-\(id)") }.isEmpty)

        var tunnel = try Client(proxy)
        tunnel.send("CONNECT api.example.invalid:443 HTTP/1.1\r\nHost: api.example.invalid:443\r\n\r\n")
        #expect(try tunnel.response().status == "HTTP/1.1 403 Refused by HTTPVCR")
    }

    @Test func aServerThatIsNotThereIsToldToHTTPVCRsOwnRequestsAsItsAbsence() throws {
        let proxy = try GuardProxy { _ in .forward }
        let down = URL(string: "http://127.0.0.1:\(try HTTPBin.closedPort())/down")!
        let since = DispatchTime.now().uptimeNanoseconds
        let client = try Client(proxy)
        client.send("GET \(down.absoluteString) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        var chunk = [UInt8](repeating: 0, count: 1024)
        #expect(ProxySocket.receive(client.fd, into: &chunk, timeout: 10_000) == 0, "closed without an answer")
        let error = NetworkGuard.asTheServerWouldFail(URLError(.badServerResponse), url: down, since: since)
        #expect((error as? URLError)?.code == .cannotConnectToHost)
    }

    /// A proxy the user had set (a company's, on CI) is where the guard sends what it lets through, tunnels too.
    @Test func whatPassesGoesThroughTheUsersProxy() throws {
        let seenByUsersProxy = Locked<[String]>([])
        let usersProxy = try GuardProxy { request in
            seenByUsersProxy.withLock { $0.append("\(request.method) \(request.url)") }
            return .forward
        }
        let via = UserProxy(origin: NetworkOrigin(host: "127.0.0.1", port: Int(usersProxy.port)))
        let proxy = try GuardProxy(routes: ProxyRoutes(plain: via, secure: via, direct: ["straight.invalid"])) { _ in
            .forward
        }
        let base = try HTTPBin.baseURL()
        let host = "\(base.host!):\(base.port!)"
        var client = try Client(proxy)
        client.send("GET \(base.absoluteString)/get?via=users-proxy HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        #expect(try client.response().status == "HTTP/1.1 200 OK")
        // A tunnel through both: httpbin speaks plain HTTP inside it.
        var tunnel = try Client(proxy)
        tunnel.send("CONNECT \(host) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        #expect(try tunnel.response().status == "HTTP/1.1 200 Connection established")
        tunnel.send("GET /get?via=tunnel HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        let inside = try tunnel.response()
        #expect(inside.status == "HTTP/1.1 200 OK" && inside.body.contains("via=tunnel"))
        #expect(seenByUsersProxy.withLock { $0 } == [
            "GET \(base.absoluteString)/get?via=users-proxy", "CONNECT https://\(host)",
        ])
    }

    @Test func theUsersProxyIsReadAsLibcurlReadsIt() throws {
        let routes = try ProxyRoutes(environment: [
            "all_proxy": "http://user:p%40ss@proxy.corp:3128", "no_proxy": "localhost, .internal.corp",
            "HTTP_PROXY": "http://ignored:1",  // libcurl never reads the uppercase one for http
        ])
        let corp = UserProxy(origin: NetworkOrigin(host: "proxy.corp", port: 3128),
                             authorization: "Basic " + Data("user:p@ss".utf8).base64EncodedString())
        #expect(routes.proxy(for: NetworkOrigin(host: "api.example.com", port: 443), tunnel: true) == corp)
        #expect(routes.proxy(for: NetworkOrigin(host: "api.example.com", port: 80), tunnel: false) == corp)
        #expect(routes.proxy(for: NetworkOrigin(host: "db.internal.corp", port: 80), tunnel: false) == nil)
        #expect(routes.proxy(for: NetworkOrigin(host: "localhost", port: 8080), tunnel: false) == nil)
        #expect(try ProxyRoutes(environment: ["https_proxy": "proxy:8080"]).secure?.origin
            == NetworkOrigin(host: "proxy", port: 8080))
        #expect(throws: ProxyRoutes.UnsupportedProxy.self) {
            try ProxyRoutes(environment: ["https_proxy": "socks5://proxy:1080"])
        }
    }

    @Test func headsNameTheirOrigin() throws {
        let plain = try #require(ProxyHead(Array("GET http://User@Example.com:8080/a?b=c#f HTTP/1.1\r\n\r\n".utf8)[...]))
        let (request, originForm) = try #require(plain.absoluteTarget)
        #expect(request.origin == NetworkOrigin(host: "example.com", port: 8080))
        #expect(originForm == "/a?b=c")
        #expect(request.url == "http://example.com:8080/a?b=c")
        let tunnel = try #require(ProxyHead(Array("CONNECT [::1]:443 HTTP/1.1\r\n\r\n".utf8)[...])?.tunnelTarget)
        #expect(tunnel.origin == NetworkOrigin(host: "::1", port: 443))
        #expect(tunnel.origin.isLoopback)
        #expect(tunnel.url == "https://[::1]")
        #expect(ProxyHead(Array("nonsense\r\n\r\n".utf8)[...]) == nil)
    }
}
