import Foundation
import HTTPVCR
import Testing
import XCTest

/// Reports one test failure in the framework running the current test.
///
/// Under Swift Testing (``Test/current`` is set) it records an issue; otherwise it fails the XCTest test case:
/// `testCase` when given (at any file path), else the running one through `XCTFail`. A failure sent to the other
/// framework would be dropped silently on Linux, which is why the choice is made here, once.
///
/// Call it from the test's own task. Inside the URL protocol there is no test context; the scopes collect those
/// failures and report them when the test's scope ends.
func reportVCRFailure(_ message: String, at location: VCRSourceLocation, in testCase: XCTestCase? = nil) {
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: location.fileID.contains("/") ? location.fileID : "HTTPVCRTesting/\(location.fileID)",
                filePath: location.filePath,
                line: max(location.line, 1),
                column: max(location.column, 1)
            )
        )
    } else if let testCase {
        #if canImport(ObjectiveC)
        let context = XCTSourceCodeContext(
            location: XCTSourceCodeLocation(filePath: location.filePath, lineNumber: location.line)
        )
        testCase.record(XCTIssue(type: .assertionFailure, compactDescription: message, sourceCodeContext: context))
        #else
        testCase.recordFailure(
            withDescription: message, inFile: location.filePath, atLine: location.line, expected: true
        )
        #endif
    } else if let file = location.staticFilePath {
        XCTFail(message, file: file, line: UInt(max(location.line, 0)))
    } else {
        XCTFail("\(location): \(message)")
    }
}

/// Tells the current test something that is not a failure: a warning under Swift Testing, a `warning:` line on
/// stderr under XCTest (which has no warnings).
func reportVCRWarning(_ message: String, at location: VCRSourceLocation) {
    #if compiler(>=6.3)
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            severity: .warning,
            sourceLocation: SourceLocation(
                fileID: location.fileID.contains("/") ? location.fileID : "HTTPVCRTesting/\(location.fileID)",
                filePath: location.filePath,
                line: max(location.line, 1),
                column: max(location.column, 1)
            )
        )
        return
    }
    #endif
    FileHandle.standardError.write(Data("\(location.filePath):\(max(location.line, 1)): warning: \(message)\n".utf8))
}

extension VCRError {
    /// Whether `error`, as a test caught or threw it, is this failure: the error itself, or the `NSError` it
    /// bridges to on its way through URLSession.
    func says(_ error: any Error) -> Bool {
        if let error = error as? VCRError { return error == self }
        let bridged = error as NSError
        return bridged.domain == Self.errorDomain && bridged.code == code.rawValue
            && bridged.localizedDescription == message
    }
}
