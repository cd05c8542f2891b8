import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// `sensitiveData` as Docs/Filters.md offers it for a value the secure defaults filter ("the file holds the
    /// placeholder, the test gets the value"), followed as a user would: recorded against httpbin, read back from
    /// the file, replayed offline.
    @Suite struct SensitiveDataTests {
        let session = vcrSession(timeout: 10)

        /// Values nobody else would send, under names the secure defaults filter.
        let key = "key-" + UUID().uuidString.prefix(13)
        let appID = "app-" + UUID().uuidString.suffix(12)

        func configure(_ configuration: inout VCRConfiguration) {
            let (key, appID) = (key, appID)
            configuration.sensitiveData = ["<API_KEY>": { key }, "<APP_ID>": { appID }]
        }

        /// Every place the values go: a secret-named header and query parameter, a bearer token, a cookie, JSON and
        /// form bodies, a response header, and a redirect hop, each echoed back by httpbin.
        func requests() throws -> [URLRequest] {
            var echo = URLRequest(url: try HTTPBin.url("/anything/echo?appid=\(appID)&units=metric"))
            echo.setValue(key, forHTTPHeaderField: "X-Api-Key")
            echo.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
            echo.setValue("session=\(key); theme=darkmode", forHTTPHeaderField: "Cookie")
            var json = URLRequest(url: try HTTPBin.url("/anything/json"))
            json.httpMethod = "POST"
            json.setValue("application/json", forHTTPHeaderField: "Content-Type")
            json.httpBody = Data(#"{"user":"ada","api_key":"\#(key)","client":{"appid":"\#(appID)"}}"#.utf8)
            var form = URLRequest(url: try HTTPBin.url("/anything/form"))
            form.httpMethod = "POST"
            form.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            form.httpBody = Data("user=ada&client_secret=\(key)".utf8)
            let header = URLRequest(url: try HTTPBin.url("/response-headers?X-Api-Key=\(key)"))
            let hop = URLRequest(url: try HTTPBin.url("/redirect-to?url=%2Fanything%2Fhop%3Fappid%3D\(appID)"))
            return [echo, json, form, header, hop]
        }

        /// What the app reads from each answer: the echoed values, as JSON paths, and a response header.
        func received() async throws -> [String] {
            var seen: [String] = []
            for request in try requests() {
                let (data, response) = try await session.data(for: request)
                let echoed = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
                let headers = echoed["headers"] as? [String: String] ?? [:]
                let args = echoed["args"] as? [String: String] ?? [:]
                let json = echoed["json"] as? [String: Any] ?? [:]
                let form = echoed["form"] as? [String: String] ?? [:]
                seen += [
                    headers["X-Api-Key"], headers["Authorization"], headers["Cookie"], args["appid"],
                    echoed["url"] as? String, json["api_key"] as? String,
                    (json["client"] as? [String: String])?["appid"], form["client_secret"],
                    echoed["X-Api-Key"] as? String,
                    (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Api-Key"),
                    (response as? HTTPURLResponse)?.url?.absoluteString,
                ].compactMap { $0 }
            }
            return seen
        }

        @Test func aPlaceholderWinsOverTheSecureDefaultsAndTheTestGetsTheValueOffline() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("placeholders.json")
            try await holdingCassettes {
                let recorded = try await withCassette("placeholders", in: folder.path, configure) { _ in
                    try await received()
                }
                #expect(recorded.contains(key) && recorded.contains(appID), "recording hands the app the real values")

                let bytes = try Data(contentsOf: file)
                for value in [key, appID] {
                    for form in [value, Data(value.utf8).base64EncodedString()] {
                        #expect(bytes.range(of: Data(form.utf8)) == nil, "\(form) is in the file")
                    }
                }
                let tape = try CassetteFile.read(at: file).tape
                let echo = tape.interactions[0]
                #expect(echo.request.headers[field: "X-Api-Key"] == "<API_KEY>")
                #expect(echo.request.headers[field: "Authorization"] == "Bearer <API_KEY>")
                #expect(echo.request.headers[field: "Cookie"] == "session=<API_KEY>; theme=[FILTERED]")
                #expect(echo.request.url.contains("appid=%3CAPP_ID%3E&units=metric"))
                let answer = try #require(try JSONSerialization.jsonObject(with: echo.body) as? [String: Any])
                #expect((answer["args"] as? [String: String])?["appid"] == "<APP_ID>", "not [FILTERED]")
                #expect((answer["headers"] as? [String: String])?["X-Api-Key"] == "<API_KEY>")
                #expect((answer["headers"] as? [String: String])?["Cookie"] == "session=<API_KEY>; theme=[FILTERED]")
                let json = String(decoding: tape.interactions[1].request.body ?? Data(), as: UTF8.self)
                #expect(json == #"{"user":"ada","api_key":"<API_KEY>","client":{"appid":"<APP_ID>"}}"#)
                let form = String(decoding: tape.interactions[2].request.body ?? Data(), as: UTF8.self)
                #expect(form == "user=ada&client_secret=<API_KEY>")
                #expect(tape.interactions[3].response?.headers[field: "X-Api-Key"] == "<API_KEY>")
                let hop = try #require(tape.interactions[4].redirects.first)
                #expect(hop.response.headers[field: "Location"] == "/anything/hop?appid=%3CAPP_ID%3E")
                #expect(hop.request.url.hasSuffix("/anything/hop?appid=%3CAPP_ID%3E"))
                // The placeholders are no finding: the file was saved.
                #expect(VCR.takeFailures().isEmpty)

                let replayed = try await replayOffline("placeholders", in: folder.url, configure) { try await received() }
                // The named values come back; the cookie no placeholder names stays filtered.
                let expected = recorded.map { $0.replacingOccurrences(of: "darkmode", with: "[FILTERED]") }
                #expect(replayed == expected, "replay gives the app the values it got recording, not [FILTERED]")
            }
        }

        @Test func aCassetteRecordedWhenTheDefaultsWonStillReplays() async throws {
            let folder = try TemporaryFolder()
            let url = try HTTPBin.url("/anything/earlier?appid=\(appID)&units=metric")
            try await holdingCassettes {
                // Taped as before placeholders won: `appid=[FILTERED]` (here, the value was not set).
                try await withCassette("earlier", in: folder.path, { $0.sensitiveData = ["<APP_ID>": { nil }] }) { _ in
                    _ = try await session.data(from: url)
                }
                let file = folder.url.appendingPathComponent("earlier.json")
                #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("appid=%5BFILTERED%5D"))
                let replayed = try await replayOffline("earlier", in: folder.url, configure) {
                    try await statuses(of: [URLRequest(url: url)], through: session)
                }
                #expect(replayed == [200])
            }
        }

        @Test func oneValueIsWrittenAsOnePlaceholderWhicheverOrderTheDictionaryHas() {
            var configuration = VCRConfiguration()
            configuration.sensitiveData = ["<B>": { "same-value" }, "<A>": { "same-value" }, "<C>": { "other-value" }]
            let sensitive = SensitiveData(configuration)
            #expect(sensitive.hiding("same-value other-value") == "<A> <C>")
            #expect(sensitive.revealing("<A> <C>") == "same-value other-value")
            #expect(sensitive.placeholders == ["<A>", "<C>"])
        }

        @Test func aPlaceholderWhoseValueIsUnsetIsFilteredAsAnyValueSoCIStillMatches() throws {
            var recording = VCRConfiguration()
            recording.sensitiveData = ["<APP_ID>": { "app-0123456789" }]
            var unset = VCRConfiguration()
            unset.sensitiveData = ["<APP_ID>": { nil }]
            let live = URLRequest(url: try #require(URL(string: "https://api.example.com/w?appid=some-other-key")))
            let original = URLRequest(url: try #require(URL(string: "https://api.example.com/w?appid=app-0123456789")))
            let taped = try #require(RequestFilter.filter(original, with: recording))
            #expect(taped.url?.query == "appid=%3CAPP_ID%3E")
            // In CI the value is not set: the live request and the tape's, filtered again, meet at [FILTERED].
            let filteredLive = try #require(RequestFilter.filter(live, with: unset))
            let refiltered = RequestFilter.filterIgnoringBeforeRecordRequest(taped, with: unset)
            #expect(filteredLive.url == refiltered.url)
            #expect(filteredLive.url?.query == "appid=%5BFILTERED%5D")
        }
    }
}
