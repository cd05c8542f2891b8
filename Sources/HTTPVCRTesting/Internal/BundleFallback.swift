import Foundation
import HTTPVCR

/// Where a scope's cassette is read from when the test's sources are out of reach (``SourceReach``): the copy of
/// `Cassettes.bundle` that the build put into the test bundle, read and never written.
enum BundleFallback {
    /// `scope` itself while its sources can be read, or when it neither reads nor writes a cassette (`.passthrough`).
    /// Else a scope on the test bundle's copy of its cassette, and the notice that tells the test which copy it got.
    ///
    /// - Parameters:
    ///   - recordMode: The record mode in force for the scope (asked only when the sources are out of reach).
    /// - Throws: ``VCRTestingError`` (``VCRError/Code/sourcesOutOfReach``) when the cassette would need recording (a
    ///   mode that records, or no copy to replay) or has no copy to replay.
    static func resolve(
        _ scope: VCRCassetteScope,
        recordMode: () -> RecordMode
    ) throws(VCRTestingError) -> (scope: VCRCassetteScope, notice: String?) {
        if scope.readsBundleCopy { return (scope, nil) }
        let reach = SourceReach.check(cassettesFolder: scope.cassettesPath, sourceFolder: scope.sourceFolder)
        if reach == .reachable { return (scope, nil) }
        let mode = recordMode()
        if mode == .passthrough { return (scope, nil) }
        let path = BundledCassettes.pathInCopy(scope)
        let folders = BundledCassettes.folders(BundledCassettes.Search(scope))
        let copy = BundledCassettes.copy(at: path, in: folders)
        // `.verify` only reads the copy: it never writes a cassette.
        guard mode == .once || mode == .never || mode == .verify, let copy else {
            let message = failureMessage(scope, reach: reach, mode: mode, pathInCopy: path, folders: folders,
                                         hasCopy: copy != nil)
            throw VCRTestingError(
                message,
                underlying: VCRError(
                    .sourcesOutOfReach, message, cassettePath: scope.cassettePath, reason: reach.summary
                )
            )
        }
        var copied = scope
        copied.cassettesPath = copy.path
        copied.cassetteName = path
        copied.readsBundleCopy = true
        return (copied, notice(copied, reach: reach))
    }

    /// Whether the test bundle has a copy of the scope's cassette.
    static func hasCopy(_ scope: VCRCassetteScope) -> Bool {
        BundledCassettes.copy(
            at: BundledCassettes.pathInCopy(scope),
            in: BundledCassettes.folders(BundledCassettes.Search(scope))
        ) != nil
    }

    /// Tells the test that its cassette is the test bundle's copy, and why.
    static func notice(_ copied: VCRCassetteScope, reach: SourceReach) -> String {
        """
        Replaying the test bundle's copy of this test's cassette, \(copied.cassettePath): its sources are out of reach.
          cause: \(reach.cause)
          The copy is never written: a request it does not hold fails. To change it, record on the Mac or in a \
        simulator and commit it; the next build copies it into the test bundle.
          test: \(copied.suiteName)/\(copied.testName)
        """
    }

    /// Why the cassette can be neither recorded nor replayed here, and what to do.
    static func failureMessage(
        _ scope: VCRCassetteScope,
        reach: SourceReach,
        mode: RecordMode,
        pathInCopy: String,
        folders: [URL],
        hasCopy: Bool
    ) -> String {
        let test = "\(scope.suiteName)/\(scope.testName)"
        var lines: [String]
        if mode == .never {
            lines = ["No cassette for \(test) here: its sources are out of reach, and the test bundle has no copy of "
                + "it (\(pathInCopy))."]
        } else if hasCopy {
            lines = ["Cannot record \(test) here: its sources are out of reach, and the test bundle's copy of its "
                + "cassette is never written (record mode \(mode) records)."]
        } else {
            lines = ["Cannot record \(test) here: its sources are out of reach, and the test bundle has no copy of its "
                + "cassette (\(pathInCopy)) to replay."]
        }
        lines.append("  cause: \(reach.cause)")
        if !scope.cassettesPath.isEmpty { lines.append("  cassette: \(scope.cassettePath)") }
        if !folders.isEmpty {
            lines.append("  looked in: " + folders.map(\.path).joined(separator: ", "))
        } else if let named = scope.cassettesBundle {
            lines.append("  test bundle: no Cassettes.bundle in \(named.bundleURL.path) (the cassettesBundle named)")
        } else {
            lines.append(
                "  test bundle: no Cassettes.bundle in it, nor in Bundle.main or a resource bundle beside them"
            )
        }
        let command = scope.rerecordCommand(recordMode: mode == .all ? "all" : "new").map { ": \($0)" } ?? ""
        lines.append("  To fix it: record the cassette where the sources can be written, on the Mac or in a "
            + "simulator\(command); commit it; and add Cassettes.bundle to the test target's resources "
            + "(Package.swift: resources: [.copy(\"Cassettes.bundle\")]; an Xcode test target: its Copy Bundle "
            + "Resources phase), so that runs here replay it from the test bundle.")
        lines.append("  test: \(test)")
        return lines.joined(separator: "\n")
    }
}
