import CassetteMutations
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR
import HTTPBinTestSupport

/// Synthetic keys of every vendor shape (``SecretShapes/vendorShapes``), built at runtime from a prefix and random
/// characters of the shape's alphabet: the repository holds no string a secret scanner would take for a live key.
enum FakeKeys {
    static let upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    static let lower = "abcdefghijklmnopqrstuvwxyz"
    static let digits = "0123456789"
    static let alphanumerics = upper + lower + digits
    static let hex = "0123456789abcdef"

    /// One key per shape name, the same on every run.
    static func all() -> [(shape: String, key: String)] {
        var random = SplitMix64(seed: 41)
        func run(_ count: Int, _ alphabet: String = alphanumerics) -> String {
            let characters = Array(alphabet)
            return String((0..<count).map { _ in random.pick(characters) })
        }
        let caps = upper + digits
        return [
            ("1Password secret", "A3-" + [run(6, caps), run(11, caps), run(5, caps), run(5, caps), run(5, caps)].joined(separator: "-")),
            ("Adobe client secret", "p8e-" + run(32)),
            ("age secret key", "AGE-SECRET-" + "KEY-1" + run(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
            ("Alibaba access key ID", "LTAI" + run(20)),
            ("Amazon Bedrock API key", "bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3MuY29t" + run(40)),
            ("Anthropic API key", "sk-ant-" + "api03-" + run(93) + "AA"),
            ("Artifactory API key", "AKCp" + run(69)),
            ("Atlassian API token", "ATATT3" + run(186)),
            ("Clojars token", "CLOJARS_" + run(60, lower + digits)),
            ("Cloudflare origin CA key", "v1.0-" + run(24, hex) + "-" + run(146, hex)),
            ("Databricks token", "dapi" + run(32, hex)),
            ("DigitalOcean token", "dop_" + "v1_" + run(64, hex)),
            ("Doppler token", "dp.pt." + run(43)),
            ("Duffel token", "duffel_" + "test_" + run(43)),
            ("Dynatrace token", "dt0c01." + run(24) + "." + run(64)),
            ("EasyPost key", "EZAK" + run(54)),
            ("Flutterwave key", "FLWSECK_" + "TEST-" + run(32, "abcdefgh0123456789") + "-X"),
            ("Fly.io token", "fo1_" + run(43)),
            ("Frame.io token", "fio-u-" + run(64)),
            ("GitLab token", "glpat-" + run(20)),
            ("Grafana token", "glsa_" + run(32) + "_" + run(8, hex)),
            ("Harness token", "pat." + run(22) + "." + run(24) + "." + run(20)),
            ("HashiCorp Vault token", "hvs." + run(95)),
            ("Terraform Cloud token", run(14) + ".atlasv1." + run(65)),
            ("Heroku API key", "HRKU-" + "AA" + run(58)),
            ("Hugging Face token", "hf_" + run(34, upper + lower)),
            ("Infracost token", "ico-" + run(32)),
            ("Intra42 secret", "s-s4t2ud-" + run(64, hex)),
            ("Linear API key", "lin_api_" + run(40)),
            ("Notion token", "ntn_" + run(11, digits) + run(35)),
            ("npm token", "npm_" + run(36)),
            ("Octopus Deploy API key", "API-" + run(26, caps)),
            ("OpenAI API key", "sk-" + "proj-" + run(58) + "T3Blbk" + "FJ" + run(58)),
            ("OpenShift token", "sha256~" + run(43)),
            ("Perplexity API key", "pplx-" + run(48)),
            ("PlanetScale token", "pscale_" + "tkn_" + run(40)),
            ("Postman API key", "PMAK-" + run(24, hex) + "-" + run(34, hex)),
            ("Prefect token", "pnu_" + run(36)),
            ("Pulumi token", "pul-" + run(40, hex)),
            ("PyPI token", "pypi-" + "AgEIcHlwaS5vcmc" + run(60)),
            ("ReadMe API key", "rdme_" + run(70, lower + digits)),
            ("RubyGems API key", "rubygems_" + run(48, hex)),
            ("Scalingo token", "tk-us-" + run(48)),
            ("SendGrid API key", "SG." + run(22) + "." + run(43)),
            ("Brevo API key", "xkeysib-" + run(64, hex) + "-" + run(16)),
            ("Sentry token", "sntryu_" + run(64, hex)),
            ("SettleMint token", "sm_pat_" + run(16)),
            ("Shippo token", "shippo_" + "test_" + run(40, hex)),
            ("Shopify token", "shpat_" + run(32, hex)),
            ("Sourcegraph token", "sgp_" + run(16, hex) + "_" + run(40, hex)),
            ("Square access token", "sq0atp-" + run(30)),
            // The shapes that grew: Stripe's test keys, Slack's app tokens, AWS's other key IDs.
            ("Stripe secret key", "sk_" + "test_" + run(24)),
            ("Slack token", "xapp-" + "1-" + run(11, caps) + "-" + run(13, digits) + "-" + run(40, lower + digits)),
            ("AWS access key ID", "ABIA" + run(16, caps)),
        ]
    }
}

extension VCRTests {
    @Suite struct VendorSecretShapesTests {
        let session = vcrSession(timeout: 10)

        @Test func everyVendorShapeIsFoundWholeUnderItsName() {
            let keys = FakeKeys.all()
            #expect(Set(keys.map(\.shape)).isSuperset(of: SecretShapes.vendorShapes.map(\.name)), "a key per shape")
            for (shape, key) in keys {
                for text in [key, "note: \(key) end", #"{"n":"\#(key)"}"#, "a=1&b=\(key)&c=2"] {
                    let found = SecretShapes.matches(in: text, isPlaceholder: { _ in false })
                    #expect(found.contains { $0.shape == shape && $0.secret == key }, "\(shape) in \(text.prefix(40))…")
                    // The recording filters and `vcr lint` agree: what the filters leave, lint finds nothing in.
                    var removed = SecretValues()
                    SecretFilter(configuration: VCRConfiguration()).takeShapedSecrets(in: text, into: &removed)
                    #expect(SecretScanner().patternMatches(in: removed.replacingEchoes(in: text)).isEmpty, "\(shape)")
                }
            }
        }

        /// Docs/Filters.md says which vendors' keys are filtered: every vendor of the list, by its name.
        @Test func theDocsNameEveryVendorShape() throws {
            let docs = String(decoding: try Data(contentsOf: packageRoot.appendingPathComponent("Docs/Filters.md")), as: UTF8.self)
            let section = try #require(docs.range(of: "### Vendor keys")).upperBound
            let rest = docs[section...]
            let vendorKeys = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
            for name in SecretShapes.vendorShapes.map(\.name) {
                let vendor = String(name.prefix { $0 != " " })
                #expect(vendorKeys.contains(vendor), "Docs/Filters.md's vendor keys do not name \(vendor)")
            }
        }

        @Test func everyVendorKeyIsAbsentFromTheWrittenFileAndTheCassetteReplays() async throws {
            let keys = FakeKeys.all()
            let folder = try TemporaryFolder()
            let file = folder.url.appendingPathComponent("vendors.json")
            // Under names that say nothing, in a JSON body, a query and headers; httpbin echoes all of it back.
            var json = URLRequest(url: try HTTPBin.url("/anything/vendors"))
            json.httpMethod = "POST"
            json.setValue("application/json", forHTTPHeaderField: "Content-Type")
            json.httpBody = try JSONSerialization.data(
                withJSONObject: Dictionary(uniqueKeysWithValues: keys.enumerated().map { ("note\($0.offset)", $0.element.key) }),
                options: [.sortedKeys]
            )
            var query = URLComponents(url: try HTTPBin.url("/anything/query"), resolvingAgainstBaseURL: false)!
            query.queryItems = keys.prefix(20).enumerated().map { URLQueryItem(name: "q\($0.offset)", value: $0.element.key) }
            var headers = URLRequest(url: try HTTPBin.url("/anything/headers"))
            for (index, entry) in keys.suffix(20).enumerated() { headers.setValue(entry.key, forHTTPHeaderField: "X-Note-\(index)") }
            let requests = [json, URLRequest(url: query.url!), headers]

            func run() async throws -> [Int] { try await statuses(of: requests, through: session) }
            try await holdingCassettes {
                let recorded = try await withCassette("vendors", in: folder.path) { _ in try await run() }
                #expect(recorded == [200, 200, 200])
                #expect(VCR.takeFailures().isEmpty, "recorded and saved: nothing was refused")
                let bytes = try Data(contentsOf: file)
                for (shape, key) in keys {
                    let forms = [key, key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key,
                                 Data(key.utf8).base64EncodedString()]
                    for form in forms { #expect(bytes.range(of: Data(form.utf8)) == nil, "\(shape) is in the file") }
                }
                #expect(try await replayOffline("vendors", in: folder.url) { try await run() } == recorded)
            }
        }
    }
}
