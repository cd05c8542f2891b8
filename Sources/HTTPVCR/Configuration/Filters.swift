import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rewrites query parameters on the live request and on everything written to the cassette.
///
/// ```swift
/// configuration.queryParametersFilter = .replacing(["token": nil, "signature": "secret-signature"])
/// configuration.queryParametersFilter = .custom { request, parameters in parameters["token"] = nil }
/// ```
public enum QueryParametersFilter: Sendable {
    /// Replaces the value of each named parameter; `nil` removes the parameter. Repeated parameters are all
    /// replaced or removed.
    case replacing([String: String?])
    /// Edits the parameters as a dictionary. Parameters the closure leaves alone keep their order and
    /// repetitions; removed names are removed everywhere; changed values replace every occurrence.
    case custom(@Sendable (URLRequest, inout [String: String]) -> Void)
}

/// Rewrites request headers on the live request and on what is written to the cassette.
///
/// ```swift
/// configuration.headersFilter = .replacing(["X-Api-Key": nil, "X-Client": "test"])
/// ```
public enum HeadersFilter: Sendable {
    /// Replaces the value of each named header (names compared case-insensitively); `nil` removes it.
    case replacing([String: String?])
    /// Edits the headers as a dictionary.
    case custom(@Sendable (URLRequest, inout [String: String]) -> Void)
}

/// Rewrites request bodies on the live request and on what is written to the cassette.
///
/// ```swift
/// configuration.postBodyFilter = .replacing(["password": "pwd", "fullName": nil])
/// ```
public enum PostBodyFilter: Sendable {
    /// Replaces (or, with `nil`, removes) keys at any depth of a JSON body, or pairs of a
    /// `application/x-www-form-urlencoded` body. Other bodies are left untouched.
    case replacing([String: String?])
    /// Returns the body to use instead.
    case custom(@Sendable (URLRequest, Data) -> Data)
}

/// Rewrites response bodies before they are written to the cassette. The code under test still gets the real
/// body while recording; replay hands over the filtered one.
///
/// ```swift
/// configuration.responseBodyFilter = .replacing(["token": nil])
/// ```
public enum ResponseBodyFilter: Sendable {
    /// Replaces (or removes) keys at any depth of a JSON body, or pairs of a form body.
    case replacing([String: String?])
    /// Returns the body to record instead. The body is whole (every chunk joined) and already decoded when
    /// the response was gzip- or deflate-encoded.
    case custom(@Sendable (URLRequest, HTTPURLResponse, Data) -> Data)
}
