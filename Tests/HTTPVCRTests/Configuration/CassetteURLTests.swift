import Foundation
import Testing
@testable import HTTPVCR

/// The cassette file a configuration names. Plain absolute paths skip `URL`'s path arithmetic; the answer must be
/// the one `URL` gives.
@Suite struct CassetteURLTests {
    @Test(arguments: [
        ("/tmp/Cassettes", "Search"),
        ("/tmp/Cassettes", "Search.json"),
        ("/tmp/Cassettes", "Suite/test_one()"),
        ("/tmp/Cassettes", "Suite/test.one"),
        ("/tmp/Cassettes", "Suite/host-example.com"),
        ("/tmp/Cassettes", "Suite/tape.yml"),
        ("/tmp/Cassettes", "Suite/Tape.PLIST"),
        ("/tmp/Cassettes", "a/../b/./c"),
        ("/tmp/Cassettes/", "x"),
        ("/tmp//Cassettes", "x"),
        ("/tmp/Cassettes", "x."),
        ("/tmp/Cassettes", ".hidden"),
        ("/tmp/Cassettes", "with space/ünï.har"),
        ("/tmp/Cassettes", "/abs/path/file"),
        ("/tmp/Cassettes", "/abs/../path/file.plist"),
        ("Relative", "x"),
        ("/tmp/Cassettes", "dir/"),
    ])
    func plainPathsResolveAsURLDoes(folder: String, name: String) {
        var configuration = VCRConfiguration()
        configuration.cassettesPath = folder
        configuration.cassettePath = name
        let resolved = configuration.cassetteURL
        let byFoundation = configuration.resolvedByFoundation(name)
        #expect(resolved == byFoundation, "\(folder) + \(name)")
        #expect(resolved?.path == byFoundation.path, "\(folder) + \(name)")
        #expect(configuration.cassetteFile?.path == byFoundation.path, "\(folder) + \(name)")
    }

    @Test func theCommonCaseTakesTheShortWay() {
        #expect(VCRConfiguration.plainFilePath("/tmp/Cassettes/Suite/test") == "/tmp/Cassettes/Suite/test.json")
        #expect(VCRConfiguration.plainFilePath("/tmp/Cassettes/Suite/test.json") == "/tmp/Cassettes/Suite/test.json")
        #expect(VCRConfiguration.plainFilePath("/tmp/../Cassettes/test") == nil)
        #expect(VCRConfiguration.plainFilePath("Cassettes/test") == nil)
    }

    /// Every cassette gets a cassette's extension, so that `vcr lint` on its folder sees it: a dot in a name (a
    /// parameterized test's argument) is part of the name.
    @Test func aNameWithADotStillGetsItsExtension() {
        #expect(VCRConfiguration.plainFilePath("/tmp/Cassettes/Suite/host-example.com")
            == "/tmp/Cassettes/Suite/host-example.com.json")
        #expect(VCRConfiguration.plainFilePath("/tmp/Cassettes/Suite/v1.2") == "/tmp/Cassettes/Suite/v1.2.json")
        for kept in ["a.json", "a.plist", "a.har", "a.yml", "a.yaml", "a.JSON"] {
            #expect(VCRConfiguration.plainFilePath("/tmp/Cassettes/\(kept)") == "/tmp/Cassettes/\(kept)")
        }
    }

    @Test func aPathNoFileCanHaveIsRefusedAtInsert() throws {
        let error = #expect(throws: VCRError.self) {
            try VCR.insertCassette { configuration in
                configuration.cassettesPath = "/tmp/Cassettes"
                configuration.cassettePath = "dir/a\u{0}b"
            }
        }
        #expect(error?.code == .cassetteState)
        #expect(error?.message.contains("NUL") == true)
    }
}
