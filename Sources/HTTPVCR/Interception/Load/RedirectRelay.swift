import Foundation

/// The rest of a chapter whose hop was reported to the client (Apple's loader): held until the protocol the loader
/// starts for the next request takes the chapter over (``Load/handOff(to:)``), then passed to that one's
/// client end, in order.
final class RedirectRelay: @unchecked Sendable {
    private struct State {
        var successor: Load?
        var pending: [ClientEvent] = []
        /// Someone is passing events on: what comes meanwhile is passed on by them, after what they hold.
        var isPassing = false
    }

    private let state = Locked(State(), level: .leaf)

    func pass(_ event: ClientEvent) {
        state.withLock { $0.pending.append(event) }
        passPending()
    }

    /// `successor` serves the request the hop led to: it gets what was held back, then everything that follows.
    func hand(to successor: Load) {
        state.withLock { $0.successor = successor }
        passPending()
    }

    /// Passes the held events on in the order they came, one caller at a time, outside the lock: the successor's
    /// client calls take its load's lock and reach the loader (and the next hop's relay).
    private func passPending() {
        var turn = state.withLock { state -> (Load, [ClientEvent])? in
            guard let successor = state.successor, !state.isPassing, !state.pending.isEmpty else { return nil }
            state.isPassing = true
            defer { state.pending = [] }
            return (successor, state.pending)
        }
        while let (successor, events) = turn {
            for event in events { successor.tellClient(event) }
            turn = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.isPassing = false
                    return nil
                }
                defer { state.pending = [] }
                return (successor, state.pending)
            }
        }
    }
}
