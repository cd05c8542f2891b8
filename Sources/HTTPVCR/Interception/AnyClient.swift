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
    /// - Parameters:
    ///   - request: The request as the client would send it, body included in `httpBody`.
    ///   - sending: Does the real request and returns the body and the final response (redirects followed).
    public static func data(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (Data, HTTPURLResponse)
    ) async throws -> (Data, HTTPURLResponse) {
        guard let url = request.url, let cassette = try doorCassette(for: request), cassette.intercepts(request, to: url).intercepts,
              let filtered = cassette.filtered(request)
        else { return try await DoorSending.send(request, sending) }
        let receiver = OutcomeReceiver(fallbackURL: url)
        switch cassette.playback.play(filtered, mayHandOverWhole: true, to: { _ in receiver }) {
        case let .replayNow(chapter):
            defer { cassette.playback.endDirect() }
            for position in chapter.positions { receiver.receive(chapter.scenes[position].event) }
            receiver.receive(.completion)  // a chapter cut off before its end still ends
            return try await receiver.outcome()
        case .replaying:
            return try await receiver.outcome()
        case .record:
            return try await record(request, filtered: filtered, on: cassette, sending: sending)
        case let .refuse(error):
            VCR.recordFailure(error, on: cassette)
            throw error
        }
    }

    /// The streaming form of ``data(for:sending:)``: the response as soon as it is there, then the body chunk by
    /// chunk. Recording passes each chunk on as it arrives and records it with its time; replaying hands over the
    /// recorded chunks. A stream the caller stops reading is recorded as far as it was read.
    ///
    /// ```swift
    /// let (response, chunks) = try await VCR.bytes(for: request) { request in try await myClient.stream(request) }
    /// for try await chunk in chunks { … }
    /// ```
    public static func bytes(
        for request: URLRequest,
        sending: @Sendable (URLRequest) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>)
    ) async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        guard let url = request.url, let cassette = try doorCassette(for: request), cassette.intercepts(request, to: url).intercepts,
              let filtered = cassette.filtered(request)
        else { return try await DoorSending.send(request, sending) }
        let receiver = StreamReceiver(fallbackURL: url)
        switch cassette.playback.play(filtered, mayHandOverWhole: true, to: { _ in receiver }) {
        case let .replayNow(chapter):
            defer { cassette.playback.endDirect() }
            for position in chapter.positions { receiver.receive(chapter.scenes[position].event) }
            receiver.receive(.completion)
            return try await receiver.response()
        case .replaying:
            return try await receiver.response()
        case .record:
            let recording = Recording(live: request, filtered: filtered, cassette: cassette, part: nil)
            let (response, chunks): (HTTPURLResponse, AsyncThrowingStream<Data, any Error>)
            do {
                (response, chunks) = try await DoorSending.send(request, sending)
            } catch {
                recording.completed(error: error)
                throw error
            }
            recording.received(response)
            return (response, AsyncThrowingStream { continuation in
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
            })
        case let .refuse(error):
            VCR.recordFailure(error, on: cassette)
            throw error
        }
    }

    /// Calls `sending` and records what it returns or throws, as a chapter of its own.
    private static func record(
        _ request: URLRequest,
        filtered: URLRequest,
        on cassette: Cassette,
        sending: @Sendable (URLRequest) async throws -> (Data, HTTPURLResponse)
    ) async throws -> (Data, HTTPURLResponse) {
        let recording = Recording(live: request, filtered: filtered, cassette: cassette, part: nil)
        do {
            let (data, response) = try await DoorSending.send(request, sending)
            recording.received(response)
            if !data.isEmpty { recording.received(data) }
            recording.completed(error: nil)
            return (data, response)
        } catch {
            recording.completed(error: error)
            throw error
        }
    }
}

/// Collects a replayed chapter for a caller that awaits its outcome: the response and whole body, or the error.
private final class OutcomeReceiver: SceneReceiver, @unchecked Sendable {
    private struct State {
        var response: HTTPURLResponse?
        var body = Data()
        var result: Result<(Data, HTTPURLResponse), any Error>?
        var waiting: CheckedContinuation<(Data, HTTPURLResponse), any Error>?
    }

    private let fallbackURL: URL
    private let state = Locked(State())

    init(fallbackURL: URL) {
        self.fallbackURL = fallbackURL
    }

    func receive(_ event: Scene.Event) {
        guard let event = ClientEvent(event, fallbackURL: fallbackURL) else { return }
        let finished: (CheckedContinuation<(Data, HTTPURLResponse), any Error>, Result<(Data, HTTPURLResponse), any Error>)?
        finished = state.withLock { state in
            guard state.result == nil else { return nil }
            switch event {
            case let .response(response, _): state.response = response
            case let .data(data): state.body.append(data)
            case .redirect, .sentBody: break  // the client followed hops itself: only the final response counts
            case .finish:
                state.result = state.response.map { .success((state.body, $0)) }
                    ?? .failure(VCRError(.malformedCassette, "A recorded interaction ended without a response"))
            case let .fail(error):
                state.result = .failure(error)
            }
            guard let result = state.result, let waiting = state.waiting else { return nil }
            state.waiting = nil
            return (waiting, result)
        }
        if let (waiting, result) = finished { waiting.resume(with: result) }
    }

    /// The outcome, once the chapter has ended.
    func outcome() async throws -> (Data, HTTPURLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            let result: Result<(Data, HTTPURLResponse), any Error>? = state.withLock { state in
                if state.result == nil { state.waiting = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}

/// Hands a replayed chapter to a caller that streams it: the response first, then each chunk as it is delivered.
private final class StreamReceiver: SceneReceiver, @unchecked Sendable {
    private typealias Outcome = Result<(HTTPURLResponse, AsyncThrowingStream<Data, any Error>), any Error>

    private struct State {
        var outcome: Outcome?
        var waiting: CheckedContinuation<(HTTPURLResponse, AsyncThrowingStream<Data, any Error>), any Error>?
        var chunks: AsyncThrowingStream<Data, any Error>.Continuation?
        var hasEnded = false
    }

    private let fallbackURL: URL
    private let state = Locked(State())

    init(fallbackURL: URL) {
        self.fallbackURL = fallbackURL
    }

    func receive(_ event: Scene.Event) {
        guard let event = ClientEvent(event, fallbackURL: fallbackURL) else { return }
        let resume: (CheckedContinuation<(HTTPURLResponse, AsyncThrowingStream<Data, any Error>), any Error>, Outcome)?
        resume = state.withLock { state in
            guard !state.hasEnded else { return nil }
            switch event {
            case let .response(response, _):
                guard state.outcome == nil else { return nil }
                let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
                state.chunks = continuation
                state.outcome = .success((response, stream))
            case let .data(data):
                state.chunks?.yield(data)
            case .redirect, .sentBody:
                return nil
            case .finish:
                state.hasEnded = true
                state.chunks?.finish()
                if state.outcome == nil {
                    state.outcome = .failure(VCRError(.malformedCassette, "A recorded interaction ended without a response"))
                }
            case let .fail(error):
                state.hasEnded = true
                state.chunks?.finish(throwing: error)
                if state.outcome == nil { state.outcome = .failure(error) }
            }
            guard let outcome = state.outcome, let waiting = state.waiting else { return nil }
            state.waiting = nil
            return (waiting, outcome)
        }
        if let (waiting, outcome) = resume { waiting.resume(with: outcome) }
    }

    /// The response and the stream of its chunks, once the response is there.
    func response() async throws -> (HTTPURLResponse, AsyncThrowingStream<Data, any Error>) {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Outcome? = state.withLock { state in
                if state.outcome == nil { state.waiting = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}

extension VCR {
    /// The cassette a request through the door goes to, as URLSession's would (``VCR/attribution()``).
    fileprivate static func doorCassette(for request: URLRequest) throws(VCRError) -> Cassette? {
        switch attribution() {
        case .none: return nil
        case let .cassette(cassette): return cassette
        case let .unattributed(why): throw .unattributed(request, why: why)
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
        try await $isSending.withValue(true) { try await sending(request) }
    }
}
