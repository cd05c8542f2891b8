import Foundation
import HTTPVCRCassettes

/// A replayed chapter's receiver when the live request's volatile values differ from the recorded ones: what the
/// chapter echoed of them reaches the receiver as the live values (``VolatileEchoes``). Made only for such a chapter.
final class EchoingReceiver: SceneReceiver {
    private let receiver: any SceneReceiver
    private let echoes: VolatileEchoes

    init(_ receiver: any SceneReceiver, echoes: VolatileEchoes) {
        self.receiver = receiver
        self.echoes = echoes
    }

    var isOnClientQueue: Bool { receiver.isOnClientQueue }
    func onClientQueue(_ body: @escaping @Sendable () -> Void) { receiver.onClientQueue(body) }
    func yieldsBeforeEnding() -> Bool { receiver.yieldsBeforeEnding() }

    func receive(_ event: Scene.Event, part: Int) {
        receiver.receive(echoes.applied(to: event), part: part)
    }

    /// The run as one run still: the receiver hands a run's calls to its client together.
    func receive(_ run: SceneRun) {
        let scenes = run.map { Scene(chapter: 0, event: echoes.applied(to: $0)) }
        let deliveries = run.deliveries.enumerated().map { position, delivery in
            Delivery(receiver: receiver, part: delivery.part, scene: position, chapter: delivery.chapter,
                     isEnd: delivery.isEnd)
        }
        receiver.receive(SceneRun(scenes: scenes, deliveries: deliveries[...]))
    }
}
