import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// Secure by default: recorded against httpbin with no filter configured, requests and responses carrying every
    /// kind of secret (and servers echoing them) leave none in the file, in any form, and the cassette still
    /// replays offline.
    @Suite struct SecureDefaultsTests {
        let session = vcrSession(timeout: 10)

        /// A secret nobody else would write, long enough to be chased where it comes back.
        static func secret(_ name: String) -> String { "\(UUID().uuidString.prefix(12))-\(name)" }

        /// Each secret, and the requests that carry it. Every request is made once recording and once replaying.
        struct Plan {
            var secrets: [String] = []
            var requests: [URLRequest] = []

            mutating func new(_ name: String) -> String {
                let value = SecureDefaultsTests.secret(name)
                secrets.append(value)
                return value
            }
        }

        static func plan() throws -> Plan {
            var plan = Plan()
            // Secret-named headers, query parameters and a cookie, echoed back by /anything.
            var echo = URLRequest(url: try HTTPBin.url(
                "/anything?api_key=\(plan.new("apikey"))&access_token=\(plan.new("access"))&token=\(plan.new("token"))&page=2"
            ))
            echo.setValue("Bearer \(plan.new("bearer"))", forHTTPHeaderField: "Authorization")
            echo.setValue(plan.new("xapikey"), forHTTPHeaderField: "X-API-Key")
            echo.setValue(plan.new("xauth"), forHTTPHeaderField: "X-Auth-Token")
            echo.setValue(plan.new("private"), forHTTPHeaderField: "Private-Token")
            echo.setValue("session=\(plan.new("cookie")); theme=darkmode", forHTTPHeaderField: "Cookie")
            plan.requests.append(echo)

            // A JSON body with a password and a client secret, echoed as text ("data") and as JSON ("json").
            var json = URLRequest(url: try HTTPBin.url("/anything/json"))
            json.httpMethod = "POST"
            json.setValue("application/json", forHTTPHeaderField: "Content-Type")
            json.httpBody = Data(
                #"{"user":"ada","password":"\#(plan.new("jsonpass"))","client_secret":"\#(plan.new("client"))"}"#.utf8
            )
            plan.requests.append(json)

            // A form body with a password: characters that percent-encode differently in forms and queries.
            let formPassword = plan.new("form pass/+=&")
            var form = URLRequest(url: try HTTPBin.url("/anything/form"))
            form.httpMethod = "POST"
            form.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let encoded = formPassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            form.httpBody = Data("user=ada&password=\(encoded)".utf8)
            plan.requests.append(form)

            // Basic credentials whose password is also in the URL's path (httpbin checks one against the other).
            let basicPassword = plan.new("basicpass")
            var basic = URLRequest(url: try HTTPBin.url("/basic-auth/ada/\(basicPassword)"))
            let credentials = Data("ada:\(basicPassword)".utf8).base64EncodedString()
            basic.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
            plan.requests.append(basic)

            // A password in the URL's userinfo.
            var userinfo = URLComponents(url: try HTTPBin.url("/anything/userinfo"), resolvingAgainstBaseURL: false)!
            userinfo.user = "ada"
            userinfo.password = plan.new("userinfo")
            plan.requests.append(URLRequest(url: userinfo.url!))

            // A session cookie set by the server, through a redirect.
            plan.requests.append(URLRequest(url: try HTTPBin.url("/cookies/set?session=\(plan.new("setcookie"))")))

            // Secrets the server makes up: a secret-named response header and JSON key.
            plan.requests.append(URLRequest(url: try HTTPBin.url(
                "/response-headers?X-Api-Key=\(plan.new("responsekey"))&refresh_token=\(plan.new("refresh"))"
            )))

            // A gzip-encoded echo.
            var gzip = URLRequest(url: try HTTPBin.url("/gzip"))
            gzip.setValue(plan.new("gzipauth"), forHTTPHeaderField: "X-Auth-Token")
            plan.requests.append(gzip)

            // An error whose failing URL carries a token.
            var timeout = URLRequest(url: try HTTPBin.url("/delay/3?token=\(plan.new("timeout"))"))
            timeout.timeoutInterval = 0.5
            plan.requests.append(timeout)
            return plan
        }

        /// What each request came back as: a status or an error code.
        func outcomes(of plan: Plan) async -> [String] {
            var outcomes: [String] = []
            for request in plan.requests {
                do {
                    let (_, response) = try await session.data(for: request)
                    outcomes.append("\((response as? HTTPURLResponse)?.statusCode ?? 0)")
                } catch {
                    outcomes.append("error \((error as NSError).code)")
                }
            }
            return outcomes
        }

        /// Every form a secret can take in a file: plain, JSON-escaped, percent-encoded (query and form), base64.
        static func forms(of secret: String) -> Set<String> {
            var forms: Set<String> = [secret, secret.replacingOccurrences(of: "/", with: #"\/"#)]
            forms.insert(secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret)
            forms.insert(secret.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? secret)
            forms.insert(
                (secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: " "))) ?? secret)
                    .replacingOccurrences(of: " ", with: "+")
            )
            forms.insert(Data(secret.utf8).base64EncodedString())
            // The part before the first character a URL or form would encode, in case it is encoded some other way.
            if let cut = secret.firstIndex(where: { " /+=&".contains($0) }), secret.distance(from: secret.startIndex, to: cut) >= 8 {
                forms.insert(String(secret[..<cut]))
            }
            return forms
        }

        /// The file's bytes, and every body of its tape decoded (gzip, base64 inside JSON).
        static func everything(in file: URL) throws -> [Data] {
            var texts = [try Data(contentsOf: file)]
            let (tape, _) = try CassetteFile.read(at: file)
            for interaction in tape.interactions {
                var body = interaction.body
                if let encoding = interaction.response?.headers[field: "Content-Encoding"],
                   let decoded = Inflate.decode(body, contentEncoding: encoding) {
                    body = decoded
                }
                texts.append(body)
                texts += [interaction.request.body ?? Data()] + interaction.redirects.map { $0.request.body ?? Data() }
            }
            return texts
        }

        func expectNoSecret(of plan: Plan, in file: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let texts = try Self.everything(in: file)
            for secret in plan.secrets {
                for form in Self.forms(of: secret) {
                    let found = texts.contains { $0.range(of: Data(form.utf8)) != nil }
                    #expect(!found, "\(form) (of \(secret)) is in \(file.lastPathComponent)", sourceLocation: sourceLocation)
                }
            }
        }

        @Test func everyKindOfSecretStaysOutAndTheCassetteReplaysOffline() async throws {
            let plan = try Self.plan()
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("secrets.json")
            try await holdingCassettes {
                let recorded = try await withCassette("secrets", in: folder.path) { _ in await outcomes(of: plan) }
                #expect(recorded == ["200", "200", "200", "200", "200", "200", "200", "200", "error \(NSURLErrorTimedOut)"])
                try expectNoSecret(of: plan, in: file)

                let before = try HTTPBin.settledRequestCount()
                let replayed = try await withCassette("secrets", in: folder.path, { $0.recordMode = .never }) { cassette in
                    let replayed = await outcomes(of: plan)
                    #expect(cassette.allPlayed)
                    return replayed
                }
                #expect(replayed == recorded)
                let tape = try CassetteFile.read(at: file).tape
                #expect(try HTTPBin.requests(since: before, to: HTTPBin.targets(of: tape)).isEmpty)
            }
            // What stays readable: names, and what is not secret.
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            #expect(text.contains("theme=[FILTERED]"))
            #expect(text.contains("page=2"))
            #expect(text.contains("session=[FILTERED]"))
            #expect(text.contains(#""user":"ada""#) || text.contains(#"\"user\":\"ada\""#))
        }

        @Test func sensitiveDataIsWrittenAsItsPlaceholderAndPutBackOnReplay() async throws {
            let value = Self.secret("realkey")
            let folder = try TemporaryFolder()
            let configure: (inout VCRConfiguration) -> Void = { configuration in
                configuration.sensitiveData = ["<API_KEY>": { value }, "<UNSET>": { nil }]
            }
            var request = URLRequest(url: try HTTPBin.url("/anything?q=\(value)"))
            request.setValue("key \(value)", forHTTPHeaderField: "X-Custom")
            func echoed() async throws -> String {
                let (data, _) = try await session.data(for: request)
                let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
                return (json?["headers"] as? [String: String])?["X-Custom"] ?? ""
            }
            try await holdingCassettes {
                #expect(try await withCassette("sensitive", in: folder.path, configure) { _ in try await echoed() } == "key \(value)")
                let text = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("sensitive.json")), as: UTF8.self)
                #expect(!text.contains(value))
                #expect(text.contains("<API_KEY>") || text.contains(#"\u003cAPI_KEY\u003e"#))
                #expect(text.contains("%3CAPI_KEY%3E"))
                let replayed = try await withCassette("sensitive", in: folder.path, {
                    configure(&$0)
                    $0.recordMode = .never
                }) { _ in try await echoed() }
                #expect(replayed == "key \(value)")
            }
        }

        @Test func anUnchangedReRecordRewritesTheFileByteForByte() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("stable.json")
            // Responses that differ only in their Date header and timing.
            let urls = [try HTTPBin.url("/get?a=1"), try HTTPBin.url("/json"), try HTTPBin.url("/status/404")]
            try await holdingCassettes {
                try await withCassette("stable", in: folder.path) { _ in
                    for url in urls { _ = try await session.data(from: url) }
                }
                let first = try Data(contentsOf: file)
                try await Task.sleep(nanoseconds: 1_100_000_000)  // a new second for the Date header
                try await withCassette("stable", in: folder.path, { $0.recordMode = .all }) { _ in
                    for url in urls { _ = try await session.data(from: url) }
                }
                #expect(try Data(contentsOf: file) == first)

                // A changed response is written anew, the rest kept.
                try await withCassette("stable", in: folder.path, { $0.recordMode = .all }) { _ in
                    _ = try await session.data(from: urls[0])
                    _ = try await session.data(from: try HTTPBin.url("/json?changed=1"))
                }
                let changed = try CassetteFile.read(at: file).tape.interactions
                #expect(changed.map(\.request.url) == [urls[0].absoluteString, try HTTPBin.url("/json?changed=1").absoluteString])
                // The unchanged one kept its Date and time.
                let kept = changed[0]
                let before = try CassetteFile.decode(first, path: "first").tape.interactions[0]
                #expect(kept.response?.headers == before.response?.headers)
                #expect(kept.scenes.map(\.time) == before.scenes.map(\.time))
            }
        }

        @Test func aSecretLeftInClearFailsTheSaveAndKeepsTheFile() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("caught.json")
            // A JWT with the secure defaults off (they filter it by its shape): the scanner finds it before saving.
            let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlLXZhbHVl"
            let url = try HTTPBin.url("/anything?note=\(jwt)")
            try await holdingCassettes {
                try await withCassette("caught", in: folder.path) { _ in
                    _ = try await session.data(from: try HTTPBin.url("/get"))
                }
                let before = try Data(contentsOf: file)
                do {
                    try await withCassette("caught", in: folder.path, {
                        $0.recordMode = .all
                        $0.filtersSecrets = false
                    }) { _ in
                        _ = try await session.data(from: url)
                    }
                    Issue.record("the save should have failed")
                } catch let error as VCRError {
                    #expect(error.code == .secretsFound)
                    #expect(error.cassettePath == file.path)
                    #expect(error.message.contains("request 1: request URL: JWT"))
                    // How to filter it, and how to keep the value for the test instead.
                    #expect(error.message.contains("filtersSecrets is off for this cassette"))
                    #expect(error.message.contains("sensitiveData"))
                    #expect(error.message.contains("checksSecretsOnSave = false"))
                    #expect(!error.message.contains(jwt))
                }
                #expect(try Data(contentsOf: file) == before)

                // Opted out for this cassette: written as recorded.
                try await withCassette("caught", in: folder.path, {
                    $0.recordMode = .all
                    $0.filtersSecrets = false
                    $0.checksSecretsOnSave = false
                }) { _ in _ = try await session.data(from: url) }
                #expect(String(decoding: try Data(contentsOf: file), as: UTF8.self).contains(jwt))

                // Or hidden with a placeholder: saved, and no longer a finding.
                try await withCassette("caught", in: folder.path, {
                    $0.recordMode = .all
                    $0.filtersSecrets = false
                    $0.sensitiveData = ["<JWT>": { jwt }]
                }) { _ in _ = try await session.data(from: url) }
                #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains(jwt))
            }
        }

        @Test func aCassetteRecordedBeforeTheSecureDefaultsStillReplays() async throws {
            let folder = try TemporaryFolder()
            let value = Self.secret("old")
            var request = URLRequest(url: try HTTPBin.url("/anything?api_key=\(value)"))
            request.setValue(value, forHTTPHeaderField: "X-API-Key")
            let matchers: [Matcher] = [.method, .host, .path, .query, .headers]
            try await holdingCassettes {
                let recorded = try await withCassette("old", in: folder.path, {
                    $0.filtersSecrets = false
                    $0.checksSecretsOnSave = false
                    $0.matchers = matchers
                }) { _ in try await session.data(for: request).0 }
                let file = folder.url.appendingPathComponent("old.json")
                let before = try Data(contentsOf: file)
                let replayed = try await withCassette("old", in: folder.path, {
                    $0.recordMode = .never
                    $0.matchers = matchers
                }) { cassette in
                    let replayed = try await session.data(for: request).0
                    #expect(cassette.allPlayed)
                    return replayed
                }
                #expect(replayed == recorded)
                #expect(try Data(contentsOf: file) == before)
            }
        }

        @Test func aSecretFromAnEarlierResponseIsHiddenInLaterRequests() async throws {
            let folder = try TemporaryFolder()
            let token = Self.secret("issued")
            // A login answering with a token the request never held in clear (httpbin decodes the base64 path).
            let login = Data(#"{"access_token":"\#(token)","token_type":"bearer"}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            func flow() async throws -> [Int] {
                let (data, _) = try await session.data(from: try HTTPBin.url("/base64/\(login)"))
                let issued = try #require(
                    (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["access_token"] as? String
                )
                let path = try #require(issued.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
                let (_, response) = try await session.data(from: try HTTPBin.url("/anything/files/\(path)"))
                return [(response as? HTTPURLResponse)?.statusCode ?? 0]
            }
            try await holdingCassettes {
                let recorded = try await withCassette("flow", in: folder.path) { _ in try await flow() }
                let file = folder.url.appendingPathComponent("flow.json")
                let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
                #expect(!text.contains(token))
                #expect(text.contains("/anything/files/%5BFILTERED%5D"))
                let replayed = try await withCassette("flow", in: folder.path, { $0.recordMode = .never }) { cassette in
                    let replayed = try await flow()
                    #expect(cassette.allPlayed)
                    return replayed
                }
                #expect(replayed == recorded)
            }
        }

        @Test func aNameOnlyTheUserKnowsIsFilteredOnceNamed() async throws {
            let folder = try TemporaryFolder()
            let value = Self.secret("tenant")
            var request = URLRequest(url: try HTTPBin.url("/anything"))
            request.setValue(value, forHTTPHeaderField: "X-Tenant")
            try await holdingCassettes {
                try await withCassette("named", in: folder.path, { $0.secretNames = ["x-tenant"] }) { _ in
                    _ = try await session.data(for: request)
                }
            }
            let text = String(decoding: try Data(contentsOf: folder.url.appendingPathComponent("named.json")), as: UTF8.self)
            #expect(!text.contains(value))
        }

        @Test func turnedOffSecretNamesAreRecordedInClear() async throws {
            let folder = try TemporaryFolder()
            let value = Self.secret("clear")
            var request = URLRequest(url: try HTTPBin.url("/anything?api_key=\(value)"))
            request.setValue(value, forHTTPHeaderField: "X-API-Key")
            try await holdingCassettes {
                try await withCassette("clear", in: folder.path, {
                    $0.filtersSecrets = false
                    $0.checksSecretsOnSave = false
                }) { _ in _ = try await session.data(for: request) }
            }
            let tape = try CassetteFile.read(at: folder.url.appendingPathComponent("clear.json")).tape
            #expect(tape.interactions[0].request.headers[field: "X-API-Key"] == value)
            #expect(tape.interactions[0].request.url.contains("api_key=\(value)"))
        }
    }
}

/// The one vocabulary recording and `vcr lint` share.
@Suite struct SecretNamesTests {
    @Test(arguments: [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "x-api-key", "X-Auth-Token",
        "Private-Token", "X-Amz-Security-Token", "X-Client-Secret",
    ])
    func secretHeaders(_ name: String) {
        #expect(SecretNames.isSecret(headerName: name))
    }

    @Test(arguments: ["Content-Type", "WWW-Authenticate", "Proxy-Authenticate", "X-Request-Id", "Accept", "Date"])
    func ordinaryHeaders(_ name: String) {
        #expect(!SecretNames.isSecret(headerName: name))
    }

    @Test(arguments: [
        "token", "access_token", "refresh_token", "id_token", "api_key", "apiKey", "client_secret", "password",
        "newPassword", "secret", "signature", "X-Amz-Signature", "sessionid", "private_key",
    ])
    func secretKeys(_ name: String) {
        #expect(SecretNames.isSecret(key: name))
    }

    @Test(arguments: [
        "token_type", "expires_in", "pageToken", "nextPageToken", "password_required", "key", "name", "user", "page",
    ])
    func ordinaryKeys(_ name: String) {
        #expect(!SecretNames.isSecret(key: name))
    }

    @Test func aBareKeyIsSecretOnlyInURLs() {
        #expect(SecretNames.isSecret(key: "key", inURL: true))
        #expect(!SecretNames.isSecret(key: "key"))
    }

    @Test(arguments: ["[FILTERED]", "%5BFILTERED%5D", "<API_KEY>", "{{token}}", "${SECRET}", "REDACTED", "****", "xxxx"])
    func placeholders(_ value: String) {
        #expect(SecretNames.isPlaceholder(value))
    }

    @Test(arguments: ["hunter2-real", "abc123", "Bearer abcdef"])
    func notPlaceholders(_ value: String) {
        #expect(!SecretNames.isPlaceholder(value))
    }
}
