import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Load {
    /// One request of the load: where its replayed scenes, or its recording's events, come in.
    final class Part: SceneReceiver, @unchecked Sendable {
        let load: Load
        let number: Int
        /// Upload progress to tell before the first replayed scene: the body went out in one piece.
        private var sentBody: ClientEvent?

        init(load: Load, number: Int, sending live: URLRequest) {
            self.load = load
            self.number = number
            self.sentBody = Self.sentBody(of: live)
        }

        /// What the loader tells a delegate of a request body sent whole.
        static func sentBody(of request: URLRequest) -> ClientEvent? {
            guard let count = request.httpBody?.count, count > 0 else { return nil }
            return .sentBody(Int64(count), total: Int64(count), expected: Int64(count))
        }

        // SceneReceiver: replayed scenes, in runs, on the client's queue.
        var isOnClientQueue: Bool { load.isOnClientQueue }
        func onClientQueue(_ body: @escaping @Sendable () -> Void) { load.onClientQueue(body) }
        func yieldsBeforeEnding() -> Bool { load.yieldsBeforeEnding() }
        func receive(_ event: Scene.Event) { replayed(CollectionOfOne(event)) }
        func receive(_ run: SceneRun) { replayed(run) }

        private func replayed(_ events: some Sequence<Scene.Event>) {
            if let sentBody {
                self.sentBody = nil
                load.tellClient(sentBody)
            }
            load.replayed(events, in: number)
        }

        // A recording's events.
        func send(_ event: ClientEvent) { load.recorded(event, in: number) }

        /// A hop the recording session met: `answer` gets the request to follow with, or nil to stop there.
        func redirected(
            _ hop: HTTPURLResponse, proposed: URLRequest, _ answer: @escaping @Sendable (URLRequest?) -> Void
        ) {
            load.recordingRedirected(hop, proposed: proposed, in: number, answer)
        }

        func whenStopped(_ action: @escaping @Sendable () -> Void) { load.whenStopped(action) }

        /// How long the app's session lets `request` wait.
        func timeout(of request: URLRequest) -> TimeInterval { load.timeout(of: request) }
    }
}
