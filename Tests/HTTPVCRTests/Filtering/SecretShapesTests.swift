import CassetteMutations
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Credentials known by their shape are filtered on recording wherever they stand, under any name, and the
    /// cassette still replays; ordinary identifiers are left alone.
    @Suite struct SecretShapesTests {
        let session = vcrSession()

        /// One fake credential of every shape (made up: none of them is live).
        static let credentials: [String: String] = [
            "GitHub token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
            "Google API key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "Stripe secret key": "sk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr",
            "AWS access key ID": "AKIA" + "IOSFODNN7EXAMPLE",
            "Slack token": "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp",
            "JWT": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJhZGEiLCJyb2xlIjoiYWRtaW4ifQ" + ".c2lnbmF0dXJlLXZhbHVlLWZvci10ZXN0cw",
        ]
        static let privateKey = """
            -----BEGIN RSA PRIVATE KEY-----
            MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu
            KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm
            -----END RSA PRIVATE KEY-----
            """
        /// What must stay as it is: ids, hashes, an ETag, a date.
        static let ordinary = [
            "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "9b2cf535f27731c974343645a3985328eb2ab1ea",
            "d41d8cd98f00b204e9800998ecf8427e", "2026-11-26T10:00:00Z", "order-1234567890",
        ]
        /// Words, versions and digests that start a vendor's prefix without being one.
        static let lookalikes = [
            "application/vnd.api+json; version=v1.0-beta", "Mozilla/5.0 (compatible; bot/2.1)", "API-Version",
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "pk_" + "test_" + "TYooMQauvdEDq54NiTphI7jx",
        ]

        /// Every form a value may take in a file: plain, percent-encoded, base64.
        func forms(of value: String) -> [String] {
            [
                value,
                value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value,
                Data(value.utf8).base64EncodedString(),
            ]
        }

        @Test func everyShapeUnderNamesThatSayNothingIsFilteredWhereverItStandsAndStillReplays() async throws {
            let folder = try TemporaryFolder()
            let c = Self.credentials
            // Query parameters, headers, a JSON body at depth and a form body, under names that say nothing; httpbin's
            // /anything echoes all of it back in the response body.
            var query = URLComponents(url: try HTTPBin.url("/anything/shapes"), resolvingAgainstBaseURL: false)!
            query.queryItems = [
                URLQueryItem(name: "k", value: c["Google API key"]), URLQueryItem(name: "v", value: c["Stripe secret key"]),
                URLQueryItem(name: "id", value: Self.ordinary[0]),
            ]
            var headers = URLRequest(url: query.url!)
            headers.setValue(c["GitHub token"], forHTTPHeaderField: "X-Client")
            headers.setValue(c["JWT"], forHTTPHeaderField: "X-Session")
            headers.setValue(Self.ordinary[1], forHTTPHeaderField: "X-Commit")
            var json = URLRequest(url: try HTTPBin.url("/anything/json"))
            json.httpMethod = "POST"
            json.setValue("application/json", forHTTPHeaderField: "Content-Type")
            json.httpBody = try JSONSerialization.data(withJSONObject: [
                "deployment": ["targets": [["region": "eu", "identity": c["AWS access key ID"]!]]],
                "key_pem": Self.privateKey, "etag": Self.ordinary[2], "at": Self.ordinary[3],
            ], options: [.sortedKeys])
            var form = URLRequest(url: try HTTPBin.url("/anything/form"))
            form.httpMethod = "POST"
            form.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            form.httpBody = Data("note=\(c["Slack token"]!)&order=\(Self.ordinary[4])".utf8)
            let etag = try HTTPBin.url("/response-headers?ETag=%22\(Self.ordinary[1])%22&X-Request-Id=\(Self.ordinary[0])")

            func run() async throws -> [Int] {
                var statuses: [Int] = []
                for request in [headers, json, form, URLRequest(url: etag)] {
                    let (_, response) = try await session.data(for: request)
                    statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
                }
                return statuses
            }
            try await holdingCassettes {
                let recorded = try await withCassette("shapes", in: folder.path) { _ in try await run() }
                #expect(recorded == [200, 200, 200, 200])
                #expect(VCR.takeFailures().isEmpty, "recorded and saved: nothing was refused")
                let file = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("shapes.json")), as: UTF8.self)
                for (shape, value) in c {
                    for form in forms(of: value) { #expect(!file.contains(form), "\(shape) in the file") }
                }
                #expect(!file.contains("MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"))
                #expect(!file.contains("BEGIN RSA PRIVATE KEY"), "the block goes whole")
                for value in Self.ordinary { #expect(file.contains(value), "\(value) is no secret") }
                #expect(file.contains("[FILTERED]"))
                // And the cassette replays, offline.
                let before = try HTTPBin.settledRequestCount()
                let replayed = try await withCassette("shapes", in: folder.path, { $0.recordMode = .never }) { cassette in
                    let statuses = try await run()
                    #expect(cassette.allPlayed)
                    return statuses
                }
                #expect(replayed == recorded)
                #expect(try HTTPBin.requests(since: before).filter { $0.contains("/anything/") || $0.contains("response-headers") }.isEmpty)
            }
        }

        @Test func aValueAFilterRemovesIsFilteredWhereverItComesBack() async throws {
            let folder = try TemporaryFolder()
            let token = "tk-" + UUID().uuidString.prefix(12)
            // The token is a parameter of its own, and inside another one's value; then the hop goes where that says.
            let url = try HTTPBin.url("/redirect-to?url=%2Fanything%2Fecho%3Ftoken%3D\(token)&token=\(token)")
            try await holdingCassettes {
                try await withCassette("removed", in: folder.path, {
                    $0.queryParametersFilter = .replacing(["token": nil])
                }) { _ in _ = try await session.data(from: url) }
                let file = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("removed.json")), as: UTF8.self)
                #expect(!file.contains(token), "the removed value's echoes go too")
                #expect(file.contains("/anything/echo"))
            }
        }

        @Test func everyCookieOfACombinedSetCookieIsFiltered() async throws {
            let folder = try TemporaryFolder()
            let (first, second) = ("first-" + UUID().uuidString.prefix(8), "second-" + UUID().uuidString.prefix(8))
            let url = try HTTPBin.url("/response-headers?Set-Cookie=a%3D\(first)%3B%20Path%3D%2F&Set-Cookie=b%3D\(second)")
            try await holdingCassettes {
                try await withCassette("cookies", in: folder.path) { _ in _ = try await session.data(from: url) }
                let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("cookies.json")).tape
                let file = String(decoding: try CassetteFile.encode(tape, as: .json), as: UTF8.self)
                #expect(!file.contains(first))
                #expect(!file.contains(second), "the second cookie of the field too")
                let setCookie = tape.interactions.first?.response?.headers
                    .filter { $0.name.equalsIgnoringASCIICase("Set-Cookie") }.map(\.value).joined(separator: ", ") ?? ""
                #expect(setCookie.contains("a=[FILTERED]") && setCookie.contains("b=[FILTERED]"))
                #expect(setCookie.contains("Path=/"), "attributes stay")
            }
        }

        @Test func combinedSetCookieFieldsComeApartButDatesStayWhole() {
            var removed = SecretValues()
            let value = "a=one1one; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/, b=two2two, c=three3; HttpOnly"
            let filtered = SecretValues.filteringCookies(value, removed: &removed)
            #expect(filtered == "a=[FILTERED]; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/, b=[FILTERED], c=[FILTERED]; HttpOnly")
            #expect(removed.replacingEchoes(in: "one1one two2two three3") == "[FILTERED] [FILTERED] [FILTERED]")
            #expect(SecretValues.filteringCookies("a=x,y; b=2", removed: &removed) == "a=[FILTERED]; b=[FILTERED]",
                    "a comma inside a Cookie's value is no new cookie")
        }

        @Test func appidAndOtherAPIsKeyNamesAreSecrets() {
            for name in ["appid", "app_key", "api_sig", "Ocp-Apim-Subscription-Key", "consumer_key", "credentials",
                         "DD-Application-Key", "x-functions-key", "passcode"] {
                #expect(SecretNames.isSecret(key: name), "\(name)")
            }
            for name in ["app_name", "appearance", "id", "keyboard", "signup", "design", "etag", "commit"] {
                #expect(!SecretNames.isSecret(key: name), "\(name)")
            }
        }

        @Test func anUnmatchedRequestsMessagePrintsNoFilteredValue() async throws {
            let folder = try TemporaryFolder()
            let appid = "0123456789abcdef0123456789abcdef"
            let key = Self.credentials["Google API key"]!
            let url = try HTTPBin.url("/data/2.5/weather?q=London&appid=\(appid)&k=\(key)")
            try await holdingCassettes {
                try await withCassette("weather", in: folder.path) { _ in
                    _ = try await session.data(from: try HTTPBin.url("/data/2.5/weather?q=Paris&appid=\(appid)&k=\(key)"))
                }
                try await withCassette("weather", in: folder.path, { $0.recordMode = .never }) { _ in
                    _ = try? await session.data(from: url)
                }
                let failure = try #require(VCR.takeFailures().first)
                #expect(failure.code == .noMatch)
                #expect(!failure.message.contains(appid))
                #expect(!failure.message.contains(key))
                #expect(failure.message.contains("q=London"))
                let file = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("weather.json")), as: UTF8.self)
                #expect(!file.contains(appid) && !file.contains(key))
            }
        }

        @Test func aRequestNamedInAnyMessageShowsNoSecret() {
            var request = URLRequest(url: URL(string: "https://u:p4ssw0rd@api.example.com/v1?appid=0123456789abcdef&k=\(Self.credentials["Google API key"]!)&q=x")!)
            request.httpMethod = "POST"
            let shown = Mismatch.describe(request)
            #expect(shown.hasPrefix("POST https://"))
            #expect(!shown.contains("p4ssw0rd") && !shown.contains("0123456789abcdef") && !shown.contains("AIza"))
            #expect(shown.contains("q=x"))
        }

        /// `vcr lint` and the recording filters find the same secrets by shape: one list.
        @Test func lintAndTheRecordingFiltersFindTheSameShapes() {
            let texts = Array(Self.credentials.values) + [
                Self.privateKey, "Authorization: Bearer abc123def456ghi789", "prose about Bearer authentication",
                #"{"pem":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
            ] + Self.ordinary + Self.lookalikes
            let filter = SecretFilter(configuration: VCRConfiguration())
            for text in texts {
                var removed = SecretValues()
                filter.takeShapedSecrets(in: text, into: &removed)
                let filtered = removed.replacingEchoes(in: text)
                let found = SecretScanner().patternMatches(in: text)
                let left = SecretScanner().patternMatches(in: filtered)
                #expect(left.isEmpty, "the filters leave nothing lint finds: \(filtered)")
                #expect(found.isEmpty == (filtered == text), "lint finds what the filters take: \(text)")
            }
        }

        /// Ordinary identifiers match no shape: none of the project's committed cassettes and fixtures would change.
        @Test func noCommittedCassetteOrFixtureHoldsAShape() throws {
            var files: [URL] = []
            for folder in ["Cassettes.bundle", "Tests/Fixtures", "Docs/Examples/AsyncHTTPClient/Cassettes.bundle",
                           "Docs/Examples/OpenAPI/Cassettes.bundle"] {
                let root = packageRoot.appendingPathComponent(folder)
                let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
                while let url = walker?.nextObject() as? URL {
                    if ["json", "plist", "har", "yml", "yaml"].contains(url.pathExtension) { files.append(url) }
                }
            }
            #expect(files.count > 20)
            var matched: [String] = []
            for file in files {
                let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
                matched += SecretShapes.matches(in: text, isPlaceholder: { SecretNames.isPlaceholder($0) })
                    .map { "\(file.lastPathComponent): \($0.shape)" }
            }
            #expect(matched.isEmpty, "false positives: \(matched)")
        }

        /// Ordinary identifiers in bulk match no shape, the vendors' included: UUIDs, hex and base64 digests,
        /// timestamps, numeric and prefixed ids, ETags, versions. Made at random (the same on every run) so that
        /// every prefix a vendor uses has its chances.
        @Test func ordinaryIdsHashesUUIDsAndTimestampsMatchNoShape() {
            var random = SplitMix64(seed: 4_141)
            func bytes(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }) }
            func hex(_ count: Int) -> String { bytes(count).map { String(format: "%02x", $0) }.joined() }
            var texts = Self.ordinary + Self.lookalikes
            for number in 0..<3_000 {
                let uuid = UUID().uuidString
                let seconds = 1_700_000_000 + random.below(100_000_000)
                let date = Date(timeIntervalSince1970: TimeInterval(seconds))
                let base64 = bytes(random.pick([16, 20, 32, 48])).base64EncodedString()
                texts += [
                    uuid, uuid.lowercased(), hex(16), hex(20), hex(32), hex(32).uppercased(), base64,
                    base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
                    ISO8601DateFormatter().string(from: date), "\(seconds)", "\(seconds)\(random.below(1000))",
                    "W/\"\(hex(8))\"", "order-\(number)\(random.below(1_000_000))", "v\(number % 4).\(number % 10)-rc\(number % 3)",
                    "https://api.example.com/v1/items/\(uuid)?page=\(number)&sig_version=\(hex(4))",
                ]
            }
            let matched = texts.flatMap { text in
                SecretShapes.matches(in: text, isPlaceholder: { _ in false }).map { "\($0.shape): \(text)" }
            }
            #expect(texts.count > 40_000)
            #expect(matched.isEmpty, "false positives: \(matched.prefix(10))")
        }
    }
}
