import Foundation

/// ``VCRConfiguration/checksSecretsOnSave``: the `vcr lint` scanner run on what a cassette recorded, before the
/// file is written. Only new interactions are scanned: what was loaded from the file was checked when it was
/// recorded, or was committed as it is on purpose.
package enum SaveTimeSecretCheck {
    /// Fails when a recorded interaction holds a secret in clear. `extraPlaceholders`: what the recording's own
    /// settings write instead of a value; `filtersSecrets`: whether the secure defaults were on, for the advice.
    package static func check(
        _ tape: Tape, recordedChapters: Set<Int>, extraPlaceholders: Set<String>, filtersSecrets: Bool, path: String
    ) throws(VCRError) {
        guard !recordedChapters.isEmpty else { return }
        let scanner = SecretScanner(extraPlaceholders: extraPlaceholders)
        var findings: [Finding] = []
        for (index, interaction) in tape.interactions.enumerated() where recordedChapters.contains(interaction.chapter) {
            findings += scanner.scan(interaction, request: index + 1)
        }
        guard let first = findings.first else { return }
        throw error(findings, path: path, request: first, filtersSecrets: filtersSecrets)
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
