import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

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
                state.result = state.response.map { .success((state.body, $0)) } ?? .failure(VCRError.endedWithoutResponse)
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

extension VCRError {
    /// A replayed chapter that ended before it had a response.
    static var endedWithoutResponse: VCRError {
        VCRError(.malformedCassette, "A recorded interaction ended without a response")
    }
}
