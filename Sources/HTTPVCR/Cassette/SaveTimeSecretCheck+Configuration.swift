import Foundation
import HTTPVCRCassettes

extension SaveTimeSecretCheck {
    /// Fails when a recorded interaction holds a secret in clear (``VCRConfiguration/checksSecretsOnSave``).
    static func check(_ tape: Tape, recordedChapters: Set<Int>, configuration: VCRConfiguration, path: String)
        throws(VCRError)
    {
        guard configuration.checksSecretsOnSave, !recordedChapters.isEmpty else { return }
        try check(
            tape, recordedChapters: recordedChapters, extraPlaceholders: placeholders(of: configuration),
            filtersSecrets: configuration.filtersSecrets, path: path
        )
    }

    /// What the configuration itself writes instead of a value: its `.replacing` filters' replacements and the
    /// names of its ``VCRConfiguration/sensitiveData``.
    static func placeholders(of configuration: VCRConfiguration) -> Set<String> {
        var placeholders = Set(configuration.sensitiveData.keys)
        func add(_ replacements: [String: String?]) {
            for case let value? in replacements.values where !value.isEmpty { placeholders.insert(value) }
        }
        if case let .replacing(replacements)? = configuration.headersFilter { add(replacements) }
        if case let .replacing(replacements)? = configuration.queryParametersFilter { add(replacements) }
        if case let .replacing(replacements)? = configuration.postBodyFilter { add(replacements) }
        if case let .replacing(replacements)? = configuration.responseBodyFilter { add(replacements) }
        return placeholders
    }
}
