import Foundation

/// The servers a test runs through its bridges, and where they listen: what the test process sends there goes to the
/// server, in every record mode, and never reaches a cassette. A cassette that answered the test's own call to its
/// server would leave the server unexercised, and the test passing.
///
/// A server is known by its process: one a bridge launched (``VCRBridge/launch(_:arguments:environment:)``), or one
/// launched with a bridge's environment, which says its pid when it connects. Its ports are read from the system
/// when a loopback request names one not seen yet, so a server that binds a random port after starting is found.
/// Ports a test names (``VCRBridge/exercise(_:)``) count too.
enum ServersUnderTest {
    private static let state = Locked(State(), level: .leaf)

    private struct State {
        /// Processes (each with those it starts), counted by the bridges that hold them.
        var processes: [Int32: Int] = [:]
        /// Loopback ports a test named, counted.
        var namedPorts: [Int: Int] = [:]
        /// The processes' listening ports as last read.
        var listening: Set<Int> = []

        var isEmpty: Bool { processes.isEmpty && namedPorts.isEmpty }
    }

    /// Whether `url` is one a server under test answers: loopback, on a port a known process listens on.
    static func serve(_ url: URL) -> Bool {
        // On every request: one uncontended lock, and the URL read only while a server is known.
        guard isAnyKnown else { return false }
        return serve(NetworkOrigin(url))
    }

    /// ``serve(_:)-(URL)`` for an origin the network guard's proxy saw.
    static func serve(_ origin: NetworkOrigin?) -> Bool {
        guard isAnyKnown, let origin, origin.isLoopback else { return false }
        if state.withLock({ $0.namedPorts[origin.port] != nil || $0.listening.contains(origin.port) }) { return true }
        return refreshedPorts().contains(origin.port)
    }

    private static var isAnyKnown: Bool { state.withLock { !$0.isEmpty } }

    /// Reads again which ports the known processes listen on.
    private static func refreshedPorts() -> Set<Int> {
        let pids = state.withLock { Array($0.processes.keys) }
        let snapshot = ListeningPorts.Snapshot()
        // A launched process leads its group; one that said its pid may not: its descendants count either way.
        let ports = Set(pids.flatMap { snapshot.ports(heldByGroup: $0, orDescendantsOf: $0) }.map(Int.init))
        state.withLock { $0.listening = ports }
        return ports
    }

    static func add(process pid: Int32) {
        state.withLock { $0.processes[pid, default: 0] += 1 }
    }

    static func remove(process pid: Int32) {
        state.withLock { state in
            let left = (state.processes[pid] ?? 1) - 1
            state.processes[pid] = left > 0 ? left : nil
            // Read again at the next request: another server may listen there now.
            state.listening = []
        }
    }

    static func add(port: Int) {
        state.withLock { $0.namedPorts[port, default: 0] += 1 }
    }

    static func remove(port: Int) {
        state.withLock { state in
            let left = (state.namedPorts[port] ?? 1) - 1
            state.namedPorts[port] = left > 0 ? left : nil
        }
    }
}
