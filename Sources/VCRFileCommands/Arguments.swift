import Foundation

/// How `vcr` ends: 0 when all is well, 1 when `lint` found something, 2 for a usage mistake or an input that
/// cannot be read.
package enum ExitStatus: Int32 {
    case success = 0
    case findings = 1
    case failure = 2
}

/// Ends the command with a message on stderr. A usage error also prints the command's usage lines, as
/// swift-argument-parser tools do.
package struct CommandError: Error {
    var message: String
    var status: ExitStatus = .failure
    /// The name of the command whose usage to show after the message, for mistakes in the command line.
    var usageOf: String?

    /// An error with this message, ending the command with `status`.
    package init(message: String, status: ExitStatus = .failure, usageOf: String? = nil) {
        self.message = message
        self.status = status
        self.usageOf = usageOf
    }

    package static func usage(_ message: String, of command: Command) -> CommandError {
        CommandError(message: message, usageOf: command.name)
    }
}

/// One option a command takes.
package struct OptionSpec {
    enum Kind {
        /// `--dry-run`
        case flag
        /// `--placeholder TEXT`, the last one given wins.
        case value(String)
        /// `--header NAME`, repeatable.
        case repeated(String)
    }

    var name: String
    var short: Character?
    var kind: Kind
    var help: String

    package static func flag(_ name: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .flag, help: help)
    }

    package static func value(
        _ name: String, _ valueName: String, short: Character? = nil, _ help: String
    ) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .value(valueName), help: help)
    }

    static func repeated(_ name: String, _ valueName: String, short: Character? = nil, _ help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .repeated(valueName), help: help)
    }

    var takesValue: Bool {
        if case .flag = kind { return false }
        return true
    }

    /// `--header NAME`, `-o, --output FILE`.
    var synopsis: String {
        var text = "--\(name)"
        switch kind {
        case .flag: break
        case let .value(valueName), let .repeated(valueName): text += " \(valueName)"
        }
        if let short { text = "-\(short), " + text }
        return text
    }
}

/// What a command line said, once checked against the command's options.
package struct ParsedArguments {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: [String]] = [:]
    var wantsHelp = false

    package func flag(_ name: String) -> Bool { flags.contains(name) }
    package func value(_ name: String) -> String? { values[name]?.last }
    func values(_ name: String) -> [String] { values[name] ?? [] }
}

/// A hand-written parser with what people expect of one: `--opt value` and `--opt=value`, repeated options,
/// `-h`/`--help` anywhere, `--` to end options (so a file may be called `--odd.json`), a lone `-` as a
/// positional, and errors that name the problem and suggest the option that was probably meant.
enum ArgumentParser {
    static func parse(_ arguments: [String], for command: Command) throws(CommandError) -> ParsedArguments {
        var parsed = ParsedArguments()
        let options = command.options
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "--help" || argument == "-h" {
                parsed.wantsHelp = true
                continue
            }

            let spec: OptionSpec
            var inlineValue: String?
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let found = options.first(where: { $0.name == name }) else {
                    throw unknownOption("--\(name)", command: command)
                }
                spec = found
            } else {
                // `-o value`, `-ovalue`; single-letter flags may not be bundled (there are too few to matter).
                let letters = argument.dropFirst()
                guard let letter = letters.first, let found = options.first(where: { $0.short == letter }) else {
                    throw unknownOption(argument, command: command)
                }
                spec = found
                if letters.count > 1 {
                    guard found.takesValue else { throw unknownOption(argument, command: command) }
                    inlineValue = String(letters.dropFirst())
                }
            }

            if !spec.takesValue {
                if inlineValue != nil {
                    throw CommandError.usage("option '--\(spec.name)' does not take a value", of: command)
                }
                parsed.flags.insert(spec.name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw CommandError.usage("missing value for '\(spec.synopsis)'", of: command)
                }
                value = arguments[index]
                index += 1
            }
            parsed.values[spec.name, default: []].append(value)
        }
        return parsed
    }

    static func unknownOption(_ option: String, command: Command) -> CommandError {
        let names = command.options.map { "--\($0.name)" } + ["--help"]
        var message = "unknown option '\(option)'"
        let bare = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
        if let suggestion = closest(to: bare, in: names) { message += " (did you mean '\(suggestion)'?)" }
        return CommandError.usage(message, of: command)
    }

    /// The candidate within a small edit distance of `word`, for "did you mean" hints.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    static func editDistance(_ left: String, _ right: String) -> Int {
        let left = Array(left)
        let right = Array(right)
        guard !left.isEmpty else { return right.count }
        guard !right.isEmpty else { return left.count }
        var previous = Array(0...right.count)
        for (i, a) in left.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: right.count)
            for (j, b) in right.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1))
            }
            previous = current
        }
        return previous[right.count]
    }
}

extension ParsedArguments {
    /// The one positional argument a command takes, or a usage error naming what is missing or extra.
    package func onlyPositional(named name: String, of command: Command) throws(CommandError) -> String {
        guard let value = positionals.first else { throw CommandError.usage("missing \(name)", of: command) }
        guard positionals.count == 1 else {
            throw CommandError.usage("unexpected argument '\(positionals[1])'", of: command)
        }
        return value
    }
}
