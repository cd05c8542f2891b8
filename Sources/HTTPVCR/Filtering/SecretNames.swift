import Foundation

/// The one vocabulary of secrets: which header names, query parameters and body keys hold one, and which values
/// stand for one already removed. Recording filters by it (``VCRConfiguration/filtersSecrets``), the save-time
/// check and `vcr lint` scan by it, so what is filtered and what is reported never drift apart.
package enum SecretNames {
    // Every name is compared normalized (ASCII letters and digits, lowercased) and as bytes: this runs on every
    // header and parameter of every live request, and String searching cost more than matching the request.

    /// Names that are secrets however they are spelled.
    /// What popular APIs call their keys is here too, where the name does not say "token" or "key": OpenWeatherMap's
    /// `appid`, Flickr's and Last.fm's `api_sig`, Firebase's `auth`, `credentials`.
    private static let names: Set<[UInt8]> = bytes([
        "auth", "pwd", "pass", "passwd", "password", "passcode", "secret", "token", "sig", "apisig", "signature",
        "session", "sessionid", "sid", "jwt", "apikey", "appid", "credential", "credentials", "cookie", "setcookie",
    ])
    /// Parts of names that make them secrets: `access_token`, `client_secret`, `X-Api-Key`, `newPassword`, Edamam's
    /// `app_key`, Azure's `Ocp-Apim-Subscription-Key`, Datadog's `DD-Application-Key`, OAuth's `consumer_key`.
    private static let fragments: [[UInt8]] = Array(bytes([
        "token", "secret", "password", "passwd", "passphrase", "apikey", "accesskey", "privatekey", "appkey",
        "applicationkey", "subscriptionkey", "consumerkey", "clientkey", "masterkey", "licensekey", "signingkey",
        "encryptionkey", "functionskey", "authorization", "sessionid", "sessionkey", "signature",
    ]))
    /// Names with a secret word that describe a secret rather than hold one: `token_type`, `expires_in`,
    /// `pageToken`, `password_required`.
    private static let describingSuffixes: [[UInt8]] = Array(bytes([
        "type", "expiresin", "expiresat", "expires", "expiry", "expiration", "count", "url", "uri", "endpoint",
        "hint", "length", "required", "enabled", "policy", "ttl", "lifetime", "format",
    ]))
    private static let describingFragments: [[UInt8]] = Array(bytes([
        "page", "cursor", "nexttoken", "continuation", "synctoken",
    ]))

    /// Headers whose whole value is a credential, whatever the words in their names.
    private static let credentialHeaders: Set<[UInt8]> = bytes([
        "authorization", "proxyauthorization", "cookie", "setcookie", "cookie2", "setcookie2",
    ])
    /// Challenges and policies name secrets without holding any: `WWW-Authenticate`, `Authentication-Info`.
    private static let challengeSuffix = Array("authenticate".utf8)
    private static let authenticationInfo = Array("authenticationinfo".utf8)
    private static let key = Array("key".utf8)

    /// `Set-Cookie` attributes: names that are not cookies.
    package static let cookieAttributes: Set<String> = [
        "path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority", "partitioned",
        "version", "comment",
    ]

    /// Whether a query parameter, form field or JSON key of this name holds a secret. A bare `key` counts only in
    /// URLs (`?key=AIza…`), where it is an API key; in bodies it is far too common.
    package static func isSecret(key name: String, inURL: Bool = false) -> Bool {
        isSecret(normalized: normalize(name), inURL: inURL)
    }

    /// Whether a header's whole value is a credential: `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie`, and names such as `X-Api-Key`, `X-Auth-Token`, `Private-Token`.
    package static func isSecret(headerName name: String) -> Bool {
        // Most names (`Accept`, `Content-Type`) miss a letter of every secret word: answered without lock or hash.
        guard mayBeSecret(headerName: name) else { return false }
        // The same few header names come on every request and response: answer them from memory.
        if let known = headerAnswers.withLock({ $0[name] }) { return known }
        let answer = isSecretUncached(headerName: name)
        headerAnswers.withLock { answers in
            if answers.count >= 4096 { answers.removeAll(keepingCapacity: true) }
            answers[name] = answer
        }
        return answer
    }

    private static let headerAnswers = Locked<[String: Bool]>([:], level: .leaf)

    /// ``isSecret(headerName:)`` without its quick test and its memory: what tests check both against.
    static func isSecretUncached(headerName name: String) -> Bool {
        let normalized = normalize(name)
        if credentialHeaders.contains(normalized) { return true }
        if hasSuffix(normalized, challengeSuffix) || normalized == authenticationInfo { return false }
        return isSecret(normalized: normalized, inURL: false)
    }

    /// False only when no word that makes a header name secret (``credentialHeaders``, ``names``, ``fragments``)
    /// has all its letters and digits in `name`: each of them is a secret name only by holding one of those words.
    private static func mayBeSecret(headerName name: String) -> Bool {
        // From the string's storage: iterating a `String.UTF8View` cost more than the rest of the test.
        let present = name.utf8.withContiguousStorageIfAvailable(characterSet(of:))
            ?? characterSet(of: Array(name.utf8))
        // Every secret word has a character of this set: a name with none of them holds none of the words.
        guard present & secretWordHittingSet != 0 else { return false }
        return secretWordCharacterSets.contains { $0 & present == $0 }
    }

    /// A character of each secret word, the rarest in header names it has (`Accept`, `Content-Type` have none).
    private static let secretWordHittingSet: UInt64 = {
        let rarestFirst = "jqxzwkvbuysdhimgfplroncaet0123456789".utf8.map { characterSet(of: [$0]) }
        // Every word has a letter or digit (fixed, tested: a failure is a programming error).
        precondition(!secretWordCharacterSets.contains(0))
        var hitting: UInt64 = 0
        for set in secretWordCharacterSets where set & hitting == 0 {
            hitting |= rarestFirst.first { $0 & set != 0 } ?? set
        }
        return hitting
    }()

    /// A bit per ASCII letter (either case) and digit in `bytes`: what ``normalize(_:)`` keeps, as a set.
    private static func characterSet(of bytes: some Sequence<UInt8>) -> UInt64 {
        var set: UInt64 = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): set |= 1 << UInt64(byte - UInt8(ascii: "a"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): set |= 1 << UInt64(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"): set |= 1 << UInt64(26 + byte - UInt8(ascii: "0"))
            default: continue
            }
        }
        return set
    }

    /// A word whose characters include another word's adds nothing to the test: only the smallest sets are kept.
    private static let secretWordCharacterSets: [UInt64] = {
        let sets = Set((Array(credentialHeaders.union(names)) + fragments).map(characterSet(of:)))
        return sets.filter { set in !sets.contains { $0 != set && $0 & set == $0 } }.sorted()
    }()

    private static func isSecret(normalized: [UInt8], inURL: Bool) -> Bool {
        guard !normalized.isEmpty else { return false }
        if inURL, normalized == key { return true }
        if names.contains(normalized) { return true }
        guard fragments.contains(where: { contains(normalized, $0) }) else { return false }
        if describingSuffixes.contains(where: { hasSuffix(normalized, $0) }) { return false }
        if describingFragments.contains(where: { contains(normalized, $0) }) { return false }
        return true
    }

    /// Lowercased ASCII letters and digits: `X-API-Key`, `x_api_key` and `xApiKey` are one name.
    private static func normalize(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): bytes.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(byte + 32)
            default: continue
            }
        }
        return bytes
    }

    private static func bytes(_ words: [String]) -> Set<[UInt8]> {
        Set(words.map { Array($0.utf8) })
    }

    private static func hasSuffix(_ text: [UInt8], _ suffix: [UInt8]) -> Bool {
        text.count >= suffix.count && text[(text.count - suffix.count)...].elementsEqual(suffix)
    }

    private static func contains(_ text: [UInt8], _ part: [UInt8]) -> Bool {
        guard part.count <= text.count, let first = part.first else { return part.isEmpty }
        var start = 0
        while start + part.count <= text.count {
            if text[start] == first, text[start..<(start + part.count)].elementsEqual(part) { return true }
            start += 1
        }
        return false
    }

    // MARK: Placeholders

    private static let placeholderWords: Set<String> = [
        "filtered", "redacted", "removed", "hidden", "masked", "placeholder", "omitted", "scrubbed", "sanitized",
        "censored", "obfuscated", "elided",
    ]

    /// Whether `value` is what a filter writes instead of a secret: `[FILTERED]` (percent-encoded too, as it is in
    /// a query), `<filtered>`, `REDACTED`, `[REDACTED_TOKEN]`, `***`, `xxxx`, a template such as `<API_KEY>` or
    /// `{{token}}`, or one of `extra`.
    package static func isPlaceholder(_ value: String, extra: Set<String> = []) -> Bool {
        var text = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if extra.contains(text) { return true }
        if text.contains("%") {
            text = FormCoding.decode(text).trimmingCharacters(in: .whitespaces)
            if extra.contains(text) { return true }
        }
        let lower = text.lowercased()
        if lower.contains("filtered") || lower.contains("redacted") { return true }
        let core = lower.trimmingCharacters(in: CharacterSet(charactersIn: "[]<>{}()\"'`_-:#$ "))
        if placeholderWords.contains(core) { return true }
        if text.count >= 3, text.allSatisfy({ "*xX•#.".contains($0) }) { return true }
        // Template-style stand-ins: <api-key>, {{token}}, ${SECRET}, [your-token-here].
        for (open, close) in [("<", ">"), ("{{", "}}"), ("${", "}"), ("[", "]")]
        where text.hasPrefix(open) && text.hasSuffix(close) && text.count > open.count + close.count {
            let inner = text.dropFirst(open.count).dropLast(close.count)
            if inner.allSatisfy({ $0.isLetter || $0.isNumber || "-_ .".contains($0) }) { return true }
        }
        return false
    }
}
