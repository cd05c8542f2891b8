import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

extension Load {
    /// One request of the load, as its recording sees it: where the recording's events come in. A replayed part's
    /// scenes come to the load itself, with the part's number (``SceneReceiver``).
    struct Part: Sendable {
        let load: Load
        let number: Int

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

    /// What the loader tells a delegate of a request body sent whole: before the first replayed scene.
    static func sentBody(of request: URLRequest) -> ClientEvent? {
        guard let count = request.httpBody?.count, count > 0 else { return nil }
        return .sentBody(Int64(count), total: Int64(count), expected: Int64(count))
    }
}

// Replayed scenes, in runs, on the client's queue: `isOnClientQueue`, `onClientQueue` and `yieldsBeforeEnding` are
// the client end's (Load+Client.swift).
extension Load: SceneReceiver {
    /// The playback hands scenes over in runs; a single scene is a run of one.
    func receive(_ event: Scene.Event, part: Int) {
        replayed(SceneRun(scenes: [Scene(chapter: 0, event: event)], deliveries: [
            Delivery(receiver: self, part: part, scene: 0, chapter: 0, isEnd: Delivery.isEnd(event)),
        ]))
    }

    func receive(_ run: SceneRun) { replayed(run) }
}
