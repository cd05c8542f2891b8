import CassetteMutations
import Foundation
@testable import HTTPVCR
import Testing

/// The quick rejections in front of secret filtering (the anchor scan that decides which shapes' regular
/// expressions run, the character test in front of the header-name vocabulary) against the full work they skip,
/// on texts made to sit at their edges: they must never change what is found.
@Suite struct SecretScanEquivalenceTests {
    /// A real-looking example of every shape, and pieces that start one without completing it.
    static let seeds = [
        "eyJa.eyJb.c", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "Bearer abcdef0123456789",
        "bearer 12345678", "AKIA" + "ABCDEFGHIJKLMNOP", "ASIA" + "QRSTUVWXYZ234567",
        "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "github_pat_" + String(repeating: "a1_B", count: 10),
        "xoxb-" + "0123456789", "sk_live_" + "51HxYzAbCdEfGhIj", "rk_live_" + "0123456789abcdef",
        "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
        "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
        "http://bench.local/item/1", "application/json", "eyJ", "k_live_", "xox", "be", "--", "gh",
        // Anchors inside a match (`.atlasv1.`, `T3BlbkFJ`) or in either case (`CLOJARS_`), cut short.
        ".atlasv1.", "T3BlbkFJ", "clojars_", "SG.", "pat.", "A3-",
    ] + FakeKeys.all().map(\.key)
    static let filler = Array("aAbBeEgGkKxXyYJ_-.=/ 01\n".utf8)

    static func mutant(_ random: inout SplitMix64) -> String {
        var bytes = Array(random.pick(seeds).utf8)
        for _ in 0..<random.within(0...3) {
            let position = random.below(bytes.count + 1)
            switch random.below(6) {
            case 0: bytes = Array(bytes.prefix(position))
            case 1: bytes = Array(bytes.dropFirst(position))
            case 2: bytes.insert(random.pick(filler), at: position)
            case 3: if position < bytes.count { bytes[position] = random.pick(filler) }
            case 4: bytes.insert(contentsOf: Array(random.pick(seeds).utf8), at: position)
            default: if position < bytes.count, bytes[position] < 0x80 { bytes[position] ^= 0x20 }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theAnchorScanFindsWhatEveryRegularExpressionFinds() {
        var random = SplitMix64(seed: 2_026_1127)
        var found = 0
        for number in 0..<20_000 {
            let text = number < Self.seeds.count ? Self.seeds[number] : Self.mutant(&random)
            for isPlaceholder in [{ (_: String) in false }, { SecretNames.isPlaceholder($0) }] {
                let scanned = SecretShapes.matches(in: text, isPlaceholder: isPlaceholder)
                let everyShape = SecretShapes.matchesTryingEveryShape(in: text, isPlaceholder: isPlaceholder)
                #expect(scanned == everyShape, "\(text.debugDescription)")
                if scanned != everyShape { return }
                found += scanned.count
            }
        }
        #expect(found > 1_000, "the mutants reach shapes: \(found) found")
    }

    @Test func theQuickNoShapeAnswerIsNeverWrong() {
        var random = SplitMix64(seed: 2_026_1128)
        var quick = 0
        for number in 0..<20_000 {
            let text = number < Self.seeds.count ? Self.seeds[number] : Self.mutant(&random)
            guard !SecretShapes.mayHoldMatch(in: text) else { continue }
            quick += 1
            let everyShape = SecretShapes.matchesTryingEveryShape(in: text, isPlaceholder: { _ in false })
            #expect(everyShape.isEmpty, "\(text.debugDescription)")
            if !everyShape.isEmpty { return }
        }
        #expect(quick > 2_000, "the quick answer is reached: \(quick)")
    }

    /// The first-byte test in front of comparing a header value with the placeholder, and the sketch in front of
    /// the secure header names, against the comparisons they skip.
    @Test func theQuickHeaderTestsAgreeWithTheirComparisons() {
        var random = SplitMix64(seed: 1_128)
        let values = [
            VCRConfiguration.filteredPlaceholder, "[filtered]", "[FILTERED", "FILTERED]", "application/json", "", "[",
            "é[FILTERED]", "\u{0301}[FILTERED]", "[FILTERED]\u{0301}", "Authorization", "cookie", "Cookie2", "COOKIE",
            "Proxy-Authorization", "x-api-key", "X-Api-Key", "Accept", "@uthorization", "`uthorization", "ćookie",
        ]
        let pieces = values + ["-", "_", "x", "é", "\u{0301}", "[", "]", "@", "`", "K", "\u{212A}"]
        let secureSets: [Set<String>] = [
            VCRConfiguration().secureHeaders, [], ["X-Api-Key", "x-api-key", "@uthorization"], ["Cookie", "cookie2", "É"],
        ]
        for number in 0..<20_000 {
            var value = random.pick(values)
            if number >= values.count {
                for _ in 0..<random.within(0...2) {
                    let index = value.index(value.startIndex, offsetBy: random.below(value.count + 1))
                    value.insert(contentsOf: random.pick(pieces), at: index)
                    if random.chance(30), !value.isEmpty { value.remove(at: value.index(before: value.endIndex)) }
                }
                if random.chance(20) { value = random.chance(50) ? value.uppercased() : value.lowercased() }
            }
            #expect(isFilteredPlaceholder(value) == (value == VCRConfiguration.filteredPlaceholder), "\(value.debugDescription)")
            let names = random.pick(secureSets)
            let expected = names.contains { $0.equalsIgnoringASCIICase(value) }
            #expect(SecureHeaderNames(names).contains(value) == expected, "\(value.debugDescription) in \(names)")
        }
    }

    @Test(arguments: ["eyJa.eyJb.c", "x eyJa.eyJb.c", "bearer 12345678", "a xoxb-0123456789"])
    func theShortestMatchesAreFoundAtTheEndOfTheText(text: String) {
        #expect(SecretShapes.matches(in: text, isPlaceholder: { _ in false }).count == 1)
    }

    @Test func theHeaderNameTestAgreesWithTheVocabulary() {
        var random = SplitMix64(seed: 1_127)
        let common = [
            "Accept", "Accept-Encoding", "Content-Type", "Content-Length", "User-Agent", "Host", "ETag",
            "WWW-Authenticate", "Authentication-Info", "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
            "Cookie2", "X-Api-Key", "X-Auth-Token", "Private-Token", "X-Token-Type", "Page-Token", "Sig", "SID",
            "X-JWT", "pwd", "Ocp-Apim-Subscription-Key", "DD-Application-Key", "X-Session-Id", "Signature", "Auth",
            "Pass", "Passwd", "X-Password", "Passcode", "Secret", "Api-Sig", "App-Id", "Credentials", "Set-Cookie2",
            "Passphrase", "Access-Key", "Private-Key", "App-Key", "Consumer-Key", "Client-Key", "Master-Key",
            "License-Key", "Signing-Key", "Encryption-Key", "Functions-Key", "Session-Key", "Next-Token",
            "Password-Expires-In", "Sync-Token", "Continuation",
        ]
        var names = common
        let pieces = common + ["-", "_", "x", "key", "token", "type", "é", "2", "Ω"]
        while names.count < 20_000 {
            var name = random.pick(common)
            for _ in 0..<random.within(0...2) {
                let index = name.index(name.startIndex, offsetBy: random.below(name.count + 1))
                name.insert(contentsOf: random.pick(pieces), at: index)
                if random.chance(30), !name.isEmpty { name.remove(at: name.index(before: name.endIndex)) }
            }
            names.append(random.chance(20) ? name.uppercased() : name)
        }
        var secret = 0
        for name in names {
            let expected = SecretNames.isSecretUncached(headerName: name)
            let answered = SecretNames.isSecret(headerName: name)
            #expect(SecretNames.isSecretRemembered(headerName: name) == expected, "\(name.debugDescription)")
            #expect(answered == expected, "\(name.debugDescription)")
            if answered != expected { return }
            if expected { secret += 1 }
        }
        #expect(secret > 5_000 && secret < 15_000, "both answers are reached: \(secret) secret")
    }
}
