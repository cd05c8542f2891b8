// The process a VCRBridge test launches: it connects to the bridge its environment names and makes requests as an
// app would, then prints what it got, one line per fact, so that two runs (recorded, replayed) can be compared.
//
//   bridge-child requests BASE MARKER   a few requests to an httpbin at BASE, each carrying marker=MARKER
//   bridge-child one BASE MARKER        one GET of BASE/anything/one?marker=MARKER: what it got, or its error
//   bridge-child big BASE               a 90,000-byte GET and a 200,000-byte POST echoed: prints the sizes
//   bridge-child connect                prints whether VCR.connectToBridge() connected
//   bridge-child serve BASE             a server under test: listens on a free loopback port, prints
//                                       "listening PORT", and answers GET /summary?marker=M with what its upstream
//                                       (BASE/anything/summary?marker=M, through URLSession.shared) said, and
//                                       GET /cookies with how many Set-Cookie fields BASE/cookies-pair sent
//                                       (through the door, which keeps them apart); until SIGTERM
//
// Exits 0 once it printed everything, 1 on a usage error or a failed connection.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCR

/// Remembers the hops the app's delegate was asked about.
final class HopLog: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var hops: [String] = []

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        lock.withLock { hops.append("\(response.statusCode) \(response.url?.path ?? "?") -> \(request.url?.path ?? "?")") }
        completionHandler(request)
    }

    var taken: [String] { lock.withLock { defer { hops = [] }; return hops } }
}

func say(_ line: String) { print(line) }

func describe(_ name: String, _ data: Data, _ response: URLResponse, fields: [String] = []) {
    let http = response as? HTTPURLResponse
    say("\(name): status \(http?.statusCode ?? -1) url \(response.url?.absoluteString ?? "-")")
    for field in fields { say("\(name): \(field): \(http?.value(forHTTPHeaderField: field) ?? "-")") }
    say("\(name): body \(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\n", with: " "))")
}

func describe(_ name: String, _ error: any Error) {
    let error = error as NSError
    say("\(name): error \(error.domain) \(error.code)")
}

func requests(base: String, marker: String) async {
    let hopLog = HopLog()
    let configuration = URLSessionConfiguration.ephemeral
    VCR.install(in: configuration)
    let custom = URLSession(configuration: configuration, delegate: hopLog, delegateQueue: nil)
    let shared = URLSession.shared

    func url(_ pathAndQuery: String) -> URL {
        URL(string: base + pathAndQuery + (pathAndQuery.contains("?") ? "&" : "?") + "marker=\(marker)")!
    }

    do {
        let (data, response) = try await shared.data(from: url("/get?greeting=hello%20bridge&n=1"))
        describe("shared-get", data, response, fields: ["Content-Type"])
    } catch { describe("shared-get", error) }

    do {
        var request = URLRequest(url: url("/post"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"name":"bridge","count":2}"#.utf8)
        let (data, response) = try await custom.data(for: request)
        describe("custom-post", data, response, fields: ["Content-Type"])
    } catch { describe("custom-post", error) }

    do {
        let (data, response) = try await custom.data(from: url("/response-headers?X-Bridge-Test=yes"))
        describe("custom-headers", data, response, fields: ["X-Bridge-Test", "Content-Type"])
    } catch { describe("custom-headers", error) }

    do {
        let (data, response) = try await custom.data(from: url("/redirect-to?url=%2Fanything%2Farrived%3Fmarker%3D\(marker)&status_code=302"))
        describe("custom-redirect", data, response)
        for hop in hopLog.taken { say("custom-redirect: hop \(hop)") }
    } catch { describe("custom-redirect", error) }

    do {
        let (data, response) = try await shared.data(from: url("/status/404"))
        describe("shared-404", data, response)
    } catch { describe("shared-404", error) }

    do {
        let request = URLRequest(url: url("/anything/door"))
        let (data, response) = try await VCR.data(for: request) { _ in
            throw URLError(.unsupportedURL)  // never called over the bridge: the test's cassette answers
        }
        describe("door", data, response, fields: ["Content-Type"])
    } catch { describe("door", error) }
}

func one(base: String, marker: String) async {
    do {
        let (data, response) = try await URLSession.shared.data(from: URL(string: base + "/anything/one?marker=\(marker)")!)
        describe("one", data, response)
    } catch { describe("one", error) }
}

func big(base: String) async {
    do {
        let (data, response) = try await URLSession.shared.data(from: URL(string: base + "/bytes/90000?seed=29")!)
        say("big-get: status \((response as? HTTPURLResponse)?.statusCode ?? -1), \(data.count) bytes")
    } catch { describe("big-get", error) }
    do {
        var request = URLRequest(url: URL(string: base + "/anything/big")!)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")  // else a form, to URLSession
        request.httpBody = Data(repeating: UInt8(ascii: "x"), count: 200_000)
        let (data, _) = try await URLSession.shared.data(for: request)
        let echoed = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["data"] as? String
        say("big-post: echoed \(echoed?.count ?? -1) bytes")
    } catch { describe("big-post", error) }
}

/// The upstream's answer to `url`, waited for on the server's connection thread.
func fetch(_ url: URL, keepingFields: Bool) -> (status: Int, body: String, cookies: Int) {
    let result = Locked<(Int, String, Int)>((-1, "no answer", 0))
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        defer { done.signal() }
        do {
            if keepingFields {
                let (data, response) = try await VCR.dataKeepingFields(for: URLRequest(url: url)) { _ in
                    throw URLError(.unsupportedURL)  // never called over the bridge
                }
                let cookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }.count
                result.withLock { $0 = (response.statusCode, String(decoding: data, as: UTF8.self), cookies) }
            } else {
                let (data, response) = try await URLSession.shared.data(from: url)
                let status = (response as? HTTPURLResponse)?.statusCode ?? -1
                result.withLock { $0 = (status, String(decoding: data, as: UTF8.self), 0) }
            }
        } catch {
            let error = error as NSError
            result.withLock { $0 = (-1, "error \(error.domain) \(error.code)", 0) }
        }
    }
    done.wait()
    return result.withLock { $0 }
}

/// A server under test: its answers depend on its upstream's.
func serve(base: String) -> Never {
    // As a server that stops on a signal must: a process launched with `Process` from a libdispatch thread starts with
    // SIGTERM and SIGINT blocked (VCRBridge.launch starts it with none blocked).
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGTERM)
    sigaddset(&signals, SIGINT)
    pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    do {
        let server = try LoopbackServer { request in
            let parts = URLComponents(string: request.target)
            let marker = parts?.queryItems?.first { $0.name == "marker" }?.value ?? "-"
            switch parts?.path {
            case "/summary":
                let upstream = fetch(URL(string: base + "/anything/summary?marker=\(marker)")!, keepingFields: false)
                let args = (try? JSONSerialization.jsonObject(with: Data(upstream.body.utf8)) as? [String: Any])?["args"]
                let echoed = (args as? [String: Any])?["marker"] as? String ?? upstream.body
                return .text(200, "summary: upstream \(upstream.status), marker \(echoed)")
            case "/cookies":
                let upstream = fetch(URL(string: base + "/cookies-pair")!, keepingFields: true)
                return .text(200, "cookies: upstream \(upstream.status), \(upstream.cookies) Set-Cookie")
            default:
                return .text(404, "no such page")
            }
        }
        say("listening \(server.port)")
        fflush(nil)
        while true { pause() }
    } catch {
        FileHandle.standardError.write(Data("bridge-child: \(error)\n".utf8))
        exit(1)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let connected = VCR.connectToBridge()
switch arguments.first {
case "connect":
    say("connected: \(connected)")
case "requests" where arguments.count == 3 && connected:
    await requests(base: arguments[1], marker: arguments[2])
case "big" where arguments.count == 2 && connected:
    await big(base: arguments[1])
case "serve" where arguments.count == 2 && connected:
    serve(base: arguments[1])
case "one" where arguments.count == 3 && connected:
    await one(base: arguments[1], marker: arguments[2])
default:
    FileHandle.standardError.write(Data("usage: bridge-child requests|one BASE MARKER | connect (connected: \(connected))\n".utf8))
    exit(1)
}
