import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// What a replayed chapter tells the door's caller: its final response (in the door's form), a chunk, the end. The
/// request is the caller's own, and a hop is the client's business (it followed hops itself): nil for both.
private enum DoorEvent<Response: Sendable> {
    case response(Response)
    case data(Data)
    case finish
    case fail(any Error)

    init?(_ event: Scene.Event, as form: DoorForm<Response>, fallbackURL: URL) {
        switch event {
        case .request, .redirect:
            return nil
        case let .response(recorded):
            switch form.replaying(recorded, fallbackURL) {
            case let .success(response): self = .response(response)
            case let .failure(error): self = .fail(error)
            }
        case let .data(data):
            self = .data(data)
        case let .error(recorded):
            self = .fail(recorded.foundationError)
        case .completion:
            self = .finish
        }
    }
}

/// Collects a replayed chapter whole, for a caller that awaits its outcome in a door's form, or is called back with it
/// (a request that came over the wire, answered on a thread that must not wait for Swift's pool): the recorded
/// response and the whole body, or the error.
///
/// Not generic: a generic receiver looked up its type's metadata on every scene, which cost as much as the replay.
/// The door's form is applied once, at the end.
final class OutcomeReceiver: SceneReceiver, @unchecked Sendable {
    typealias Outcome = Result<(Data, RecordedResponse), any Error>

    private struct State {
        var response: RecordedResponse?
        var body = Data()
        var result: Outcome?
        var waiting: (@Sendable (Outcome) -> Void)?
    }

    private let state = Locked(State(), level: .load)

    func receive(_ event: Scene.Event, part _: Int) {
        let finished: (@Sendable (Outcome) -> Void, Outcome)? = state.withLock { state in
            guard state.result == nil else { return nil }
            switch event {
            case .request, .redirect:
                // The request is the caller's own, and a hop is the client's business (it followed hops itself).
                return nil
            case let .response(response): state.response = response
            case let .data(data): state.body.append(data)
            case .completion:
                state.result = state.response.map { .success((state.body, $0)) }
                    ?? .failure(VCRError(.malformedCassette, "A recorded interaction ended without a response"))
            case let .error(recorded):
                state.result = .failure(recorded.foundationError)
            }
            guard let result = state.result, let waiting = state.waiting else { return nil }
            state.waiting = nil
            return (waiting, result)
        }
        if let (waiting, result) = finished { waiting(result) }
    }

    /// Calls `body` with the outcome once the chapter has ended: at once if it has, else on the thread that ends it.
    func whenDone(_ body: @escaping @Sendable (Outcome) -> Void) {
        let result: Outcome? = state.withLock { state in
            if state.result == nil { state.waiting = body }
            return state.result
        }
        if let result { body(result) }
    }

    /// The outcome, once the chapter has ended, its response as `form` hands it back (`fallbackURL` standing in for
    /// a recorded URL that is none).
    func outcome<Response: Sendable>(as form: DoorForm<Response>, fallbackURL: URL) async throws -> (Data, Response) {
        let (body, recorded) = try await withCheckedThrowingContinuation { continuation in
            whenDone { continuation.resume(with: $0) }
        }
        return (body, try form.replaying(recorded, fallbackURL).get())
    }
}

/// Hands a replayed chapter to a caller that streams it: the response first, then each chunk as it is delivered.
final class StreamReceiver<Response: Sendable>: SceneReceiver, @unchecked Sendable {
    private typealias Outcome = Result<(Response, AsyncThrowingStream<Data, any Error>), any Error>

    private struct State {
        var outcome: Outcome?
        var waiting: CheckedContinuation<(Response, AsyncThrowingStream<Data, any Error>), any Error>?
        var chunks: AsyncThrowingStream<Data, any Error>.Continuation?
        var hasEnded = false
    }

    private let form: DoorForm<Response>
    private let fallbackURL: URL
    private let state = Locked(State(), level: .load)

    init(_ form: DoorForm<Response>, fallbackURL: URL) {
        self.form = form
        self.fallbackURL = fallbackURL
    }

    func receive(_ event: Scene.Event, part _: Int) {
        guard let event = DoorEvent(event, as: form, fallbackURL: fallbackURL) else { return }
        let resume: (CheckedContinuation<(Response, AsyncThrowingStream<Data, any Error>), any Error>, Outcome)?
        resume = state.withLock { state in
            guard !state.hasEnded else { return nil }
            switch event {
            case let .response(response):
                guard state.outcome == nil else { return nil }
                let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
                state.chunks = continuation
                state.outcome = .success((response, stream))
            case let .data(data):
                state.chunks?.yield(data)
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
    func response() async throws -> (Response, AsyncThrowingStream<Data, any Error>) {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Outcome? = state.withLock { state in
                if state.outcome == nil { state.waiting = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
