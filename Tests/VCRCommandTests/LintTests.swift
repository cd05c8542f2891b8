import Foundation
import HTTPVCR
import Testing
import TestSupport

/// One kind of secret seeded into a cassette, and the line `vcr lint` must print for it.
struct SeededSecret: CustomTestStringConvertible, Sendable {
    var name: String
    var tape: Tape
    /// `request N: where: what` (after the file name), up to the shortened secret.
    var expected: String
    /// A secret that must not be printed whole.
    var secret: String

    var testDescription: String { name }

    static let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9."
        + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    static let aws = "AKIAIOSFODNN7EXAMPLE"
    static let privateKey = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
        -----END RSA PRIVATE KEY-----
        """

    static func request(
        _ name: String,
        url: String = "https://api.example.com/v1/me",
        headers: [RecordedHeader] = [],
        body: String? = nil,
        expected: String,
        secret: String
    ) -> SeededSecret {
        SeededSecret(
            name: name,
            tape: Tapes.tape(Tapes.exchange(url: url, requestHeaders: headers, requestBody: body)),
            expected: expected,
            secret: secret
        )
    }

    static func response(
        _ name: String,
        headers: [RecordedHeader] = [RecordedHeader("Content-Type", "application/json")],
        body: String,
        expected: String,
        secret: String
    ) -> SeededSecret {
        SeededSecret(
            name: name,
            tape: Tapes.tape(Tapes.exchange(responseHeaders: headers, chunks: [body])),
            expected: expected,
            secret: secret
        )
    }

    static var all: [SeededSecret] {
        var cases: [SeededSecret] = [
            // Credentials in headers.
            request(
                "Authorization header",
                headers: [RecordedHeader("Authorization", "Basic c2VjcmV0OnBhc3N3b3Jk")],
                expected: #"request 1: request header Authorization: value in clear ("Basic c2Vj…")"#,
                secret: "c2VjcmV0OnBhc3N3b3Jk"
            ),
            request(
                "Proxy-Authorization header",
                headers: [RecordedHeader("Proxy-Authorization", "Basic dXNlcjpodW50ZXIy")],
                expected: #"request 1: request header Proxy-Authorization: value in clear ("Basic dXNl…")"#,
                secret: "dXNlcjpodW50ZXIy"
            ),
            request(
                "Cookie header",
                headers: [RecordedHeader("Cookie", "sessionid=8f2a9c71e0; theme=dark")],
                expected: #"request 1: request header Cookie: value in clear ("sess…")"#,
                secret: "8f2a9c71e0"
            ),
            SeededSecret(
                name: "Set-Cookie header",
                tape: Tapes.tape(Tapes.exchange(responseHeaders: [
                    RecordedHeader("Content-Type", "application/json"),
                    RecordedHeader("Set-Cookie", "sid=31d4d96e407aad42; Path=/; Secure; HttpOnly"),
                ])),
                expected: #"request 1: response header Set-Cookie: value in clear ("sid=…")"#,
                secret: "31d4d96e407aad42"
            ),
            request(
                "API key header",
                headers: [RecordedHeader("X-Api-Key", "5f0c2b7e9a1d4c3b")],
                expected: #"request 1: request header X-Api-Key: value in clear ("5f0c…")"#,
                secret: "5f0c2b7e9a1d4c3b"
            ),
            request(
                "auth token header",
                headers: [RecordedHeader("X-Auth-Token", "tok_99887766")],
                expected: #"request 1: request header X-Auth-Token: value in clear ("tok_…")"#,
                secret: "tok_99887766"
            ),
            // Secret-named query parameters.
            request(
                "token query parameter",
                url: "https://api.example.com/v1/me?token=abc123def456",
                expected: #"request 1: request URL query token: value in clear ("abc1…")"#,
                secret: "abc123def456"
            ),
            request(
                "access_token query parameter",
                url: "https://api.example.com/v1/me?fields=name&access_token=EAAB1234567",
                expected: #"request 1: request URL query access_token: value in clear ("EAAB…")"#,
                secret: "EAAB1234567"
            ),
            request(
                "api_key query parameter",
                url: "https://api.example.com/v1/search?q=vcr&api_key=k-2b1f9e",
                expected: #"request 1: request URL query api_key: value in clear ("k-2b…")"#,
                secret: "k-2b1f9e"
            ),
            request(
                "client_secret query parameter",
                url: "https://auth.example.com/token?client_id=app&client_secret=cs%2Fwith%2Bsigns",
                expected: #"request 1: request URL query client_secret: value in clear ("cs/w…")"#,
                secret: "cs/with+signs"
            ),
            request(
                "password in the URL",
                url: "https://ada:s3cr3tpass@api.example.com/v1/me",
                expected: #"request 1: request URL password: value in clear ("s3cr…")"#,
                secret: "s3cr3tpass"
            ),
            // Form and JSON keys.
            request(
                "form password",
                headers: [RecordedHeader("Content-Type", "application/x-www-form-urlencoded")],
                body: "user=ada&password=hunter2",
                expected: #"request 1: request body form field password: value in clear ("hun…")"#,
                secret: "hunter2"
            ),
            request(
                "form client_secret",
                headers: [RecordedHeader("Content-Type", "application/x-www-form-urlencoded")],
                body: "grant_type=client_credentials&client_id=app&client_secret=9z8y7x6w",
                expected: #"request 1: request body form field client_secret: value in clear ("9z8y…")"#,
                secret: "9z8y7x6w"
            ),
            request(
                "nested JSON password",
                headers: [RecordedHeader("Content-Type", "application/json")],
                body: #"{"user": {"name": "ada", "credentials": {"password": "p4ssw0rd!"}}}"#,
                expected: #"request 1: request body JSON key user.credentials.password: value in clear ("p4ss…")"#,
                secret: "p4ssw0rd!"
            ),
            response(
                "JSON api_key in an array",
                body: #"{"keys": [{"id": 1, "api_key": "live_42a9d8e7"}]}"#,
                expected: #"request 1: response body JSON key keys[0].api_key: value in clear ("live…")"#,
                secret: "live_42a9d8e7"
            ),
            response(
                "JSON access_token",
                body: #"{"access_token": "ya29.a0AfH6SMB", "token_type": "Bearer", "expires_in": 3599}"#,
                expected: #"request 1: response body JSON key access_token: value in clear ("ya29…")"#,
                secret: "ya29.a0AfH6SMB"
            ),
            response(
                "JSON secret in a JSON string",
                body: #"{"data": "{\"client_secret\": \"shh-12345\"}"}"#,
                expected: #"request 1: response body JSON key data[json].client_secret: value in clear ("shh-…")"#,
                secret: "shh-12345"
            ),
            // Token shapes anywhere.
            request(
                "bearer token in another header",
                headers: [RecordedHeader("X-Forwarded-Credentials", "Bearer 9f8e7d6c5b4a3210")],
                expected: #"request 1: request header X-Forwarded-Credentials: bearer token ("Bearer 9f8e…")"#,
                secret: "9f8e7d6c5b4a3210"
            ),
            request(
                "bearer token in a text body",
                headers: [RecordedHeader("Content-Type", "text/plain")],
                body: "call it with: Bearer 0a1b2c3d4e5f6a7b8c9d",
                expected: #"request 1: request body: bearer token ("Bearer 0a1b…")"#,
                secret: "0a1b2c3d4e5f6a7b8c9d"
            ),
            SeededSecret(
                name: "JWT in a response header",
                tape: Tapes.tape(Tapes.exchange(responseHeaders: [RecordedHeader("X-Session", jwt)])),
                expected: #"request 1: response header X-Session: JWT ("eyJh…")"#,
                secret: jwt
            ),
            response(
                "JWT in a response body",
                headers: [RecordedHeader("Content-Type", "text/html")],
                body: "<script>window.boot = '\(jwt)';</script>",
                expected: #"request 1: response body: JWT ("eyJh…")"#,
                secret: jwt
            ),
            response(
                "AWS access key in a body",
                headers: [RecordedHeader("Content-Type", "text/plain")],
                body: "[default]\naws_access_key=\(aws)\n",
                expected: #"request 1: response body: AWS access key ID ("AKIA…")"#,
                secret: aws
            ),
            response(
                "private key block in a body",
                headers: [RecordedHeader("Content-Type", "application/x-pem-file")],
                body: privateKey,
                expected: #"request 1: response body: private key block ("-----BEGIN RSA PRIVATE KEY-----")"#,
                secret: "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
            ),
            response(
                "GitHub token in a body",
                headers: [RecordedHeader("Content-Type", "text/plain")],
                body: "token: ghp_" + String(repeating: "aB3", count: 12),
                expected: #"request 1: response body: GitHub token ("ghp_…")"#,
                secret: "ghp_" + String(repeating: "aB3", count: 12)
            ),
            response(
                "base64 body",
                headers: [RecordedHeader("Content-Type", "text/plain")],
                body: Data("aws_access_key_id = \(aws)\n".utf8).base64EncodedString(),
                expected: #"request 1: response body (base64-decoded): AWS access key ID ("AKIA…")"#,
                secret: aws
            ),
        ]

        // A body that is still gzip-compressed on the tape.
        cases.append(SeededSecret(
            name: "gzip-encoded body",
            tape: Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(method: "GET", url: "https://api.example.com/v1/login"),
                response: RecordedResponse(
                    url: "https://api.example.com/v1/login",
                    statusCode: 200,
                    headers: [RecordedHeader("Content-Encoding", "gzip"), RecordedHeader("Content-Type", "application/json")]
                ),
                chunks: [Deflate.gzip(Data(#"{"session": {"refresh_token": "rt-55aa66bb"}}"#.utf8))]
            )]),
            expected: #"request 1: response body JSON key session.refresh_token: value in clear ("rt-5…")"#,
            secret: "rt-55aa66bb"
        ))

        // A binary body (written as base64 in the cassette) with a key inside.
        var binary = Data([0xFF, 0xFE, 0x00, 0x01])
        binary.append(Data(" \(aws) ".utf8))
        binary.append(Data([0x00, 0x9F]))
        cases.append(SeededSecret(
            name: "binary body stored as base64",
            tape: Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(method: "GET", url: "https://api.example.com/blob"),
                response: RecordedResponse(
                    url: "https://api.example.com/blob",
                    statusCode: 200,
                    headers: [RecordedHeader("Content-Type", "application/octet-stream")]
                ),
                chunks: [binary]
            )]),
            expected: #"request 1: response body: AWS access key ID ("AKIA…")"#,
            secret: aws
        ))

        // A token in a redirect's Location.
        cases.append(SeededSecret(
            name: "token in a redirect Location",
            tape: Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(method: "GET", url: "https://auth.example.com/authorize"),
                redirects: [Interaction.Redirect(
                    response: RecordedResponse(
                        url: "https://auth.example.com/authorize",
                        statusCode: 302,
                        headers: [RecordedHeader("Location", "https://app.example.com/cb?access_token=at-778899")]
                    ),
                    request: RecordedRequest(method: "GET", url: "https://app.example.com/cb?access_token=at-778899")
                )],
                response: RecordedResponse(url: "https://app.example.com/cb?access_token=at-778899", statusCode: 200),
                chunks: []
            )]),
            expected: #"request 1: redirect 1 response header Location query access_token: value in clear ("at-7…")"#,
            secret: "at-778899"
        ))

        // The second request of a cassette is request 2.
        cases.append(SeededSecret(
            name: "second request",
            tape: Tapes.tape(
                Tapes.exchange(chapter: 1),
                Tapes.exchange(chapter: 2, requestHeaders: [RecordedHeader("authorization", "Bearer zz-top-1234567")])
            ),
            expected: #"request 2: request header authorization: value in clear ("Bearer zz-t…")"#,
            secret: "zz-top-1234567"
        ))
        return cases
    }
}

@Suite struct LintTests {
    @Test(arguments: SeededSecret.all)
    func findsEachKindOfSecret(_ seeded: SeededSecret) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(seeded.tape, "seeded.json")
        let result = try VCRTool.run("lint", path)
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.contains("\(path): \(seeded.expected)\n"), "\(seeded.name): \(result)")
        #expect(!result.stdout.contains(seeded.secret), "the report repeats the secret: \(result)")
        #expect(result.stderr.contains("vcr lint: "), "\(result)")
    }

    /// The same places, holding what filters write instead of secrets.
    @Test func placeholdersAreNotFindings() throws {
        let folder = try TemporaryFolder()
        let placeholders = [
            "[FILTERED]", "<filtered>", "REDACTED", "[REDACTED]", "***", "xxxxxxxx", "<redacted>", "FILTERED",
            "%5BFILTERED%5D", "{{REDACTED_TOKEN}}",
        ]
        var interactions: [Interaction] = []
        for (index, placeholder) in placeholders.enumerated() {
            let encoded = placeholder.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? placeholder
            interactions.append(Tapes.exchange(
                chapter: 2 * index + 1,
                method: "POST",
                url: "https://api.example.com/v1/login?token=\(encoded)&api_key=\(encoded)&page=2",
                requestHeaders: [
                    RecordedHeader("Authorization", placeholder),
                    RecordedHeader("Proxy-Authorization", "Basic \(placeholder)"),
                    RecordedHeader("Cookie", "sessionid=\(placeholder); theme=\(placeholder)"),
                    RecordedHeader("X-Api-Key", placeholder),
                    RecordedHeader("Content-Type", "application/x-www-form-urlencoded"),
                ],
                requestBody: "user=ada&password=\(encoded)&client_secret=\(encoded)",
                responseHeaders: [
                    RecordedHeader("Content-Type", "application/json"),
                    RecordedHeader("Set-Cookie", "sid=\(placeholder); Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT"),
                ],
                chunks: [#"{"access_token": "\#(placeholder)", "token_type": "Bearer", "expires_in": 3600, "#
                    + #""user": {"password": "\#(placeholder)"}, "note": "Authorization: Bearer \#(placeholder)"}"#]
            ))
            interactions.append(Tapes.exchange(
                chapter: 2 * index + 2,
                requestHeaders: [RecordedHeader("Authorization", "Bearer \(placeholder)")],
                responseHeaders: [RecordedHeader("Set-Cookie", placeholder)],
                chunks: []
            ))
        }
        // Words that only look secret-ish.
        interactions.append(Tapes.exchange(
            chapter: 100,
            url: "https://api.example.com/v1/items?pageToken=CAEQAA&next_token=abc&token_type=bearer",
            requestHeaders: [RecordedHeader("Access-Control-Request-Headers", "authorization")],
            responseHeaders: [
                RecordedHeader("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#),
                RecordedHeader("Access-Control-Allow-Credentials", "true"),
                RecordedHeader("Content-Type", "application/json"),
            ],
            chunks: [#"{"password_required": true, "token": null, "secret": 12, "key": "color", "tokens": []}"#]
        ))
        let path = try folder.write(Tape(interactions: interactions), "filtered.json")
        let result = try VCRTool.run("lint", path)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("no secrets found in 1 file"), "\(result)")
    }

    @Test func placeholderOption() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(
            Tapes.tape(Tapes.exchange(requestHeaders: [RecordedHeader("X-Api-Key", "not-a-real-key")])),
            "custom.json"
        )
        #expect(try VCRTool.run("lint", path).status == 1)
        let result = try VCRTool.run("lint", path, "--placeholder", "not-a-real-key")
        #expect(result.status == 0, "\(result)")
    }

    @Test func fixturesHaveTheirSecretsFound() throws {
        let result = try VCRTool.run("lint", VCRTool.vcrPyFixture.path)
        #expect(result.status == 1, "\(result)")
        let path = VCRTool.vcrPyFixture.path
        #expect(result.lines == [
            #"\#(path): request 3: request body form field password: value in clear ("hun…")"#,
            #"\#(path): request 3: response body JSON key form.password: value in clear ("hun…")"#,
            #"\#(path): request 7: request URL query session: value in clear ("abc…")"#,
            #"\#(path): request 7: response header Set-Cookie: value in clear ("sess…")"#,
        ], "\(result)")

        let fixtures = VCRTool.yahttpvcrFixtures
        try #require(!fixtures.isEmpty, "no YAHTTPVCR fixtures in \(VCRTool.fixtures.path)/yahttpvcr")
        for fixture in fixtures {
            let result = try VCRTool.run("lint", fixture.path)
            #expect(result.status == 1, "\(fixture.lastPathComponent): \(result)")
            #expect(
                result.stdout.contains(
                    #"\#(fixture.path): request 1: request header Authorization: value in clear ("Basic YWRh…")"#
                ),
                "\(result)"
            )
        }
    }

    @Test func foldersAreSearchedRecursively() throws {
        let folder = try TemporaryFolder()
        try folder.write(Tapes.recorded, "clean.json")
        try folder.write(
            Tapes.tape(Tapes.exchange(requestHeaders: [RecordedHeader("Authorization", "Basic c2VjcmV0OnBhc3N3b3Jk")])),
            "nested/deeper/leaky.har",
            as: .har
        )
        try folder.write(Tapes.recorded, "nested/clean.plist", as: .plist)
        try folder.write("not a cassette, and not looked at", "nested/README.md")
        try folder.write(Tapes.recorded, ".hidden/leaky.json")

        let result = try VCRTool.run("lint", ".", in: folder.url)
        #expect(result.status == 1, "\(result)")
        #expect(result.lines == [
            #"./nested/deeper/leaky.har: request 1: request header Authorization: value in clear ("Basic c2Vj…")"#,
        ], "\(result)")
        #expect(result.stderr.contains("1 finding in 1 of 3 files"), "\(result)")
    }

    @Test func unreadableFilesAreReportedAndScanningGoesOn() throws {
        let folder = try TemporaryFolder()
        try folder.write("", "a-empty.json")
        try folder.write(#"{"format": "HTTPVCR", "#, "b-truncated.json")
        try folder.write(
            Tapes.tape(Tapes.exchange(requestHeaders: [RecordedHeader("Cookie", "sessionid=8f2a9c71e0")])),
            "c-leaky.json"
        )
        let result = try VCRTool.run("lint", folder.url.path)
        #expect(result.status == 2, "\(result)")
        let base = folder.url.path
        #expect(result.lines.count == 3, "\(result)")
        #expect(result.lines[0] == "\(base)/a-empty.json: error: the file is empty", "\(result)")
        #expect(result.lines[1].hasPrefix("\(base)/b-truncated.json: error: not valid JSON"), "\(result)")
        #expect(result.lines[2].hasPrefix("\(base)/c-leaky.json: request 1: request header Cookie"), "\(result)")
        #expect(result.stderr.contains("2 could not be read"), "\(result)")
    }

    @Test func recordedCassettesLintClean() throws {
        let folder = try TemporaryFolder()
        let json = try folder.write(Tapes.recorded, "recorded.json")
        let plist = try folder.write(Tapes.recorded, "recorded.plist", as: .plist)
        let har = try folder.write(Tapes.recorded, "recorded.har", as: .har)
        let result = try VCRTool.run("lint", json, plist, har)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty)
    }

    /// The README's second command: everything committed under Cassettes.bundle lints clean.
    @Test func projectCassettesLintClean() throws {
        let result = try VCRTool.run("lint", "Cassettes.bundle")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(!result.stderr.contains("no secrets found in 0 files"), "\(result)")
    }

    @Test func emptyFolder() throws {
        let folder = try TemporaryFolder()
        let result = try VCRTool.run("lint", folder.url.path)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("no cassette files"), "\(result)")
    }

    @Test func quiet() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write(Tapes.recorded, "clean.json")
        let result = try VCRTool.run("lint", "--quiet", path)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty, "\(result)")
    }
}
