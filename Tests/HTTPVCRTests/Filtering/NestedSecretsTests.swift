import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

extension VCRTests {
    /// A secret in a URL nested in a parameter (`?url=/status/200%3Ftoken%3DX`, `redirect_uri=https://app/cb?code=C`)
    /// is filtered wherever it stands, the request that carries it before any hop included.
    @Suite struct NestedSecretsTests {
        let session = vcrSession(timeout: 10)

        /// Every form a value may take in the file: plain, with every byte but letters and digits percent-encoded
        /// (as a server echoing a URL may write it), base64.
        static func forms(of value: String) -> Set<String> {
            [value, value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value,
             Data(value.utf8).base64EncodedString()]
        }

        /// As URLComponents and most clients encode a parameter's value: all but RFC 3986's unreserved characters.
        static func encoded(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
        }
        static let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )

        @Test func aSecretNestedInAParameterIsFilteredInEveryRequestOfTheChainAndStillReplays() async throws {
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("nested.json")
            let token = "tok-" + UUID().uuidString.prefix(13)
            let code = "code-" + UUID().uuidString.suffix(12)
            let deeper = "deep-" + UUID().uuidString.prefix(10)
            let formCode = "form-" + UUID().uuidString.suffix(12)
            // The example of issue 41: the first request of the chain holds the token inside its `url` parameter.
            let direct = try HTTPBin.url("/redirect-to?url=/status/200%3Ftoken%3D\(token)")
            // An OAuth-style hop: a redirect_uri holding a code, and a URL nested twice holding a token.
            let callback = "https://app.example/cb?code=\(code)&state=xyz"
            let authorize = "/anything/authorize?redirect_uri=\(Self.encoded(callback))"
                + "&next=\(Self.encoded("/redirect-to?url=\(Self.encoded("/get?access_token=\(deeper)"))"))"
            let chain = try HTTPBin.url("/redirect-to?url=\(Self.encoded(authorize))")
            var form = URLRequest(url: try HTTPBin.url("/anything/token"))
            form.httpMethod = "POST"
            form.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let formCallback = "https://app.example/cb?code=\(formCode)"
            form.httpBody = Data("grant_type=authorization_code&redirect_uri=\(Self.encoded(formCallback))".utf8)

            func run() async throws -> [Int] {
                try await statuses(of: [URLRequest(url: direct), URLRequest(url: chain), form], through: session)
            }
            try await holdingCassettes {
                let recorded = try await withCassette("nested", in: folder.path) { _ in try await run() }
                #expect(recorded == [200, 200, 200])
                let bytes = try Data(contentsOf: file)
                for secret in [token, code, deeper, formCode] {
                    for form in Self.forms(of: secret) {
                        if let range = bytes.range(of: Data(form.utf8)) {
                            let context = bytes[max(0, range.lowerBound - 120)..<min(bytes.count, range.upperBound + 20)]
                            Issue.record("\(form) (of \(secret)) is in the file: \(String(decoding: context, as: UTF8.self))")
                        }
                    }
                }
                let tape = try CassetteFile.read(at: file).tape
                // The first request of the chain, taped before the hop that goes to the token.
                let first = try #require(URLComponents(string: tape.interactions[0].request.url)?.queryItems?.first)
                #expect(first.value == "/status/200?token=%5BFILTERED%5D")
                #expect(tape.interactions[0].redirects.count == 1)
                // What is not secret stays readable.
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(text.contains("state%3Dxyz") || text.contains("state=xyz"))
                #expect(text.contains("grant_type=authorization_code"))

                #expect(try await replayOffline("nested", in: folder.url) { try await run() } == recorded)
            }
        }

        @Test func aNestedCodeIsASecretOnlyInsideAnotherURL() throws {
            /// The filtered URL's parameter `name`, decoded: the nested URL, whose own query is then read.
            func nested(_ url: String, _ name: String) throws -> URLComponents {
                let request = URLRequest(url: try #require(URL(string: url)))
                let filtered = try #require(RequestFilter.filter(request, with: VCRConfiguration())?.url)
                let items = URLComponents(url: filtered, resolvingAgainstBaseURL: false)?.queryItems ?? []
                let value = try #require(items.first { $0.name == name }?.value)
                return try #require(URLComponents(string: value))
            }
            func value(_ components: URLComponents, _ name: String) -> String? {
                components.queryItems?.first { $0.name == name }?.value
            }
            // `code` in a URL of its own is a country or a status, and stays.
            let country = try #require(URL(string: "https://api.example.com/countries?code=FRANCE"))
            #expect(RequestFilter.filter(URLRequest(url: country), with: VCRConfiguration())?.url == country)
            let callback = try nested("https://id.example.com/auth?redirect_uri=https%3A%2F%2Fapp%2Fcb%3Fcode%3DAbCdEf123%26state%3Dxyz", "redirect_uri")
            #expect(callback.host == "app" && callback.path == "/cb")
            #expect(value(callback, "code") == "[FILTERED]")
            #expect(value(callback, "state") == "xyz")
            // Unencoded, as some clients send it.
            let unencoded = try nested("https://h.example/r?url=/status/200?token=AbCdEf123", "url")
            #expect(unencoded.path == "/status/200" && value(unencoded, "token") == "[FILTERED]")
            // A parameter whose value merely holds `=` (base64 padding) is no nested query.
            let padded = try #require(URL(string: "https://h.example/r?blob=YWJjZA==&page=2"))
            #expect(RequestFilter.filter(URLRequest(url: padded), with: VCRConfiguration())?.url == padded)
        }
    }
}
