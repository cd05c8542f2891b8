import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// The door for requests that came over the wire (a bridge's, a stand-in's): the cassette's answer, or the
/// upstream's, taped, handed back by callback on whichever thread has it.
///
/// Never a Swift task: the thread that waits for the answer is a connection's, and the test process may hold every
/// thread of the cooperative pool (two on most CI machines) in `waitUntilExit()` or a semaphore. A replay is
/// delivered by ``Playback`` on the thread that plays or delivers; the upstream answers on its session's queue.
final class WireDoor: Sendable {
    typealias Outcome = Result<(Data, RecordedResponse), any Error>

    private let forwarder = UpstreamForwarder()
    private let state = Locked(State(), level: .leaf)

    private struct State {
        var isClosed = false
        var nextID = 0
        /// The upstream exchanges in flight, cancelled at ``close()``.
        var forwarding: [Int: URLSessionTask] = [:]
    }

    /// Why an answer did not come: the door was closed while it was awaited.
    static var closedError: URLError { URLError(.cancelled) }

    /// Answers `request` from `cassette` (or the network, with none) and calls `finish` once.
    func answer(_ request: URLRequest, cassette: Cassette?, then finish: @escaping @Sendable (Outcome) -> Void) {
        guard let cassette, let url = request.url, cassette.intercepts(request, to: url).intercepts,
              let filtered = cassette.filtered(request)
        else { return forward(request, then: finish) }
        // Handed on as recorded: where the recorded URL is none, the far end falls back on the request's.
        let receiver = OutcomeReceiver()
        switch cassette.playback.play(FilteredRequest(filtered), to: receiver, live: request) {
        case .replaying:
            receiver.whenDone(finish)
        case .record:
            let recording = Recording(live: request, filtered: filtered, cassette: cassette, part: nil)
            forward(request) { outcome in
                switch outcome {
                case let .success((data, response)):
                    recording.received(response)
                    if !data.isEmpty { recording.received(data) }
                    recording.completed(error: nil)
                case let .failure(error):
                    recording.completed(error: error)
                }
                finish(outcome)
            }
        case let .refuse(error):
            VCR.recordFailure(error, on: cassette)
            finish(.failure(error))
        }
    }

    /// ``answer(_:cassette:then:)`` waited for on the calling thread, which must not be a pool thread.
    func answerWaiting(_ request: URLRequest, cassette: Cassette?) -> Outcome {
        let outcome = Locked<Outcome?>(nil, level: .leaf)
        let done = DispatchSemaphore(value: 0)
        answer(request, cassette: cassette) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0 } ?? .failure(Self.closedError)
    }

    /// Cancels what is being sent upstream (its callers get the cancellation) and refuses what comes later.
    func close() {
        let forwarding = state.withLock { state in
            state.isClosed = true
            defer { state.forwarding.removeAll() }
            return state.forwarding.values
        }
        for exchange in forwarding { exchange.cancel() }
    }

    private func forward(_ request: URLRequest, then finish: @escaping @Sendable (Outcome) -> Void) {
        let id = state.withLock { state -> Int? in
            guard !state.isClosed else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return finish(.failure(Self.closedError)) }
        let exchange = forwarder.send(request) { [state] outcome in
            state.withLock { _ = $0.forwarding.removeValue(forKey: id) }
            finish(outcome)
        }
        // Kept until close even if it has already ended: cancelling an ended exchange does nothing.
        let closed = state.withLock { state in
            if !state.isClosed { state.forwarding[id] = exchange }
            return state.isClosed
        }
        if closed { exchange.cancel() }
    }
}
