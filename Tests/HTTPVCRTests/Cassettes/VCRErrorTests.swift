import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HTTPVCR

extension VCRTests {
    /// Errors carry what they are about as fields, so that tools read them instead of parsing the message.
    @Suite struct VCRErrorTests {
        @Test func aMalformedCassetteNamesTheFileAndSaysWhatIsWrongApart() throws {
            let path = "/tmp/not-there-\(UUID().uuidString)/bad.json"
            let error = #expect(throws: VCRError.self) {
                _ = try CassetteFile.decode(Data(#"{"format": "HTTPVCR", "version": 1, "scenes": [{"chapter": "x"}]}"#.utf8), path: path)
            }
            #expect(error?.code == .malformedCassette)
            #expect(error?.cassettePath == path)
            #expect(error?.reason == "scenes[0].chapter: expected a number, found a string")
            #expect(error?.message == "Malformed cassette \(path): scenes[0].chapter: expected a number, found a string")
        }

        @Test func anUnknownMatcherHasACodeOfItsOwn() async throws {
            let folder = try TemporaryFolder()
            await #expect {
                try await withCassette("unknown-matcher", in: folder.path, { $0.matchers = [.named("nobody-registered-this")] }) { _ in }
            } throws: { error in
                (error as? VCRError)?.code == .unknownMatcher
                    && (error as? VCRError)?.reason == #"unknown matcher "nobody-registered-this""#
            }
        }

        @Test func anUnmatchedRequestNamesTheRequest() async throws {
            let folder = try TemporaryFolder()
            let recorded = "http://replay.test/recorded"
            try CassetteFile.write(Tape(interactions: [Interaction(
                chapter: 1,
                request: RecordedRequest(method: "GET", url: recorded),
                response: RecordedResponse(url: recorded, statusCode: 200)
            )]), to: folder.url.appendingPathComponent("one.json"), as: .json)
            let failures = try await withCassette("one", in: folder.path, { $0.recordMode = .never }) { _ in
                _ = try? await vcrSession().data(from: URL(string: "http://replay.test/other?x=1")!)
                return VCR.takeFailures()
            }
            #expect(failures.map(\.code) == [.noMatch])
            #expect(failures.first?.request == "GET http://replay.test/other?x=1")
            #expect(failures.first?.cassettePath == folder.url.appendingPathComponent("one.json").path)
        }
    }
}
