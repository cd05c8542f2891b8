import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// One of the door's forms: what it hands back as the response, and how that reaches a recording. The decision
/// (filter, match, replay or record) is the same for every form.
struct DoorForm<Response: Sendable>: Sendable {
    /// A recorded response as this form hands it back; the request's URL stands in for a recorded URL that is
    /// none. A `Result`, not a typed-throwing closure: a stored function type with typed throws needs runtime support
    /// macOS 13 and iOS 16 lack (swiftlang/swift#74971).
    let replaying: @Sendable (RecordedResponse, _ requestURL: URL) -> Result<Response, VCRError>
    /// Hands what the client returned to the recording.
    let recording: @Sendable (Response, Recording) -> Void
}

extension DoorForm where Response == HTTPURLResponse {
    /// ``VCR/data(for:sending:)``'s: Foundation's response, one value per name.
    static var foundation: Self {
        DoorForm(
            replaying: { recorded, requestURL in
                guard let response = recorded.httpURLResponse(fallbackURL: requestURL) else {
                    return .failure(.unusableResponseURL(recorded))
                }
                return .success(response)
            },
            recording: { response, recording in recording.received(response) }
        )
    }
}

extension DoorForm where Response == RecordedResponse {
    /// ``VCR/dataKeepingFields(for:sending:)``'s: every field as the tape holds it, in order.
    static var fields: Self {
        DoorForm(
            replaying: { recorded, requestURL in
                guard URL(string: recorded.url) == nil else { return .success(recorded) }
                var response = recorded
                response.url = requestURL.absoluteString
                return .success(response)
            },
            recording: { response, recording in recording.received(response) }
        )
    }
}

extension VCR {
    /// The door, for a response collected whole: replays, records around `sending`, refuses, or just calls it.
    static func door<Response: Sendable>(
        _ request: URLRequest,
        as form: DoorForm<Response>,
        sending: @Sendable (URLRequest) async throws -> (Data, Response)
    ) async throws -> (Data, Response) {
        // Bridge: in a process connected to a test's bridge, the test's cassette answers.
        if let bridge = BridgeConnection.current { return try await bridge.send(request, as: form) }
        guard let url = request.url, !ServersUnderTest.serve(url), let cassette = try doorCassette(for: request),
              cassette.intercepts(request, to: url).intercepts, let filtered = cassette.filtered(request)
        else { return try await DoorSending.send(request, sending) }
        let receiver = OutcomeReceiver()
        switch cassette.playback.play(FilteredRequest(filtered), to: receiver, live: request) {
        case .replaying:
            return try await receiver.outcome(as: form, fallbackURL: url)
        case .record:
            let recording = Recording(live: request, filtered: filtered, cassette: cassette, part: nil)
            do {
                let (data, response) = try await DoorSending.send(request, sending)
                form.recording(response, recording)
                if !data.isEmpty { recording.received(data) }
                recording.completed(error: nil)
                return (data, response)
            } catch {
                recording.completed(error: error)
                throw error
            }
        case let .refuse(error):
            VCR.recordFailure(error, on: cassette)
            throw error
        }
    }

    /// The door, for a response streamed: the response as soon as it is there, then its chunks.
    static func door<Response: Sendable>(
        streaming request: URLRequest,
        as form: DoorForm<Response>,
        sending: @Sendable (URLRequest) async throws -> (Response, AsyncThrowingStream<Data, any Error>)
    ) async throws -> (Response, AsyncThrowingStream<Data, any Error>) {
        if let bridge = BridgeConnection.current { return try await bridge.stream(request, as: form) }
        guard let url = request.url, !ServersUnderTest.serve(url), let cassette = try doorCassette(for: request),
              cassette.intercepts(request, to: url).intercepts, let filtered = cassette.filtered(request)
        else { return try await DoorSending.send(request, sending) }
        let receiver = StreamReceiver(form, fallbackURL: url)
        switch cassette.playback.play(FilteredRequest(filtered), to: receiver, live: request) {
        case .replaying:
            return try await receiver.response()
        case .record:
            let recording = Recording(live: request, filtered: filtered, cassette: cassette, part: nil)
            let (response, chunks): (Response, AsyncThrowingStream<Data, any Error>)
            do {
                (response, chunks) = try await DoorSending.send(request, sending)
            } catch {
                recording.completed(error: error)
                throw error
            }
            form.recording(response, recording)
            return (response, Self.relaying(chunks, to: recording))
        case let .refuse(error):
            VCR.recordFailure(error, on: cassette)
            throw error
        }
    }

    /// The client's chunks, each recorded as it passes; a stream the caller stops reading is recorded as far as it
    /// was read, ending in a cancellation.
    private static func relaying(
        _ chunks: AsyncThrowingStream<Data, any Error>,
        to recording: Recording
    ) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            let relay = Task {
                do {
                    for try await chunk in chunks {
                        recording.received(chunk)
                        continuation.yield(chunk)
                    }
                    recording.completed(error: nil)
                    continuation.finish()
                } catch {
                    recording.completed(error: error)
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { termination in
                guard case .cancelled = termination else { return }
                relay.cancel()
                recording.completed(error: URLError(.cancelled))
            }
        }
    }

    /// The cassette a request through the door goes to, as URLSession's would (``VCR/attribution()``).
    private static func doorCassette(for request: URLRequest) throws(VCRError) -> Cassette? {
        switch attribution() {
        case .none:
            guard refusesNetworkWithoutCassette(to: NetworkOrigin(request.url)) else { return nil }
            throw .networkWithoutCassette(Mismatch.describe(request), test: currentTest?())
        case let .cassette(cassette): return cassette
        case let .unattributed(why): throw .unattributed(request, why: why)
        case let .withoutCassette(test): throw .networkWithoutCassette(Mismatch.describe(request), test: test)
        }
    }
}

/// Whether the current task is doing a door's real request. A client that sends through URLSession (an OpenAPI
/// URLSession transport) would otherwise be intercepted a second time by the URL protocol, and the request taped
/// twice; `canInit` runs in the task that resumes the URLSession task, so it sees this.
enum DoorSending {
    @TaskLocal static var isSending = false

    /// Runs the door's real request, marked as such.
    static func send<Output>(_ request: URLRequest, _ sending: (URLRequest) async throws -> Output) async throws -> Output {
        // A URLSession the closure uses comes by the network guard: it is HTTPVCR's own request.
        let origin = NetworkGuard.recording(request.url)
        defer { NetworkGuard.finished(origin) }
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            return try await $isSending.withValue(true) { try await sending(request) }
        } catch {
            throw NetworkGuard.asTheServerWouldFail(error, url: request.url, since: start)
        }
    }
}
