import Foundation
import Testing

/// Where a failure is reported: a test's declaration, or the caller of ``withVCRCassette(_:isolation:_:)``.
public struct VCRSourceLocation: Sendable, Hashable, CustomStringConvertible {
    /// `Module/File.swift`.
    public var fileID: String
    public var filePath: String
    public var line: Int
    public var column: Int
    /// The same path as a `StaticString`, which `XCTFail` needs, when the location came from `#filePath`.
    var staticFilePath: StaticString?

    public init(fileID: String, filePath: String, line: Int, column: Int) {
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    /// The caller's location.
    public init(
        fileID: String = #fileID,
        filePath: StaticString = #filePath,
        line: Int = #line,
        column: Int = #column
    ) {
        self.init(fileID: fileID, filePath: "\(filePath)", line: line, column: column)
        self.staticFilePath = filePath
    }

    /// A Swift Testing source location.
    public init(_ location: SourceLocation) {
        self.init(fileID: location.fileID, filePath: location.pathOfFile, line: location.line, column: location.column)
    }

    public var description: String { "\(filePath):\(line):\(column)" }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.fileID, lhs.filePath, lhs.line, lhs.column) == (rhs.fileID, rhs.filePath, rhs.line, rhs.column)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(filePath)
        hasher.combine(line)
        hasher.combine(column)
    }
}
