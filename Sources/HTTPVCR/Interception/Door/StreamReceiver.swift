import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// Hands a replayed chapter to a caller that streams it: the response first, then each chunk as it is delivered.
final class StreamReceiver<Response: Sendable>: SceneReceiver, @unchecked Sendable {
    private typealias Outcome = Result<(Response, AsyncThrowingStream<Data, any Error>), any Error>

    private struct State {
        var outcome: Outcome?
        var waiting: CheckedContinuation<(Response, AsyncThrowingStream<Data, any Error>), any Error>?
        var chunks: AsyncThrowingStream<Data, any Error>.Continuation?
        var hasEnded = false

        mutating func end(failing error: any Error) {
            hasEnded = true
            chunks?.finish(throwing: error)
            if outcome == nil { outcome = .failure(error) }
        }
    }

    private let form: DoorForm<Response>
    private let fallbackURL: URL
    private let state = Locked(State(), level: .load)

    init(_ form: DoorForm<Response>, fallbackURL: URL) {
        self.form = form
        self.fallbackURL = fallbackURL
    }

    func receive(_ event: Scene.Event, part _: Int) {
        // The tape's own event, read as `OutcomeReceiver` reads it; a response is put in the door's form before the
        // lock is taken.
        let response: Result<Response, VCRError>?
        switch event {
        case .request, .redirect:
            // The request is the caller's own, and a hop is the client's business (it followed hops itself).
            return
        case let .response(recorded):
            response = form.replaying(recorded, fallbackURL)
        case .data, .error, .completion:
            response = nil
        }
        let resume: (CheckedContinuation<(Response, AsyncThrowingStream<Data, any Error>), any Error>, Outcome)?
        resume = state.withLock { state in
            guard !state.hasEnded else { return nil }
            switch event {
            case .request, .redirect:
                return nil
            case .response:
                switch response {
                case let .success(response)?:
                    guard state.outcome == nil else { return nil }
                    let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
                    state.chunks = continuation
                    state.outcome = .success((response, stream))
                case let .failure(error)?:
                    state.end(failing: error)
                case nil:
                    return nil
                }
            case let .data(data):
                state.chunks?.yield(data)
            case .completion:
                state.hasEnded = true
                state.chunks?.finish()
                if state.outcome == nil { state.outcome = .failure(VCRError.endedWithoutResponse) }
            case let .error(recorded):
                state.end(failing: recorded.foundationError)
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
