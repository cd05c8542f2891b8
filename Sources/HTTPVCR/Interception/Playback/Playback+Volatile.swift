import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPVCRCassettes

/// A tape with volatile values (``VolatileValues``): requests matched by their shape, echoes replayed live.
extension Playback {
    /// Who asked for a chapter: the receiver, its part, and the live request's volatile values (when the tape has any).
    struct Requester {
        let receiver: any SceneReceiver
        let part: Int
        let livePlaces: [VolatileValues.Place]?

        init(_ receiver: any SceneReceiver, _ part: Int, _ livePlaces: [VolatileValues.Place]?) {
            self.receiver = receiver
            self.part = part
            self.livePlaces = livePlaces
        }
    }

    /// `request` as matching compares it on this tape: its volatile values replaced by their shapes.
    func viewed(_ request: FilteredRequest, by volatile: VolatileValues) -> FilteredRequest {
        let recorded = RecordedRequest(request.request)
        let view = volatile.matchingView(of: recorded)
        return view == recorded ? request : FilteredRequest(view.urlRequest)
    }

    /// The receiver `chapter` is handed to: the requester's, or one that echoes the live request's volatile values
    /// where they differ from the recorded ones (made only then).
    func echoing(_ chapter: Int, to requester: Requester) -> any SceneReceiver {
        guard let volatile, let live = requester.livePlaces else { return requester.receiver }
        let body = layout.scenesOfChapter[chapter].compactMap { position -> Data? in
            if case let .data(chunk) = scenes[position].event { return chunk }
            return nil
        }
        guard let echoes = VolatileEchoes(recorded: volatile.places(in: requests[chapter]), live: live, body: body)
        else { return requester.receiver }
        return EchoingReceiver(requester.receiver, echoes: echoes)
    }
}
