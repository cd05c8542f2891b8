import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension VCR {
    /// The door for HTTP clients that are not URLSession (AsyncHTTPClient, an OpenAPI transport, your own): the
    /// request goes through the cassette in force as URLSession's would, with the same filters, matchers, record
    /// modes, playback order, failures and tape.
    ///
    /// ```swift
    /// let (data, response) = try await VCR.data(for: request) { request in
    ///     try await myClient.send(request)   // the real request; called only when there is something to record
    /// }
    /// ```
    ///
    /// A recorded request is replayed without calling `sending`. An unmatched request on a cassette that may record
    /// calls `sending` and records what it returns, or the error it throws (replayed as an error). On a cassette
    /// that may not record it throws ``VCRError`` (`.noMatch`) without calling `sending`. With no cassette, or one
    /// whose host filter or `beforeRecordRequest` leaves the request out, it just calls `sending`.
    ///
    /// > Note: An `HTTPURLResponse` keeps one value per header name, so repeated fields (`X-Multi: one` and
    /// > `X-Multi: two`, two `Set-Cookie`) reach it joined into one, even with no cassette. For a client that keeps
    /// > them apart, use ``dataKeepingFields(for:sending:)``.
    ///
    /// - Parameters:
    ///   - request: The request as the client would send it, body included in `httpBody`.
    ///   - sending: Does the real request and returns the body and the final response (redirects followed).
    public static func data(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (Data, HTTPURLResponse)
    ) async throws -> (Data, HTTPURLResponse) {
        try await door(request, as: .foundation, sending: sending)
    }

    /// The streaming form of ``data(for:sending:)``: the response as soon as it is there, then the body chunk by
    /// chunk. Recording passes each chunk on as it arrives and records it with its time; replaying hands over the
    /// recorded chunks. A stream the caller stops reading is recorded as far as it was read.
    ///
    /// ```swift
    /// let (response, chunks) = try await VCR.bytes(for: request) { request in try await myClient.stream(request) }
    /// for try await chunk in chunks { … }
    /// ```
    ///
    /// > Note: For a client that keeps repeated header fields apart, use ``bytesKeepingFields(for:sending:)``.
    public static func bytes(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>)
    ) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        try await door(streaming: request, as: .foundation, sending: sending)
    }
}
