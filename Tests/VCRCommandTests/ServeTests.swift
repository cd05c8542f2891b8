import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import HTTPVCR
import Testing

/// `vcr serve` as a user runs it: a subprocess on a free port, real clients, SIGTERM at the end.
@Suite struct ServeTests {
    static var replayTape: Tape {
        Tapes.tape(
            Tapes.exchange(chapter: 1, url: "https://api.example.com/v1/items?page=2", chunks: [#"{"items":[]}"#]),
            Tapes.exchange(chapter: 2, url: "https://api.example.com/v1/raw", status: 201, chunks: ["raw body"]),
            Tapes.exchange(chapter: 3, url: "https://api.example.com/v1/python", status: 202, chunks: ["from python"]),
            Tapes.exchange(chapter: 4, url: "https://api.example.com/v1/curl?q=1", status: 203, chunks: ["from curl"])
        )
    }

    @Test func replaysToURLSessionARawSocketAndPython() async throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "none"])
        defer { server.stop() }

        let url = try #require(URL(string: server.url.absoluteString + "/v1/items?page=2"))
        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == #"{"items":[]}"#)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "application/json")

        let raw = try RawClient.exchange(
            port: server.port, Data("GET /v1/raw HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        #expect(raw.hasPrefix("HTTP/1.1 201 "), "\(raw)")
        #expect(raw.hasSuffix("\r\n\r\nraw body"), "\(raw)")

        let python = try Self.python(server.url.absoluteString + "/v1/python")
        #expect(python == "202\nfrom python", "\(python)")

        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test func answersCurlFromTheCassetteAndAnUnknownRequestWithTheNoMatchMessage() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "never"])
        defer { server.stop() }

        let known = try Self.curl(server.url.absoluteString + "/v1/curl?q=1", in: folder)
        #expect(known.status == "203", "\(known)")
        #expect(known.body == "from curl", "\(known)")

        let unknown = try Self.curl(server.url.absoluteString + "/v1/nothing?q=2", in: folder)
        #expect(unknown.status == "500", "\(unknown)")
        #expect(unknown.body.contains("/v1/nothing?q=2"), "\(unknown)")
        #expect(unknown.body.contains("No recorded request matches"), "\(unknown)")
    }

    @Test func anUnknownRequestGets500WithTheNoMatchMessage() async throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "never"])
        defer { server.stop() }
        let url = try #require(URL(string: server.url.absoluteString + "/unknown?x=1"))
        let (data, response) = try await URLSession(configuration: .ephemeral).data(from: url)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 500)
        #expect(http.value(forHTTPHeaderField: "X-VCR-Error") == "no-match")
        let body = String(decoding: data, as: UTF8.self)
        #expect(body.contains("/unknown?x=1"), "\(body)")
        // Its users restart the command: the library's environment variable and setting are not theirs.
        #expect(body.contains("restart vcr serve with --record-mode new"), "\(body)")
        #expect(!body.contains("VCR_RECORD_MODE") && !body.contains("recordMode"), "\(body)")
    }

    /// A stand-in for a server answers every time, as stub servers do; `--repeats` says so explicitly.
    @Test(arguments: [[], ["--repeats"]])
    func repeatsAreOnByDefault(flags: [String]) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "none"] + flags)
        defer { server.stop() }
        for _ in 0..<3 {
            let answer = try RawClient.exchange(
                port: server.port, Data("GET /v1/raw HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
            #expect(answer.hasPrefix("HTTP/1.1 201 ") && answer.hasSuffix("\r\n\r\nraw body"), "\(answer)")
        }
    }

    @Test func noRepeatsAnswersEachRecordingOnce() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "none", "--no-repeats"])
        defer { server.stop() }
        let request = Data("GET /v1/raw HTTP/1.1\r\nConnection: close\r\n\r\n".utf8)
        let first = try RawClient.exchange(port: server.port, request)
        #expect(first.hasPrefix("HTTP/1.1 201 "), "\(first)")
        let second = try RawClient.exchange(port: server.port, request)
        #expect(second.hasPrefix("HTTP/1.1 500 ") && second.contains("X-VCR-Error: no-match"), "\(second)")
        #expect(second.contains("already played") && second.contains("restart vcr serve without --no-repeats"),
                "\(second)")
        #expect(!second.contains("allowsPlaybackRepeats"), "\(second)")
    }

    @Test func repeatsAndNoRepeatsTogetherAreAUsageError() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let result = try VCRTool.run("serve", path, "--port", "0", "--repeats", "--no-repeats")
        #expect(result.status == 2)
        #expect(result.stderr.contains("--repeats and --no-repeats cannot both be given"), "\(result)")
    }

    /// Records through `--upstream` (httpbin, started by scripts/test), saves on SIGTERM, then replays the same
    /// answer with no upstream to reach.
    @Test func recordsThroughTheUpstreamAndReplaysWithoutIt() async throws {
        guard let httpbin = ProcessInfo.processInfo.environment["HTTPBIN_URL"], !httpbin.isEmpty else {
            Issue.record("HTTPBIN_URL is not set: run the tests with scripts/test, which starts httpbin")
            return
        }
        let folder = try TemporaryFolder()
        let path = folder.file("recorded.json").path
        let session = URLSession(configuration: .ephemeral)

        let recording = try ServeProcess([path, "--port", "0", "--upstream", httpbin, "--record-mode", "once"])
        var request = URLRequest(url: try #require(URL(string: recording.url.absoluteString + "/anything/serve?n=1")))
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"from":"vcr serve"}"#.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (live, liveResponse) = try await session.data(for: request)
        #expect((liveResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: live, as: UTF8.self).contains("vcr serve"))
        let stopped = recording.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(FileManager.default.fileExists(atPath: path), "SIGTERM saves the cassette")

        // No upstream at all: matched by method, path and query, nothing to forward to.
        let replaying = try ServeProcess([path, "--port", "0", "--record-mode", "never"])
        defer { replaying.stop() }
        request.url = try #require(URL(string: replaying.url.absoluteString + "/anything/serve?n=1"))
        let (replayed, replayedResponse) = try await session.data(for: request)
        #expect((replayedResponse as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: replayed, as: UTF8.self))")
        #expect(replayed == live)
    }

    /// Two `Set-Cookie` from the upstream are two fields on the wire, on the tape, and replayed.
    @Test func twoSetCookieAreRecordedAndReplayedAsTwo() throws {
        let httpbin = try Self.httpbin()
        let folder = try TemporaryFolder()
        let path = folder.file("cookies.json").path
        let request = Data(("GET /response-headers?Set-Cookie=a%3D1%3B%20Expires%3DWed%2C%2021%20Oct%202015%2007%3A28"
            + "%3A00%20GMT&Set-Cookie=b%3D2 HTTP/1.1\r\nConnection: close\r\n\r\n").utf8)
        let expected = ["Set-Cookie: a=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "Set-Cookie: b=2"]

        let recording = try ServeProcess([path, "--port", "0", "--upstream", httpbin, "--record-mode", "once"])
        let live = try RawClient.exchange(port: recording.port, request)
        #expect(Self.fieldLines(live, named: "Set-Cookie") == expected, "\(live)")
        let stopped = recording.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let tape = try CassetteFile.read(at: URL(fileURLWithPath: path)).tape
        let recorded = try #require(tape.interactions.first?.response).headers.filter { $0.name == "Set-Cookie" }
        // Cookie values are secrets to the secure defaults: each field is filtered apart.
        let onTape = ["a=[FILTERED]; Expires=Wed, 21 Oct 2015 07:28:00 GMT", "b=[FILTERED]"]
        #expect(recorded.map(\.value) == onTape)

        let replaying = try ServeProcess([path, "--port", "0", "--record-mode", "none"])
        defer { replaying.stop() }
        let replayed = try RawClient.exchange(port: replaying.port, request)
        #expect(Self.fieldLines(replayed, named: "Set-Cookie") == onTape.map { "Set-Cookie: " + $0 }, "\(replayed)")
        withExtendedLifetime(folder) {}  // the cassette's folder, until the servers are done with it
    }

    #if canImport(FoundationNetworking)
    /// The upstream gets the client's fields and no others: none of the User-Agent, Accept, Accept-Encoding,
    /// Accept-Language or Connection that corelibs and libcurl would add. Host is the upstream's.
    @Test func theUpstreamGetsOnlyTheClientsFields() throws {
        let httpbin = try Self.httpbin()
        let folder = try TemporaryFolder()
        let server = try ServeProcess([folder.file("headers.json").path, "--port", "0", "--upstream", httpbin])
        defer { server.stop() }
        let answer = try RawClient.exchange(port: server.port, Data(
            "GET /headers HTTP/1.1\r\nHost: x\r\nX-Client: mine\r\nConnection: close\r\n\r\n".utf8))
        let body = try #require(answer.components(separatedBy: "\r\n\r\n").last)
        let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let fields = try #require(object?["headers"] as? [String: String], "\(answer)")
        #expect(Set(fields.keys) == ["Host", "X-Client"], "\(fields)")
        #expect(fields["X-Client"] == "mine")
    }
    #endif

    /// A redirect is recorded and answered as it is: the client follows it, back through the server.
    @Test func aRedirectGoesToTheClient() throws {
        let httpbin = try Self.httpbin()
        let folder = try TemporaryFolder()
        let server = try ServeProcess([folder.file("redirect.json").path, "--port", "0", "--upstream", httpbin])
        defer { server.stop() }
        let answer = try RawClient.exchange(
            port: server.port, Data("GET /redirect-to?url=/get HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
        #expect(answer.hasPrefix("HTTP/1.1 302 "), "\(answer)")
        #expect(Self.fieldLines(answer, named: "Location") == ["Location: /get"], "\(answer)")
    }

    /// The lines of `response`'s head that carry the field `name`, as they are on the wire.
    static func fieldLines(_ response: String, named name: String) -> [String] {
        let head = response.components(separatedBy: "\r\n\r\n").first ?? ""
        return head.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix(name.lowercased() + ":") }
    }

    /// httpbin's URL (scripts/with-httpbin starts it).
    static func httpbin() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["HTTPBIN_URL"], !url.isEmpty else {
            throw VCRTool.Failure(description: "HTTPBIN_URL is not set: run the tests with scripts/with-httpbin")
        }
        return url
    }

    @Test func hostileClientsGetErrorsAndTheNextClientIsServed() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let server = try ServeProcess([path, "--port", "0", "--record-mode", "never", "--read-timeout", "0.3"])
        defer { server.stop() }

        let garbage = try RawClient.exchange(port: server.port, Data("\u{1}\u{2}garbage\r\n\r\n".utf8))
        #expect(garbage.hasPrefix("HTTP/1.1 400 "), "\(garbage)")
        let bareLF = try RawClient.exchange(port: server.port, Data("GET / HTTP/1.1\nHost: x\n\n".utf8))
        #expect(bareLF.contains("X-VCR-Error: bareLineFeed"), "\(bareLF)")
        let oversized = try RawClient.exchange(
            port: server.port, Data(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 70_000)).utf8))
        #expect(oversized.hasPrefix("HTTP/1.1 431 "), "\(oversized)")
        let truncated = try RawClient.exchange(
            port: server.port, Data("POST /v1/raw HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc".utf8), closeWriting: true)
        #expect(truncated.hasPrefix("HTTP/1.1 400 ") && truncated.contains("truncated"), "\(truncated)")
        let started = Date()
        let silent = try RawClient.exchange(port: server.port, Data())
        #expect(silent.hasPrefix("HTTP/1.1 408 "), "\(silent)")
        #expect(Date().timeIntervalSince(started) < 3)

        let served = try RawClient.exchange(
            port: server.port, Data("GET /v1/raw HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
        #expect(served.hasPrefix("HTTP/1.1 201 "), "\(served)")
    }

    @Test func aPortInUseIsAnErrorNamingThePort() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Self.replayTape, "replay.json")
        let first = try ServeProcess([path, "--port", "0"])
        defer { first.stop() }
        let second = try VCRTool.run("serve", path, "--port", String(first.port))
        #expect(second.status == 2)
        #expect(second.stderr.contains("127.0.0.1:\(first.port)") && second.stderr.contains("in use"), "\(second)")
    }

    /// curl as a user runs it: the status and the body, written to files rather than a pipe (a pipe can leak into
    /// another test's child spawned at the same moment, and each would wait on the other's).
    static func curl(_ url: String, in folder: TemporaryFolder) throws -> (status: String, body: String) {
        let name = UUID().uuidString
        let bodyFile = folder.file(name + ".body")
        let statusFile = folder.file(name + ".status")
        FileManager.default.createFile(atPath: statusFile.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--silent", "--max-time", "20", "--output", bodyFile.path, "--write-out",
                             "%{http_code}", url]
        process.standardOutput = try FileHandle(forWritingTo: statusFile)
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "curl exited with \(process.terminationStatus)")
        return (
            String(decoding: try Data(contentsOf: statusFile), as: UTF8.self),
            String(decoding: (try? Data(contentsOf: bodyFile)) ?? Data(), as: UTF8.self)
        )
    }

    static func python(_ url: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sys, urllib.request
            r = urllib.request.urlopen(sys.argv[1])
            sys.stdout.write(str(r.status) + "\\n" + r.read().decode())
            """, url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A client on a bare socket: sends bytes as they are, reads until the server closes.
enum RawClient {
    static func exchange(port: UInt16, _ bytes: Data, closeWriting: Bool = false) throws -> String {
        let fd = Loopback.tcpSocket()
        guard fd >= 0 else { throw VCRTool.Failure(description: "socket failed") }
        defer { close(fd) }
        // A bound on the test, not an ordering: a server that never answers fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = Loopback.connect(fd, port: port)
        guard connected == 0 else { throw VCRTool.Failure(description: "connect to \(port) failed") }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if closeWriting { shutdown(fd, Int32(SHUT_WR)) }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
