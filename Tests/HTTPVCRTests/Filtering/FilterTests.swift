import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Each filter, recorded against httpbin: the secret must not be anywhere in the file on disk (base64 bodies
    /// decoded too), and the filtered cassette must still replay.
    @Suite struct FilterTests {
        let session = vcrSession()

        /// Fails when `secret` occurs in the file's bytes or in any base64 body it holds.
        func expectAbsent(_ secret: String, from file: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in \(file.lastPathComponent)", sourceLocation: sourceLocation)
            let (tape, _) = try CassetteFile.read(at: file)
            for interaction in tape.interactions {
                let bodies = [interaction.request.body ?? Data(), interaction.body]
                    + interaction.redirects.map { $0.request.body ?? Data() }
                for body in bodies {
                    #expect(body.range(of: Data(secret.utf8)) == nil, "\(secret) is in a body", sourceLocation: sourceLocation)
                }
            }
        }

        /// Records `body` into a fresh cassette, checks the secret is not on disk, then replays it.
        func recordAndReplay<T: Equatable>(
            _ name: String,
            secret: String,
            _ configure: @escaping (inout VCRConfiguration) -> Void,
            _ body: () async throws -> T
        ) async throws -> (recorded: T, replayed: T, tape: Tape) {
            try await holdingCassettes { try await recordAndReplayHeld(name, secret: secret, configure, body) }
        }

        private func recordAndReplayHeld<T: Equatable>(
            _ name: String,
            secret: String,
            _ configure: @escaping (inout VCRConfiguration) -> Void,
            _ body: () async throws -> T
        ) async throws -> (recorded: T, replayed: T, tape: Tape) {
            let folder = try TemporaryFolder()
            let recorded = try await withCassette(name, in: folder.path, configure) { _ in try await body() }
            let file = folder.url.appendingPathComponent(name + ".json")
            try expectAbsent(secret, from: file)
            let before = try HTTPBin.settledRequestCount()
            let replayed = try await withCassette(name, in: folder.path, configure) { cassette in
                let result = try await body()
                #expect(cassette.allPlayed)
                return result
            }
            let tape = try CassetteFile.read(at: file).tape
            let sent = try HTTPBin.requests(since: before, to: HTTPBin.targets(of: tape))
            #expect(sent.isEmpty, "replay reached the server: \(sent)")
            return (recorded, replayed, tape)
        }

        @Test func querySecretsAreFilteredThroughRedirects() async throws {
            let secret = "qs-\(UUID().uuidString)"
            let url = try HTTPBin.url("/redirect-to?url=%2Fget%3Ftoken%3D\(secret)&token=\(secret)")
            let result = try await recordAndReplay("query", secret: secret, {
                $0.queryParametersFilter = .replacing(["token": "[FILTERED]", "url": "[FILTERED]"])
                $0.responseBodyFilter = .replacing(["token": "[FILTERED]", "url": "[FILTERED]"])
            }) {
                let (data, response) = try await session.data(from: url)
                return [response.url?.path ?? "", (data.json?["args"] as? [String: String])?["token"] ?? ""]
            }
            #expect(result.recorded == ["/get", secret], "the code under test got the real response while recording")
            #expect(result.replayed == ["/get", "[FILTERED]"], "replay returns the filtered response")
            let hop = try #require(result.tape.interactions.first?.redirects.first)
            #expect(hop.response.headers[field: "Location"] == "/get?token=%5BFILTERED%5D")
        }

        @Test func tokensNestedInJSONArraysAreRemoved() async throws {
            let secret = "tok-\(UUID().uuidString)"
            var request = URLRequest(url: try HTTPBin.url("/anything/session"))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"items":[{"id":1,"token":"\#(secret)"},{"id":2,"token":"\#(secret)"}]}"#.utf8)
            let result = try await recordAndReplay("json", secret: secret, {
                $0.postBodyFilter = .replacing(["token": nil])
                $0.responseBodyFilter = .replacing(["token": nil, "data": nil])
                $0.matchers = [.method, .path, .body]
            }) {
                let data = try await session.data(for: request).0
                return ((data.json?["json"] as? [String: Any])?["items"] as? [[String: Any]])?.map { $0.keys.sorted() } ?? []
            }
            #expect(result.recorded == [["id", "token"], ["id", "token"]])
            #expect(result.replayed == [["id"], ["id"]])
        }

        @Test func formPasswordsAreReplaced() async throws {
            let secret = "pw-\(UUID().uuidString)"
            var request = URLRequest(url: try HTTPBin.url("/post"))
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data("user=ada&password=\(secret)".utf8)
            let result = try await recordAndReplay("form", secret: secret, {
                $0.postBodyFilter = .replacing(["password": "pwd"])
                $0.responseBodyFilter = .replacing(["password": "pwd"])
                $0.matchers = [.method, .path, .body]
            }) {
                (try await session.data(for: request).0.json?["form"] as? [String: String]) ?? [:]
            }
            #expect(result.replayed == ["user": "ada", "password": "pwd"])
            #expect(result.tape.interactions[0].request.body == Data("user=ada&password=pwd".utf8))
        }

        @Test func authorizationIsFilteredWithNoConfigurationAndStillMatches() async throws {
            let secret = "Bearer \(UUID().uuidString)"
            var request = URLRequest(url: try HTTPBin.url("/uuid"))
            request.setValue(secret, forHTTPHeaderField: "Authorization")
            request.setValue("session=\(secret)", forHTTPHeaderField: "Cookie")
            let result = try await recordAndReplay("authorization", secret: secret, {
                $0.matchers = [.method, .path, .headers]
            }) { try await session.data(for: request).0 }
            #expect(result.replayed == result.recorded)
            let headers = result.tape.interactions[0].request.headers
            #expect(headers[field: "Authorization"] == VCRConfiguration.filteredPlaceholder)
            #expect(headers[field: "Cookie"] == "session=[FILTERED]")  // cookie names stay
        }

        @Test func secureDefaultsCanBeTurnedOff() async throws {
            let folder = try TemporaryFolder()
            var request = URLRequest(url: try HTTPBin.url("/uuid"))
            request.setValue("Basic kept", forHTTPHeaderField: "Authorization")
            try await withCassette("opt-out", in: folder.path, {
                $0.secureHeaders = []
                $0.filtersSecrets = false
                $0.checksSecretsOnSave = false
            }) { _ in
                _ = try await session.data(for: request)
            }
            let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("opt-out.json"))
            #expect(tape.interactions[0].request.headers[field: "Authorization"] == "Basic kept")
        }

        @Test func gzipJSONResponsesAreFilteredAndStayConsistent() async throws {
            let secret = "gz-\(UUID().uuidString)"
            var request = URLRequest(url: try HTTPBin.url("/gzip"))
            request.setValue(secret, forHTTPHeaderField: "X-Secret-Token")
            let result = try await recordAndReplay("gzip", secret: secret, {
                $0.headersFilter = .replacing(["X-Secret-Token": nil])
                $0.responseBodyFilter = .replacing(["X-Secret-Token": nil])
            }) { try await session.data(for: request).0 }
            #expect(result.recorded.json?["gzipped"] as? Bool == true)
            #expect(result.replayed.json?["gzipped"] as? Bool == true)
            #expect((result.replayed.json?["headers"] as? [String: String])?["X-Secret-Token"] == nil)
            let response = try #require(result.tape.interactions.first?.response)
            #expect(response.headers[field: "Content-Encoding"] == nil)
            #expect(response.headers[field: "Content-Length"] == String(result.tape.interactions[0].body.count))
        }

        @Test func beforeRecordRequestReturningNilLetsTheRequestThroughUnrecorded() async throws {
            try await holdingCassettes { try await ignoredRequestsGoThrough() }
        }

        private func ignoredRequestsGoThrough() async throws {
            let folder = try TemporaryFolder()
            let ignored = try HTTPBin.url("/get?ignored=\(UUID().uuidString)")
            let kept = try HTTPBin.url("/get?kept=1")
            try await withCassette("ignored", in: folder.path, {
                $0.beforeRecordRequest = { $0.url?.query?.hasPrefix("ignored") == true ? nil : $0 }
            }) { _ in
                _ = try await session.data(from: ignored)
                _ = try await session.data(from: kept)
            }
            let file = folder.url.appendingPathComponent("ignored.json")
            try expectAbsent("ignored=", from: file)
            #expect(try CassetteFile.read(at: file).tape.interactions.map(\.request.url) == [kept.absoluteString])
            // Replaying: the ignored request still goes to the network, even though the cassette is protected.
            let before = try HTTPBin.settledRequestCount()
            try await withCassette("ignored", in: folder.path, {
                $0.beforeRecordRequest = { $0.url?.query?.hasPrefix("ignored") == true ? nil : $0 }
            }) { cassette in
                #expect(cassette.isWriteProtected)
                _ = try await session.data(from: ignored)
            }
            #expect(try HTTPBin.waitForRequestCount(atLeast: before + 1) >= before + 1)
        }

        @Test func beforeRecordResponseCanDropOrRewriteAResponse() async throws {
            let folder = try TemporaryFolder()
            try await withCassette("responses", in: folder.path, {
                $0.beforeRecordResponse = { request, response, body in
                    if request.url?.path == "/uuid" { return nil }
                    return (response, Data("rewritten".utf8))
                }
            }) { _ in
                _ = try await session.data(from: try HTTPBin.url("/uuid"))
                _ = try await session.data(from: try HTTPBin.url("/get"))
            }
            let (tape, _) = try CassetteFile.read(at: folder.url.appendingPathComponent("responses.json"))
            #expect(tape.interactions.map { URL(string: $0.request.url)?.path } == ["/get"])
            #expect(tape.interactions[0].body == Data("rewritten".utf8))
        }

        @Test func pathAndHeaderFiltersApplyToMatchingAndRecording() async throws {
            let result = try await recordAndReplay("path", secret: "alex", {
                $0.pathFilter = { $0.url!.path.replacingOccurrences(of: "alex", with: "bob") }
                $0.headersFilter = .custom { _, headers in headers["X-User"] = nil }
                $0.responseBodyFilter = .custom { _, _, body in
                    Data(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "alex", with: "bob").utf8)
                }
                $0.matchers = [.method, .path, .headers]
            }) {
                var request = URLRequest(url: try HTTPBin.url("/anything/alex"))
                request.setValue("alex", forHTTPHeaderField: "X-User")
                return try await session.data(for: request).0.json?["url"] as? String ?? ""
            }
            #expect(result.recorded.hasSuffix("/anything/alex"))
            #expect(result.replayed.hasSuffix("/anything/bob"))
        }
    }

    /// Filters on odd input never crash and leave what they cannot read alone.
    @Suite struct FilterEdgeCaseTests {
        @Test func oddBodiesAreLeftAloneOrFilteredSafely() {
            var configuration = VCRConfiguration()
            configuration.postBodyFilter = .replacing(["password": "x"])
            let bodies: [(String?, Data)] = [
                ("application/json", Data()),
                ("application/json", Data("{not json".utf8)),
                ("application/json", Data([0xFF, 0xFE, 0x00, 0x01])),
                ("application/x-www-form-urlencoded", Data([0xC3, 0x28])),
                ("application/json", Data(("{\"password\":\"p\",\"pad\":\"" + String(repeating: "a", count: 3_000_000) + "\"}").utf8)),
            ]
            for (contentType, body) in bodies {
                var request = URLRequest(url: URL(string: "http://h/p")!)
                request.httpMethod = "POST"
                request.setValue(contentType, forHTTPHeaderField: "Content-Type")
                request.httpBody = body
                let filtered = RequestFilter.filter(request, with: configuration)
                if body.count > 1_000_000 {
                    #expect(filtered?.httpBody?.range(of: Data(#""password":"x""#.utf8)) != nil)
                } else {
                    #expect(filtered?.httpBody == (body.isEmpty ? body : body))
                }
            }
        }

        @Test func filteredBodiesKeepTheRecordedChunkBoundaries() {
            let chunks = [Data(#"{"token":"#.utf8), Data(#""s3cr3t","n":"#.utf8), Data("1}".utf8)]
            var configuration = VCRConfiguration()
            configuration.responseBodyFilter = .replacing(["token": "[FILTERED]"])
            let response = HTTPURLResponse(
                url: URL(string: "http://h/t")!, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "application/json", "Content-Length": "27"]
            )!
            let outcome = ResponseFilter.filter(
                response: response, chunks: chunks, request: URLRequest(url: URL(string: "http://h/t")!),
                configuration: configuration
            )
            let filtered = outcome?.chunks ?? []
            let expected = Data(#"{"token":"[FILTERED]","n":1}"#.utf8)
            #expect(filtered.reduce(Data(), +) == expected)
            #expect(filtered.map(\.count).dropLast() == chunks.map(\.count).dropLast(), "the boundaries stay where they were")
            #expect(outcome?.response.headers[field: "Content-Length"] == String(expected.count))
        }

        @Test func errorFailingURLsGoThroughTheQueryFilter() {
            var configuration = VCRConfiguration()
            configuration.queryParametersFilter = .replacing(["token": "[FILTERED]"])
            let url = "http://h/slow?token=s3cr3t"
            let error = URLError(.timedOut, userInfo: [
                NSURLErrorFailingURLErrorKey: URL(string: url)!, "NSErrorFailingURLStringKey": url,
            ])
            let recorded = ResponseFilter.filterError(
                error, request: URLRequest(url: URL(string: url)!), configuration: configuration
            )
            #expect(recorded.code == NSURLErrorTimedOut)
            #expect(!recorded.userInfo.values.contains { $0.contains("s3cr3t") }, "\(recorded.userInfo)")
        }

        @Test func repeatedQueryKeysKeepTheirOrderUnlessRemoved() {
            var configuration = VCRConfiguration()
            configuration.queryParametersFilter = .replacing(["token": nil, "sig": "S"])
            let request = URLRequest(url: URL(string: "http://h/p?a=1&token=t1&a=2&sig=x&token=t2&a=3")!)
            #expect(RequestFilter.filter(request, with: configuration)?.url?.query == "a=1&a=2&sig=S&a=3")
            configuration.queryParametersFilter = .custom { _, parameters in parameters["b"] = "new" }
            let custom = RequestFilter.filter(URLRequest(url: URL(string: "http://h/p?a=1&a=2")!), with: configuration)
            #expect(custom?.url?.query == "a=1&a=2&b=new")
        }
    }
}
