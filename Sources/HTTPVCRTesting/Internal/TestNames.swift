import Foundation
import HTTPVCR
import Testing

/// The names Swift Testing gives a test, turned into a suite folder, a cassette name and a `--filter` pattern.
struct TestNames {
    var suiteName: String
    var testName: String
    var filter: String
    /// Said beside the re-record command of one argument of a parameterized test, which no filter can select.
    var filterNote: String?

    init(test: Test, testCase: Test.Case?) {
        let id = test.id
        let typeComponents = Array(id.nameComponents.dropLast())
        let function = CassetteNaming.functionBaseName(test.name)
        if typeComponents.isEmpty {
            // A global test function: its file names the folder.
            suiteName = URL(fileURLWithPath: test.sourceLocation.pathOfFile).deletingPathExtension().lastPathComponent
            filter = CassetteNaming.regexEscaped(id.moduleName) + "\\." + CassetteNaming.regexEscaped(function)
        } else {
            suiteName = typeComponents.joined(separator: ".")
            filter = CassetteNaming.filterPattern(typeComponents + [function])
        }
        testName = function
        if let testCase, testCase.isParameterized {
            let arguments = TestCaseArguments.descriptions(of: testCase)
            let suffix = arguments.map { CassetteNaming.argumentSuffix($0) }
                ?? CassetteNaming.stableHash(String(describing: testCase))
            testName += "-" + suffix
            filterNote = "Swift Testing runs a parameterized test's arguments together (no --filter selects one "
                + "argument), so this runs every argument of \(function): with VCR_RECORD_MODE=new the other "
                + "arguments' cassettes only record what they lack, with VCR_RECORD_MODE=all they are recorded anew "
                + "too."
        }
    }
}

/// The arguments of a parameterized test case. `Test.Case.arguments` is not public API, so they are read by
/// reflection; when that fails the scope falls back to a hash of the case's description.
enum TestCaseArguments {
    static func descriptions(of testCase: Test.Case) -> [String]? {
        guard let values = find(in: testCase, depth: 0) else { return nil }
        return values.map { String(describingForTest: $0) }
    }

    private static func find(in value: Any, depth: Int) -> [Any]? {
        guard depth < 6 else { return nil }
        for child in Mirror(reflecting: value).children {
            if child.label == "arguments", let arguments = child.value as? [Any] {
                return arguments.map { argument in
                    Mirror(reflecting: argument).children.first { $0.label == "value" }?.value ?? argument
                }
            }
            if let found = find(in: child.value, depth: depth + 1) { return found }
        }
        return nil
    }
}
