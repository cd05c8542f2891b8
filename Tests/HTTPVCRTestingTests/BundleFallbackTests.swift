import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import HTTPVCR
@testable import HTTPVCRTesting
import Testing

/// Cassettes where the sources are out of reach (a device, a sandboxed app's tests, Xcode Cloud): replayed from the
/// test bundle's copy of `Cassettes.bundle` (this target's `Bundled/Cassettes.bundle`, a resource in Package.swift),
/// never written, and a clear failure where recording would be needed. No network: the copies replay.
@Suite struct BundleFallbackTests {
    /// A test file where no sources are, as on Xcode Cloud or a device.
    static let absentFile: StaticString = "/nonexistent-HTTPVCR-sources/Tests/HTTPVCRTestingTests/BundleFallbackTests.swift"
    static let absentFolder = "/nonexistent-HTTPVCR-sources/Tests/HTTPVCRTestingTests"
    static let noSources = "\(absentFolder) does not exist (no sources here: Xcode Cloud or a copied test bundle)"

    /// This target's copy, as SwiftPM built it.
    static var copyFolder: String {
        Bundle.module.resourceURL!.appendingPathComponent("Cassettes.bundle").standardizedFileURL.path
    }

    /// Runs `body` and returns the issues it recorded (warnings too), none of which reach this test.
    func issues(of body: @Sendable () async throws -> Void) async throws -> [Issue] {
        try await issuesRecorded(by: body)
    }

    func scopeWithoutSources(_ name: String, recordMode: RecordMode) -> VCRCassetteScope {
        VCRCassetteScope(name, recordMode: recordMode, filePath: Self.absentFile, configure: DogfoodServer.configure)
    }

    // MARK: Replaying the copy

    @Test func aTestWhoseSourcesAreNotThereReplaysTheTestBundlesCopy() async throws {
        let copy = Self.copyFolder + "/BundleFallbackTests/bundled-get.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        let answer = Box<String>()
        let issues = try await issues {
            try await withVCRCassette(scopeWithoutSources("bundled-get", recordMode: .once)) {
                let cassette = try #require(VCRActiveCassette.current?.cassette)
                #expect(cassette.path == copy)
                #expect(cassette.isWriteProtected)
                let (data, response) = try await DogfoodServer.session()
                    .data(from: DogfoodServer.url("/get?bundled=swift-testing"))
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                answer.set(String(decoding: data, as: UTF8.self))
            }
        }
        #expect(answer.value?.contains("\"copy\": \"test bundle\"") == true, "the recorded answer, not a live one")
        let notice = try #require(issues.first)
        #expect(issues.count == 1, "\(issues.map(\.text))")
        #expect(notice.severity == .warning)
        #expect(notice.comments.map(\.rawValue).joined().hasPrefix(
            "Replaying the test bundle's copy of this test's cassette, \(copy): its sources are out of reach."
        ))
        #expect(notice.text.contains("cause: \(Self.noSources)"))
        #expect(notice.text.contains("The copy is never written"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    @Test func aRequestTheCopyDoesNotHoldFailsAndTheCopyIsNotWritten() async throws {
        let copy = Self.copyFolder + "/BundleFallbackTests/bundled-get.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        let refused = Flag()
        let issues = try await issues {
            // .new would record what does not match; on a copy, it cannot: refused before the scope opens.
            try await withVCRCassette(scopeWithoutSources("bundled-get", recordMode: .once)) {
                do {
                    _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?bundled=not-recorded"))
                } catch {
                    refused.set()
                }
            }
        }
        #expect(refused.value)
        #expect(issues.contains { $0.severity == .error && $0.text.contains("bundled=not-recorded") })
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    @Test func aBundleNamedIsTheOneLookedIn() async throws {
        var scope = scopeWithoutSources("bundled-get", recordMode: .never)
        scope.cassettesBundle = .module
        let named = scope
        let issues = try await issues {
            try await withVCRCassette(named) {
                #expect(VCRActiveCassette.current?.cassette.path == Self.copyFolder + "/BundleFallbackTests/bundled-get.json")
                _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?bundled=swift-testing"))
            }
        }
        #expect(issues.map(\.severity) == [.warning])

        let empty = TemporaryFolder()
        scope.cassettesBundle = Bundle(path: empty.path)
        let withoutCopies = scope
        let error = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(withoutCopies) { Issue.record("the body ran without its cassette") }
        }
        #expect(error?.message.contains("test bundle: no Cassettes.bundle in \(empty.url.standardizedFileURL.path)") == true
            || error?.message.contains("test bundle: no Cassettes.bundle in \(empty.path)") == true, "\(error?.message ?? "")")
    }

    @Test func theTraitAndTheScopeTakeTheBundle() throws {
        let test = try #require(Test.current)
        let scope = _CassetteTrait.cassette(cassettesBundle: .module).scope(for: test, testCase: Test.Case.current)
        #expect(scope.cassettesBundle === Bundle.module)
        #expect(scope.moduleName == "HTTPVCRTestingTests")
        #expect(scope.sourceFolder == URL(fileURLWithPath: #filePath).deletingLastPathComponent().path)
        #expect(VCRCassetteScope("by-hand", cassettesBundle: .module).cassettesBundle === Bundle.module)
    }

    // MARK: When recording is impossible

    @Test func recordingWhereNoSourcesAreFailsNamingTheCauseAndTheFix() async throws {
        let error = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(scopeWithoutSources("bundled-get", recordMode: .new)) {
                Issue.record("the body ran without its cassette")
            }
        }
        let message = try #require(error?.message)
        #expect(error?.underlying?.code == .sourcesOutOfReach)
        #expect(error?.underlying?.reason == "no sources here: Xcode Cloud or a copied test bundle")
        #expect(message.hasPrefix("Cannot record BundleFallbackTests/recordingWhereNoSourcesAreFailsNamingTheCauseAndTheFix "
            + "here: its sources are out of reach, and the test bundle's copy of its cassette is never written (record "
            + "mode .new records)."))
        #expect(message.contains("cassette: \(Self.absentFolder)/Cassettes.bundle/BundleFallbackTests/bundled-get.json"))
        #expect(message.contains("cause: \(Self.noSources)"))
        #expect(message.contains(
            "To fix it: record the cassette where the sources can be written, on the Mac or in a simulator"
        ))
        #expect(message.contains("commit it; and add Cassettes.bundle to the test target's resources"))
        #expect(message.contains("Copy Bundle Resources"))
    }

    @Test func aCassetteTheCopyLacksCannotBeRecordedEither() async throws {
        let error = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(scopeWithoutSources("not-in-the-bundle", recordMode: .once)) {
                Issue.record("the body ran without its cassette")
            }
        }
        let message = try #require(error?.message)
        #expect(error?.underlying?.code == .sourcesOutOfReach)
        #expect(message.hasPrefix("Cannot record BundleFallbackTests/aCassetteTheCopyLacksCannotBeRecordedEither here: "
            + "its sources are out of reach, and the test bundle has no copy of its cassette "
            + "(BundleFallbackTests/not-in-the-bundle.json) to replay."))
        #expect(message.contains("looked in: \(Self.copyFolder)"))

        let never = await #expect(throws: VCRTestingError.self) {
            try await withVCRCassette(scopeWithoutSources("not-in-the-bundle", recordMode: .never)) {}
        }
        #expect(never?.message.hasPrefix("No cassette for BundleFallbackTests/aCassetteTheCopyLacksCannotBeRecordedEither "
            + "here: its sources are out of reach, and the test bundle has no copy of it "
            + "(BundleFallbackTests/not-in-the-bundle.json).") == true, "\(never?.message ?? "")")
    }

    /// A folder nobody may read, for the sandbox's or a device's refusal. Root reads it all the same.
    func lockedFolder(in folder: TemporaryFolder) throws -> String {
        let locked = folder.url.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        #expect(chmod(locked.path, 0) == 0)
        return locked.path
    }

    @Test func aFolderThatRefusesReadingIsTheSandboxOrDeviceCase() async throws {
        let test = try #require(Test.current)
        let folder = TemporaryFolder()
        let locked = try lockedFolder(in: folder)
        defer { chmod(locked, 0o755); withExtendedLifetime(folder) {} }  // unlocked before it is removed
        let cassettes = locked + "/BundleFallbackTests"
        let trait = _CassetteTrait.cassette(
            "bundled-get", recordMode: .never, cassettesPath: cassettes, configure: DogfoodServer.configure
        )
        let opened = Box<String>()
        var thrown: (any Error)?
        var issues: [Issue] = []
        do {
            issues = try await self.issues {
                try await trait.provideScope(for: test, testCase: Test.Case.current) {
                    opened.set(VCRActiveCassette.current?.cassette.path)
                    _ = try await DogfoodServer.session().data(from: DogfoodServer.url("/get?bundled=swift-testing"))
                }
            }
        } catch {
            thrown = error
        }
        if getuid() == 0 {
            // Root reads any folder: the sources are in reach, and the cassette is looked for where it belongs.
            #expect(SourceReach.check(cassettesFolder: cassettes, sourceFolder: nil) == .reachable)
            let error = try #require(thrown as? VCRTestingError)
            #expect(error.underlying?.code == .cassetteNotFound)
            #expect(error.message.contains("No cassette at \(cassettes)/bundled-get.json"))
        } else {
            #expect(thrown == nil)
            #expect(opened.value == Self.copyFolder + "/BundleFallbackTests/bundled-get.json")
            let notice = try #require(issues.first)
            #expect(notice.text.contains("cause: reading \(cassettes) was refused: Permission denied (sandbox or device)"))
        }
    }

    @Test func recordingIntoAFolderThatRefusesReadingFailsSayingSandboxOrDevice() async throws {
        let folder = TemporaryFolder()
        let locked = try lockedFolder(in: folder)
        defer { chmod(locked, 0o755); withExtendedLifetime(folder) {} }  // unlocked before it is removed
        let cassettes = locked + "/BundleFallbackTests"
        let scope = VCRCassetteScope("bundled-get", cassettesPath: cassettes, recordMode: .new) { configuration in
            DogfoodServer.configure(&configuration)
        }
        let reach = SourceReach.check(cassettesFolder: cassettes, sourceFolder: scope.sourceFolder)
        if getuid() == 0 {
            // Root: nothing is refused, so the scope records where it belongs (its body makes no request here).
            #expect(reach == .reachable)
            let recorded = Flag()
            _ = try await issues {
                try await withVCRCassette(scope) {
                    if VCRActiveCassette.current?.cassette.isWriteProtected == false { recorded.set() }
                }
            }
            #expect(recorded.value)
        } else {
            let error = await #expect(throws: VCRTestingError.self) {
                try await withVCRCassette(scope) { Issue.record("the body ran without its cassette") }
            }
            #expect(error?.underlying?.reason == "sandbox or device")
            let cause = "cause: reading \(cassettes) was refused: Permission denied (sandbox or device)"
            #expect(error?.message.contains(cause) == true)
        }
        // Either way, what a sandbox or a device says (EPERM, EACCES) is told as such.
        for code in [EPERM, EACCES] {
            let refused = SourceReach.classify(errno: code, path: cassettes)
            #expect(refused.summary == "sandbox or device")
            let message = BundleFallback.failureMessage(
                scope, reach: refused, mode: .new, pathInCopy: "BundleFallbackTests/bundled-get.json",
                folders: [URL(fileURLWithPath: Self.copyFolder)], hasCopy: true
            )
            #expect(message.contains("cause: reading \(cassettes) was refused: "))
            #expect(message.contains("(sandbox or device)"))
            #expect(message.contains("To fix it: record the cassette where the sources can be written"))
        }
    }

    // MARK: Paths

    @Test func theCopysPathFollowsCassettesBundleOrTheFoldersName() {
        func path(_ folder: String, _ name: String) -> String {
            BundledCassettes.pathInCopy(VCRCassetteScope(
                suiteName: "SearchTests", testName: "search", cassettesPath: folder, cassetteName: name,
                sourceLocation: VCRSourceLocation()
            ))
        }
        #expect(path("/p/Cassettes.bundle/SearchTests", "search") == "SearchTests/search.json")
        #expect(path("/p/Cassettes.bundle/SearchTests", "Login/alice") == "SearchTests/Login/alice.json")
        #expect(path("/p/Tests/Fixtures/Search", "search.plist") == "Search/search.plist")
        #expect(path("", "testSearch") == "SearchTests/testSearch.json", "VCRTestCase without a package root")
        #expect(SourceReach.classify(errno: ENOENT, path: "/p") == .missing(path: "/p"))
        #expect(SourceReach.classify(errno: EMFILE, path: "/p") == .reachable, "says nothing about the sources")
    }
}
