import Foundation
import HTTPVCRCassettes

/// A part of a request whose value changes on every run: a presigned URL's date and signature, an OAuth nonce, a
/// cache buster, a request id, a timestamp or a client id in a JSON body.
///
/// Matching compares such a value by presence and shape, never by its text: a recorded `X-Amz-Date=20261128T101500Z`
/// matches a live `X-Amz-Date=20261129T093000Z` (both timestamps), not a live request without it, nor one whose value
/// is a UUID. Where the recorded response echoed the recorded value, the replayed response holds the live one:
///
/// ```swift
/// configuration.volatileValues += [.jsonPath("$.meta.sentAt"), .jsonPath("$.items[*].clientId")]
/// ```
///
/// ``VCRConfiguration/volatileValues`` starts as ``defaults``. Everything else in the request is matched as before.
public enum VolatileValue: Sendable, Hashable, CustomStringConvertible {
    /// A query parameter, by name (compared case-insensitively).
    case query(String)
    /// A header field, by name (compared case-insensitively).
    case header(String)
    /// A field of an `application/x-www-form-urlencoded` body, by name (compared case-insensitively).
    case form(String)
    /// Values in a JSON body, by a JSONPath: `$` and then `.name`, `['name']`, `[2]` or `[*]` (every element or
    /// member), as in `$.meta.sentAt` or `$.items[*].clientId`.
    case jsonPath(String)

    /// The well-known values that change every run: presigned URLs (AWS, Google Cloud, CloudFront), OAuth 1, jQuery's
    /// cache buster, request ids and idempotency keys, and a top-level `sent_at` or `sentAt` in a JSON body.
    public static let defaults: [VolatileValue] = [
        // AWS Signature V4 and V2 presigned URLs, and CloudFront's signed URLs.
        .query("X-Amz-Date"), .query("X-Amz-Expires"), .query("X-Amz-Signature"), .query("X-Amz-Security-Token"),
        .query("Expires"), .query("Signature"),
        // Google Cloud Storage signed URLs.
        .query("X-Goog-Date"), .query("X-Goog-Expires"), .query("X-Goog-Signature"),
        // OAuth 1, in the query or a form body.
        .query("oauth_nonce"), .query("oauth_timestamp"), .query("oauth_signature"),
        .form("oauth_nonce"), .form("oauth_timestamp"), .form("oauth_signature"),
        // Cache busters.
        .query("_"), .query("cachebuster"),
        // Request ids, idempotency keys and signing dates in header fields.
        .header("X-Request-ID"), .header("X-Correlation-ID"), .header("Idempotency-Key"), .header("X-Amz-Date"),
        .jsonPath("$.sent_at"), .jsonPath("$.sentAt"),
    ]

    /// The Swift that declares it, as the messages that propose it print it: `.query("_")`.
    public var description: String {
        switch self {
        case let .query(name): ".query(\(Self.quoted(name)))"
        case let .header(name): ".header(\(Self.quoted(name)))"
        case let .form(name): ".form(\(Self.quoted(name)))"
        case let .jsonPath(path): ".jsonPath(\(Self.quoted(path)))"
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
