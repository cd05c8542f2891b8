import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension VCR {
    /// The door for clients that are not URLSession, keeping every header field: as ``data(for:sending:)``, but the
    /// response is a ``RecordedResponse``, whose `headers` list each field as the server sent it, in order.
    ///
    /// `X-Multi: one` and `X-Multi: two` stay two fields, and so do two `Set-Cookie`; an `HTTPURLResponse` would
    /// join them into one value, even with no cassette inserted.
    ///
    /// ```swift
    /// let (data, response) = try await VCR.dataKeepingFields(for: request) { request in
    ///     let answer = try await myClient.send(request)   // the real request
    ///     let fields = answer.headers.map { RecordedHeader($0.name, $0.value) }
    ///     return (answer.body, RecordedResponse(url: answer.url, statusCode: answer.status, headers: fields))
    /// }
    /// let cookies = response.headers.filter { $0.name.lowercased() == "set-cookie" }   // every one
    /// ```
    ///
    /// It decides as ``data(for:sending:)`` does. With no cassette, or one whose host filter or
    /// `beforeRecordRequest` leaves the request out, it returns exactly what `sending` returned. Recording puts
    /// every field on the tape, through the same filters: a secret in each `Set-Cookie` is filtered. Replaying hands
    /// back every recorded field, in order: names sorted as a cassette file stores them, the fields of one name in
    /// the order they came.
    ///
    /// > Note: A cassette recorded through URLSession holds repeated fields joined (`X-Multi: one, two`): URLSession
    /// > joined them before HTTPVCR saw them, and they replay as that one field.
    ///
    /// > Note: `beforeRecordResponse` and a custom `responseBodyFilter` take an `HTTPURLResponse`, so they see a
    /// > repeated name's values joined. When `beforeRecordResponse` returns the response it was given, every field
    /// > is recorded apart; a response it builds anew is recorded with its own fields.
    ///
    /// - Parameters:
    ///   - request: The request as the client would send it, body included in `httpBody`.
    ///   - sending: Does the real request and returns the body and the final response (redirects followed), with
    ///     its fields in the order they came.
    /// - Returns: The body and the response: what `sending` returned, or what the cassette recorded.
    public static func dataKeepingFields(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (Data, RecordedResponse)
    ) async throws -> (Data, RecordedResponse) {
        try await door(request, as: .fields, sending: sending)
    }

    /// The streaming form of ``dataKeepingFields(for:sending:)``, as ``bytes(for:sending:)`` is of
    /// ``data(for:sending:)``: the response, every header field in order, as soon as it is there, then the body
    /// chunk by chunk.
    ///
    /// ```swift
    /// let (response, chunks) = try await VCR.bytesKeepingFields(for: request) { request in
    ///     let (head, body) = try await myClient.stream(request)
    ///     let fields = head.headers.map { RecordedHeader($0.name, $0.value) }
    ///     return (RecordedResponse(url: head.url, statusCode: head.status, headers: fields), body)
    /// }
    /// for try await chunk in chunks { … }
    /// ```
    ///
    /// Recording passes each chunk on as it arrives and records it with its time; replaying hands over the recorded
    /// chunks. A stream the caller stops reading is recorded as far as it was read. With no cassette it returns
    /// exactly what `sending` returned.
    ///
    /// - Parameters:
    ///   - request: The request as the client would send it, body included in `httpBody`.
    ///   - sending: Does the real request and returns the final response, with its fields in the order they came,
    ///     and the stream of its body.
    public static func bytesKeepingFields(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (RecordedResponse, AsyncThrowingStream<Data, any Error>)
    ) async throws -> (RecordedResponse, AsyncThrowingStream<Data, any Error>) {
        try await door(streaming: request, as: .fields, sending: sending)
    }
}
