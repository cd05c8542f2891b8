import Foundation
import HTTPVCRCassettes

/// The live filters' way to ask ``SecretNames``: its answers for header names kept, since the same few names come on
/// every request and response. The vocabulary itself is pure and lives with the cassettes (`vcr lint` reads it too).
extension SecretNames {
    /// ``SecretNames/isSecret(headerName:)``, answered from memory when the name was asked before.
    static func isSecretRemembered(headerName name: String) -> Bool {
        // Most names (`Accept`, `Content-Type`) miss a letter of every secret word: answered without lock or hash.
        guard mayBeSecret(headerName: name) else { return false }
        // The same few header names come on every request and response: answer them from memory.
        if let known = headerAnswers.withLock({ $0[name] }) { return known }
        let answer = isSecretUncached(headerName: name)
        headerAnswers.withLock { answers in
            if answers.count >= 4096 { answers.removeAll(keepingCapacity: true) }
            answers[name] = answer
        }
        return answer
    }

    private static let headerAnswers = Locked<[String: Bool]>([:], level: .leaf)
}
