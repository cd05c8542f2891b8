import Foundation
@testable import HTTPVCRTesting

/// Code as users wrote it before `RecordMode.none` became `.never` and the `.cassette` factories became one: the
/// deprecated spellings, on purpose, to show they keep their meaning. Only a deprecated member may use them without a
/// warning, and reached through this protocol (``formerSpellings``) such a member warns nowhere: the build stays free
/// of deprecation warnings.
protocol FormerSpellings {
    /// `.cassette(name, recordMode: .none, cassettesPath: cassettesPath)`.
    static func cassetteWithRecordModeNone(_ name: String?, cassettesPath: String?) -> _CassetteTrait
    /// `.cassette(configure)`, the closure passed unlabeled.
    static func cassetteWithUnlabeledClosure(
        _ configure: @escaping @Sendable (inout VCRConfiguration) -> Void
    ) -> _CassetteTrait
    /// `VCRCassetteScope(name, cassettesPath: cassettesPath, recordMode: .none)`.
    static func scopeWithRecordModeNone(_ name: String, cassettesPath: String?) -> VCRCassetteScope
}

/// The deprecated spellings, called without a warning.
var formerSpellings: any FormerSpellings.Type { WrittenBeforeTheRename.self }

private enum WrittenBeforeTheRename: FormerSpellings {
    @available(*, deprecated, message: "spells the deprecated RecordMode.none on purpose")
    static func cassetteWithRecordModeNone(_ name: String?, cassettesPath: String?) -> _CassetteTrait {
        .cassette(name, recordMode: .none, cassettesPath: cassettesPath)
    }

    @available(*, deprecated, message: "calls the deprecated .cassette(_:) on purpose")
    static func cassetteWithUnlabeledClosure(
        _ configure: @escaping @Sendable (inout VCRConfiguration) -> Void
    ) -> _CassetteTrait {
        .cassette(configure)
    }

    @available(*, deprecated, message: "spells the deprecated RecordMode.none on purpose")
    static func scopeWithRecordModeNone(_ name: String, cassettesPath: String?) -> VCRCassetteScope {
        VCRCassetteScope(name, cassettesPath: cassettesPath, recordMode: .none)
    }
}
