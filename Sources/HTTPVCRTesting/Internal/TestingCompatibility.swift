import Testing

// Swift Testing's API as of each toolchain HTTPVCRTesting builds with (Package.swift: tools 6.1, Xcode 16.3).

extension SourceLocation {
    /// The source file's path: `filePath` since Swift 6.3 (Xcode 26.4), `_filePath` before (deprecated since).
    var pathOfFile: String {
        #if compiler(>=6.3)
        filePath
        #else
        _filePath
        #endif
    }
}

#if compiler(>=6.2)
extension Issue {
    /// Whether the issue fails its test. Swift 6.3 says so (`isFailure`: not a warning, not a known issue); 6.2
    /// keeps severities and known issues to its SPI, so every issue counts there.
    var failsTest: Bool {
        #if compiler(>=6.3)
        isFailure
        #else
        true
        #endif
    }
}
#endif
