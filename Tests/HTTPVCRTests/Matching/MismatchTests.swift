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
            return Mismatch.message(request: request, cassettePath: "/c.json", recordMode: .none,
                                    matchers: [.method, .path], requests: recorded, isPlayed: { _ in true },
                                    advice: advice)
        }
        return Mismatch.message(request: request, cassettePath: "/c.json", recordMode: .none,
                                matchers: [.method, .path], requests: recorded, isPlayed: { _ in true })
    }

    @Test func theLibrarySpeaksOfItsSettings() {
        let text = Self.message()
        #expect(text.hasSuffix(
            "  To record it: set VCR_RECORD_MODE=new (or recordMode = .new), or delete the cassette to record anew."))
        #expect(text.contains("(set allowsPlaybackRepeats = true to replay the last of them again)"), "\(text)")
    }

    @Test func aToolSpeaksOfItsOptions() {
        let text = Self.message(advice: MismatchAdvice(toRecord: "pass --record", toRepeat: "pass --again"))
        #expect(text.hasSuffix("  To record it: pass --record."), "\(text)")
        #expect(text.contains("(pass --again to replay the last of them again)"), "\(text)")
        #expect(!text.contains("VCR_RECORD_MODE") && !text.contains("allowsPlaybackRepeats"), "\(text)")
    }
}
