import Foundation

/// ``VCRConfiguration/checksSecretsOnSave``: the `vcr lint` scanner run on what a cassette recorded, before the
/// file is written. Only new interactions are scanned: what was loaded from the file was checked when it was
/// recorded, or was committed as it is on purpose.
enum SaveTimeSecretCheck {
    /// Fails when a recorded interaction holds a secret in clear.
    static func check(_ tape: Tape, recordedChapters: Set<Int>, configuration: VCRConfiguration, path: String)
        throws(VCRError)
    {
        guard configuration.checksSecretsOnSave, !recordedChapters.isEmpty else { return }
        let scanner = SecretScanner(extraPlaceholders: placeholders(of: configuration))
        var findings: [Finding] = []
        for (index, interaction) in tape.interactions.enumerated() where recordedChapters.contains(interaction.chapter) {
            findings += scanner.scan(interaction, request: index + 1)
        }
        guard let first = findings.first else { return }
        throw error(findings, path: path, request: first, filtersSecrets: configuration.filtersSecrets)
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

    private static func error(
        _ findings: [Finding], path: String, request first: Finding, filtersSecrets: Bool
    ) -> VCRError {
        let shown = findings.prefix(10)
        var lines = ["Not saving \(path): what was recorded holds \(findings.count == 1 ? "a secret" : "\(findings.count) secrets") in clear."]
        for finding in shown {
            lines.append("  \(finding): \(finding.suggestion)")
        }
        if findings.count > shown.count { lines.append("  … and \(findings.count - shown.count) more") }
        if filtersSecrets {
            lines.append(
                "The file on disk is unchanged. Filter what the secure defaults did not reach (secretNames, a filter, "
                    + "or a sensitiveData placeholder) and run the test again to record; if a value is not secret (a "
                    + "public test key, a fake token), set checksSecretsOnSave = false for this cassette."
            )
        } else {
            lines.append(
                "The file on disk is unchanged. filtersSecrets is off for this cassette, so its secrets were not "
                    + "filtered: turn it on to write them as [FILTERED], or keep a value for the test with a "
                    + "sensitiveData placeholder. To save values that are not secret as they are (a public test key), "
                    + "set checksSecretsOnSave = false as well."
            )
        }
        return VCRError(
            .secretsFound,
            lines.joined(separator: "\n"),
            cassettePath: path,
            reason: "\(first.location): \(first.what)"
        )
    }
}
