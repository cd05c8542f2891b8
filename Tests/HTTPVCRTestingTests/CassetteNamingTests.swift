import Foundation
@testable import HTTPVCRTesting
import Testing
import HTTPBinTestSupport

@Suite struct CassetteNamingTests {
    @Test(arguments: [
        ("testSearch", "testSearch"),
        ("test_search_v2", "test_search_v2"),       // kept as written
        ("__private", "__private"),
        ("search: a/b \"c\"", "search_a_b_c"),
        ("bob smith", "bob_smith"),
        ("a  \t b", "a_b"),
        ("a/b", "a_b"),
        ("...", "_"),
        ("", "_"),
        ("café-Überprüfung", "café-Überprüfung"),
        ("日本語のテスト", "日本語のテスト"),
        ("emoji 🎉 test", "emoji_test"),
        ("file.json", "file.json"),
        ("C:\\path\\x", "C_path_x"),
    ])
    func sanitize(name: String, expected: String) {
        #expect(CassetteNaming.sanitize(name) == expected)
    }

    @Test func anXcodeSchemeCanNameThePackageRoot() {
        final class SomeTests {}
        let named = PackageRoots.findRoot(
            for: SomeTests.self, testFilePath: nil, environment: ["VCR_PACKAGE_ROOT": "/Users/ada/App"]
        )
        #expect(named?.path == "/Users/ada/App")
        let prefixed = PackageRoots.findRoot(
            for: SomeTests.self, testFilePath: nil, environment: ["TEST_RUNNER_VCR_PACKAGE_ROOT": "/Users/ada/App/"]
        )
        #expect(prefixed?.path == "/Users/ada/App")
        // The test file, when a subclass names it, still wins.
        let fromFile = PackageRoots.findRoot(
            for: SomeTests.self, testFilePath: #filePath, environment: ["VCR_PACKAGE_ROOT": "/Users/ada/App"]
        )
        #expect(fromFile == packageRoot.standardizedFileURL)
    }

    @Test func longNamesAreCutAndStayDistinct() {
        let a = CassetteNaming.sanitize(String(repeating: "a", count: 300) + "1")
        let b = CassetteNaming.sanitize(String(repeating: "a", count: 300) + "2")
        #expect(a.utf8.count <= CassetteNaming.maximumNameLength)
        #expect(a != b)
        #expect(a == CassetteNaming.sanitize(String(repeating: "a", count: 300) + "1"), "stable")
    }

    @Test func sanitizePathKeepsSubfoldersButNotParentReferences() {
        #expect(CassetteNaming.sanitizePath("Login/alice") == "Login/alice")
        #expect(CassetteNaming.sanitizePath("../../x y/./z.plist") == "x_y/z.plist")
        #expect(CassetteNaming.sanitizePath("/") == "_")
    }

    @Test func functionNamesLoseTheirParameterList() {
        #expect(CassetteNaming.functionBaseName("search()") == "search")
        #expect(CassetteNaming.functionBaseName("login(user:)") == "login")
        #expect(CassetteNaming.functionBaseName("test_underscored_name()") == "test_underscored_name")
        #expect(CassetteNaming.functionBaseName("`with spaces`()") == "with spaces")
    }

    @Test(arguments: [
        ("SearchTests.testSearchStubbed", "testSearchStubbed"),        // Linux
        ("-[SearchTests testSearchStubbed]", "testSearchStubbed"),     // Apple platforms
        ("-[MyModule.SearchTests test_snake_case]", "test_snake_case"),
        ("-[SearchTests testThrowingAndReturnError:]", "testThrowing"),
        ("-[SearchTests testAsyncWithCompletionHandler:]", "testAsync"),
        ("Outer.Inner.testX", "testX"),
    ])
    func xcTestMethodNames(name: String, method: String) {
        #expect(CassetteNaming.xcTestMethodName(fromTestName: name) == method)
    }

    @Test func rerecordCommands() {
        #expect(CassetteNaming.rerecordCommand(filter: "SearchTests/search")
            == "VCR_RECORD_MODE=new swift test --filter SearchTests/search")
        #expect(CassetteNaming.filterPattern(["Outer", "Inner", "test"]) == "Outer/Inner/test")
        #expect(CassetteNaming.rerecordCommand(filter: CassetteNaming.filterPattern(["S", "with spaces"]))
            == "VCR_RECORD_MODE=new swift test --filter 'S/with spaces'")
        #expect(CassetteNaming.filterPattern(["S", "a.b(c)"]) == "S/a\\.b\\(c\\)")
        #expect(CassetteNaming.shellQuoted("it's") == "'it'\\''s'")
    }

    @Test func argumentSuffixes() {
        #expect(CassetteNaming.argumentSuffix(["\"alice\""]) == "alice")
        #expect(CassetteNaming.argumentSuffix(["\"bob smith\"", "42"]) == "bob_smith-42")
        #expect(CassetteNaming.argumentSuffix(["(1, 2)"]) == "1_2")
        #expect(CassetteNaming.argumentSuffix(["Optional(\"x\")"]) == "Optional_x")
    }

    @Test func packageRoots() throws {
        #expect(CassetteNaming.packageRoot(ofSourceFile: #filePath).path == packageRoot.path)
        let folder = TemporaryFolder()
        let nested = folder.url.appendingPathComponent("Pkg/Tests/Target")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: folder.url.appendingPathComponent("Pkg/Package.swift").path, contents: Data())
        let file = nested.appendingPathComponent("SearchTests.swift").path
        let pkg = folder.url.appendingPathComponent("Pkg").standardizedFileURL
        #expect(CassetteNaming.packageRoot(ofSourceFile: file).path == pkg.path)
        // No Package.swift above (an Xcode project): the file's folder.
        let loose = folder.url.appendingPathComponent("Loose/Tests.swift").path
        let looseFolder = folder.url.appendingPathComponent("Loose").standardizedFileURL
        #expect(CassetteNaming.packageRoot(ofSourceFile: loose).path == looseFolder.path)
        #expect(CassetteNaming.defaultCassettesPath(packageRoot: URL(fileURLWithPath: "/p"), suiteName: "A B")
            == "/p/Cassettes.bundle/A_B")
    }

    @Test func stableHashIsTheSameInEveryProcess() {
        #expect(CassetteNaming.stableHash("") == "811c9dc5")
        #expect(CassetteNaming.stableHash("a") == "e40c292c")
    }
}
