import Foundation
import HTTPVCR
import VCRFileCommands

/// `vcr redact`'s ``Redactor``: the filters recording runs on live requests, which are HTTPVCR's, run on the tape.
func redactWithRecordingFilters(_ tape: Tape, _ request: RedactionRequest) -> Tape {
    tape.redacted(with: request.configuration, responseHeaders: request.responseHeaders)
}

extension RedactionRequest {
    /// The configuration a recording would have used to keep these secrets off the cassette. The default
    /// secure headers and secret names are left out unless `secrets` asks for them: redact changes what it is told
    /// to change, nothing else.
    var configuration: VCRConfiguration {
        var configuration = VCRConfiguration()
        configuration.secureHeaders = []
        configuration.filtersSecrets = secrets
        let replacing = { (names: [String]) in RedactCommand.replacing(names, with: replacement) }
        if !headers.isEmpty { configuration.headersFilter = .replacing(replacing(headers)) }
        if !queries.isEmpty { configuration.queryParametersFilter = .replacing(replacing(queries)) }
        if !keys.isEmpty {
            configuration.postBodyFilter = .replacing(replacing(keys))
            configuration.responseBodyFilter = .replacing(replacing(keys))
        }
        return configuration
    }
}
