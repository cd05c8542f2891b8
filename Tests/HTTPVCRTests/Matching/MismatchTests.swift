import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPVCR
import Testing

/// The no-match message's advice: the library's words by default, a tool's own where it inserted the cassette (the
/// configuration carrying it to the message is tested through `vcr serve`, ServeTests).
@Suite struct MismatchTests {
    static let played = RecordedRequest(method: "GET", url: "https://api.example.com/items")

    static func message(advice: MismatchAdvice? = nil) -> String {
        let request = RequestParts(URLRequest(url: URL(string: "https://api.example.com/items")!))
        let recorded = [RequestParts(played)]
        if let advice {
            return Mismatch.explain(request: request, cassettePath: "/c.json", recordMode: .none,
                                    matchers: [.method, .path], requests: recorded, isPlayed: { _ in true },
                                    advice: advice).message
        }
        return Mismatch.explain(request: request, cassettePath: "/c.json", recordMode: .none,
                                matchers: [.method, .path], requests: recorded, isPlayed: { _ in true }).message
    }

    @Test func theLibrarySpeaksOfItsSettings() {
        let text = Self.message()
        #expect(text.hasSuffix(
            "  To record it: set VCR_RECORD_MODE=new (or recordMode = .new), or delete the cassette to record anew."))
        #expect(text.contains("(set allowsPlaybackRepeats = true to replay the last of them again)"), "\(text)")
    }

    @Test func aToolSpeaksOfItsOptions() {
        let advice = MismatchAdvice(toRecord: "pass --record", toRecordAnew: "pass --anew", toRepeat: "pass --again")
        let text = Self.message(advice: advice)
        #expect(text.hasSuffix("  To record it: pass --record."), "\(text)")
        #expect(text.contains("(pass --again to replay the last of them again)"), "\(text)")
        #expect(!text.contains("VCR_RECORD_MODE") && !text.contains("allowsPlaybackRepeats"), "\(text)")
    }

    static func kind(of live: String, recorded: [String], matchers: [Matcher] = VCRConfiguration().matchers)
        -> (kind: MismatchKind, message: String)
    {
        let explained = Mismatch.explain(
            request: RequestParts(URLRequest(url: URL(string: live)!)), cassettePath: "/c.json", recordMode: .once,
            matchers: matchers, requests: recorded.map { RequestParts(RecordedRequest(method: "GET", url: $0)) },
            isPlayed: { _ in false }
        )
        return (explained.kind, explained.message)
    }

    /// The same method and path asked differently is the test's request as it changed: recorded anew, since `new`
    /// would keep the stale recording. Another endpoint is new: `new` records it beside the others.
    @Test func aChangedRequestIsRecordedAnewAndANewOneWithNew() {
        let changed = Self.kind(
            of: "https://api.example.com/items?page=2", recorded: ["https://api.example.com/items?page=1"]
        )
        #expect(changed.kind == .changedRequest)
        #expect(changed.message.hasSuffix("  To record it: \(MismatchAdvice.library.toRecordAnew)."),
                "\(changed.message)")
        #expect(changed.message.contains("VCR_RECORD_MODE=all"))
        let other = Self.kind(of: "https://api.example.com/users", recorded: ["https://api.example.com/items?page=1"])
        #expect(other.kind == .newRequest)
        #expect(other.message.hasSuffix("  To record it: \(MismatchAdvice.library.toRecord)."), "\(other.message)")
    }

    /// Only the port differs, whatever the matchers read of it (`.port`, or the whole URL with `.uri`): the message
    /// says so and names the matchers without the port, and nothing about recording.
    @Test(arguments: [
        ([Matcher.method, .scheme, .host, .port, .path, .query], "matchers = [.method, .scheme, .host, .path, .query]"),
        ([Matcher.method, .uri], "matchers = [.method, .scheme, .host, .path, .query]"),
    ])
    func aRequestOnAnotherPortSaysSo(matchers: [Matcher], advice: String) {
        let explained = Self.kind(
            of: "http://127.0.0.1:60112/x?a=1",
            recorded: ["http://127.0.0.1:53211/y", "http://127.0.0.1:53211/x?a=1"],
            matchers: matchers
        )
        #expect(explained.kind == .portOnly(recorded: "53211", live: "60112"))
        #expect(explained.message.contains("  closest recorded request: #2 GET http://127.0.0.1:53211/x?a=1"))
        #expect(explained.message.contains("It differs only in its port (53211 recorded, 60112 now)"))
        #expect(explained.message.contains(advice), "\(explained.message)")
        #expect(!explained.message.contains("To record it"), "\(explained.message)")
    }
}
