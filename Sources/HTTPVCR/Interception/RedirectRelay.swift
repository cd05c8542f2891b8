import Foundation

/// The rest of a chapter whose hop was reported to the client (Apple's loader): held until the protocol the loader
/// starts for the next request takes the chapter over (``Load/handOff(to:)``), then passed to that one's
/// client end, in order.
final class RedirectRelay: @unchecked Sendable {
    private struct State {
        var successor: Load?
        var pending: [ClientEvent] = []
    }

    /// Held while passing events on, so that they reach the successor in the order they came.
    private let state = Locked(State(), level: .leaf)

    func pass(_ event: ClientEvent) {
        state.withLock { state in
            if let successor = state.successor { successor.tellClient(event) } else { state.pending.append(event) }
        }
    }

    /// `successor` serves the request the hop led to: it gets what was held back, then everything that follows.
    func hand(to successor: Load) {
        state.withLock { state in
            state.successor = successor
            for event in state.pending { successor.tellClient(event) }
            state.pending = []
        }
    }
}
